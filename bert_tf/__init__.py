"""bert_tf: BERT (Devlin et al., NAACL 2019) for TensorFlow 2 / Keras 3.

The public names below load on first use (PEP 562), so `import bert_tf` is cheap and an entry
point can configure TensorFlow's logging before TensorFlow is imported.

Example:
>>> import bert_tf
>>> encoder = bert_tf.BertEncoder.from_pretrained("/tmp/minilm")  # doctest: +SKIP
"""

import importlib

__version__ = "0.1.0"

_HOMES = {
    "BertConfig": "bert_tf.configs",
    "ConfigError": "bert_tf.configs",
    "UserError": "bert_tf.errors",
    "BertClassifier": "bert_tf.models",
    "BertEncoder": "bert_tf.models",
    "BertMultipleChoice": "bert_tf.models",
    "BertPretrainer": "bert_tf.models",
    "BertSpanLabeler": "bert_tf.models",
    "BertTokenClassifier": "bert_tf.models",
    "FrozenBertFeatures": "bert_tf.models.frozen_bert_features",
    "convert_checkpoint": "bert_tf.checkpoints",
    "convert_huggingface_checkpoint": "bert_tf.checkpoints",
    "export_huggingface_checkpoint": "bert_tf.checkpoints",
    "read_config": "bert_tf.checkpoints.model_dir",
    "restore_model_dir": "bert_tf.checkpoints.model_dir",
    "write_model_dir": "bert_tf.checkpoints.model_dir",
    "write_model_info": "bert_tf.checkpoints.model_dir",
    "read_model_info": "bert_tf.checkpoints.model_dir",
    "CheckpointError": "bert_tf.errors",
    "BertPreprocessor": "bert_tf.tokenization",
    "BertTokenizer": "bert_tf.tokenization",
    "VocabError": "bert_tf.tokenization",
    "TextClassifier": "bert_tf.keras_tasks",
    "MaskedLM": "bert_tf.keras_tasks",
    "TokenClassifier": "bert_tf.keras_tasks",
    "SentenceEncoder": "bert_tf.keras_tasks",
    "TaskInputError": "bert_tf.keras_tasks",
    "FinetuningOptions": "bert_tf.finetuning.options",
    "run_finetuning": "bert_tf.finetuning.driver",
    "fill_mask": "bert_tf.inference",
    "mask_one_word": "bert_tf.inference",
    "write_learning_curve": "bert_tf.reporting",
    "OpAuditError": "bert_tf.export",
    "audit_saved_model": "bert_tf.export",
    "export_saved_model": "bert_tf.export",
    "export_onnx": "bert_tf.export",
}

__all__ = sorted(_HOMES) + ["__version__"]


def __getattr__(name):
    if name not in _HOMES:
        raise AttributeError(f"module 'bert_tf' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
