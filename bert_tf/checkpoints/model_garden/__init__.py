"""Model Garden TF2 checkpoints: `bert_config.json` + an object-based checkpoint + `vocab.txt`.

The TensorFlow Model Garden (`official/nlp`) publishes its BERTs (the v3 ones) and writes its
conversions and pretraining exports as TF2 object-based checkpoints of its `BertEncoder`
(under `encoder`, or `model` in older ones) or `BertPretrainerV2` (`encoder`, `masked_lm`,
`next_sentence.pooler_dense`). A folder is recognised by its checkpoint's object graph holding
such an encoder and described from it (`layout`), read by walking that graph (`reader`),
never by guessing names. Read only.

Example:
>>> print(FORMAT.describe("uncased_L-12_H-768_A-12/"))  # doctest: +SKIP
uncased_L-12_H-768_A-12/: Model Garden TF2 checkpoint, `encoder` layout (bert_model.ckpt.*)
  architecture: BertEncoder (bert_tf head: encoder)
  vocab: uncased_L-12_H-768_A-12/vocab.txt (30522 tokens), casing not recorded
"""

from bert_tf.checkpoints.format import Format
from bert_tf.checkpoints.model_garden.layout import NAME, TITLE, describe, recognise
from bert_tf.checkpoints.model_garden.reader import read

FORMAT = Format(
    name=NAME, title=TITLE,
    layout="bert_config.json + a TF2 checkpoint of a Model Garden BertEncoder or "
           "BertPretrainerV2 (object `encoder` or `model`) + vocab.txt",
    recognise=recognise, describe=describe, read=read,
    options=("copy_pooler_dense_to_encoder",))

__all__ = ["FORMAT", "read"]
