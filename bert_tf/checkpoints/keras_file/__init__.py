"""Keras `.keras` files as a registry format: described, never read as a checkpoint.

A `.keras` file is a whole saved Keras model (a zip of `config.json`, weights and assets);
`keras.saving.load_model` loads it with its own classes, so bert_tf only says what it is
(`layout.describe`) and points there from `reader.read`. No writer: `model.save("x.keras")`.

Example:
>>> FORMAT.describe("classifier.keras").architecture   # doctest: +SKIP
'TextClassifier'
"""

from bert_tf.checkpoints.format import Format
from bert_tf.checkpoints.keras_file.layout import NAME, TITLE, describe, recognise
from bert_tf.checkpoints.keras_file.reader import read

FORMAT = Format(name=NAME, title=TITLE, layout="a .keras file", recognise=recognise,
                describe=describe, read=read)

__all__ = ["FORMAT"]
