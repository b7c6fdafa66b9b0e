"""bert_tf: BERT (Devlin et al., NAACL 2019) for TensorFlow 2 / Keras 3.

Example:
>>> import bert_tf
>>> encoder = bert_tf.BertEncoder.from_pretrained("/tmp/minilm")  # doctest: +SKIP
"""

__version__ = "0.1.0"

# Import order matters: models before the modules that build on them.
from bert_tf.configs import BertConfig, ConfigError
from bert_tf.models import (
    BertClassifier,
    BertEncoder,
    BertMultipleChoice,
    BertPretrainer,
    BertSpanLabeler,
    BertTokenClassifier,
)
from bert_tf.layers.frozen_features import FrozenBertFeatures
from bert_tf.checkpoints import (
    convert_checkpoint,
    convert_huggingface_checkpoint,
    export_huggingface_checkpoint,
    read_config,
    restore_model_dir,
    write_model_dir,
)
from bert_tf.tokenization import BertPreprocessor, BertTokenizer, VocabError
from bert_tf.tasks.finetuning import FinetuneConfig, run_finetuning
from bert_tf.export import OpAuditError, audit_saved_model, export_saved_model

__all__ = [
    "BertClassifier",
    "BertConfig",
    "BertEncoder",
    "BertMultipleChoice",
    "BertPreprocessor",
    "BertPretrainer",
    "BertSpanLabeler",
    "BertTokenClassifier",
    "BertTokenizer",
    "ConfigError",
    "FinetuneConfig",
    "FrozenBertFeatures",
    "OpAuditError",
    "VocabError",
    "__version__",
    "audit_saved_model",
    "convert_checkpoint",
    "convert_huggingface_checkpoint",
    "export_huggingface_checkpoint",
    "export_saved_model",
    "read_config",
    "restore_model_dir",
    "run_finetuning",
    "write_model_dir",
]
