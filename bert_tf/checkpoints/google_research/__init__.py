"""google-research/bert TF1 checkpoints as a registry format: the folder of google-research's
zips (`bert_model.ckpt.*` + `bert_config.json` + `vocab.txt`) or the checkpoint prefix.

`layout` recognises and describes one, `reader` reads it. No writer: bert_tf writes model
directories and Hugging Face folders, which every current consumer of these checkpoints reads.

Example:
>>> FORMAT.recognise("uncased_L-12_H-768_A-12/")   # doctest: +SKIP
True
"""

from bert_tf.checkpoints.format import Format
from bert_tf.checkpoints.google_research.layout import NAME, TITLE, describe, recognise
from bert_tf.checkpoints.google_research.reader import read

FORMAT = Format(
    name=NAME, title=TITLE,
    layout="bert_config.json + bert_model.ckpt.* + vocab.txt, or the checkpoint prefix",
    recognise=recognise, describe=describe, read=read,
    options=("bert_config_file", "vocab_file"))

__all__ = ["FORMAT", "read"]
