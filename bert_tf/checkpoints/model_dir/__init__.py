"""The bert_tf model directory, the one layout every bert_tf program writes and reads.

`bert_config.json`, `vocab.txt`, `model.ckpt.*` (the encoder under the key `encoder`, heads
beside it) and `model_info.json` (head, casing, sequence length). Conversion, pretraining and
fine-tuning write it (`writer`), every consumer reads it (`reader`), its small files are
`layout`'s; as a registry format (`FORMAT`), `load_pretrained` and `convert_checkpoint` treat
it like every other. A training run's output (`ckpt-N` and its `checkpoint` file beside
`bert_config.json`) reads as one too.

Example:
>>> from bert_tf.checkpoints import model_dir
>>> encoder = BertEncoder(model_dir.read_config("/tmp/minilm"))          # doctest: +SKIP
>>> model_dir.restore_model_dir("/tmp/minilm", encoder=encoder)          # doctest: +SKIP
'/tmp/minilm/model.ckpt'
>>> model_dir.read_model_info("/tmp/mrpc")["head"]                       # doctest: +SKIP
'classifier'
"""

from bert_tf.checkpoints.format import Format
from bert_tf.checkpoints.model_dir.layout import (
                                                  CHECKPOINT_PREFIX,
                                                  CONFIG_NAME,
                                                  HEADS,
                                                  MODEL_INFO_NAME,
                                                  NAME,
                                                  TITLE,
                                                  VOCAB_NAME,
                                                  describe,
                                                  model_checkpoint_path,
                                                  read_config,
                                                  read_model_info,
                                                  recognise,
                                                  resolve_lower_case,
                                                  vocab_path,
)
from bert_tf.checkpoints.model_dir.reader import check_finite, read, restore_model_dir
from bert_tf.checkpoints.model_dir.writer import write, write_model_dir, write_model_info

FORMAT = Format(
    name=NAME, title=TITLE,
    layout="bert_config.json + model.ckpt.* + vocab.txt + model_info.json",
    recognise=recognise, describe=describe, read=read, write=write, aliases=("ours",))

__all__ = [
    "CHECKPOINT_PREFIX", "CONFIG_NAME", "FORMAT", "HEADS", "MODEL_INFO_NAME", "NAME",
    "VOCAB_NAME", "check_finite", "describe", "model_checkpoint_path", "read", "read_config",
    "read_model_info", "recognise", "resolve_lower_case", "restore_model_dir", "vocab_path",
    "write", "write_model_dir", "write_model_info",
]
