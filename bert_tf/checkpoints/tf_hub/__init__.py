"""TF Hub / Kaggle BERT SavedModels as a registry format.

`bert_en_uncased_L-12_H-768_A-12`, the small BERTs and the experts (TF2 SavedModels made by
Model Garden's `export_tfhub_lib`, versions 3 and up), and their `bert_*_preprocess`
models for the vocab and casing. Read from the SavedModel's files: no tensorflow_hub, no
tf_keras, nothing executed (`saved_model.py`): `layout` recognises and describes one, `reader`
reads an encoder. `writer` names and shapes our weights as such a SavedModel holds them, for
the TF Hub export (`export/hub_modules.py`), which writes the SavedModel itself.

Example:
>>> FORMAT.recognise("bert_en_uncased_L-12_H-768_A-12_4/")   # doctest: +SKIP
True
"""

from bert_tf.checkpoints.format import Format
from bert_tf.checkpoints.tf_hub.layout import NAME, TITLE, describe, recognise
from bert_tf.checkpoints.tf_hub.reader import read
from bert_tf.checkpoints.tf_hub.writer import saved_model_variables

FORMAT = Format(
    name=NAME, title=TITLE,
    layout="saved_model.pb + variables/ + assets/vocab.txt (a TF Hub BERT encoder)",
    recognise=recognise, describe=describe, read=read, options=("preprocess_dir",))

__all__ = ["FORMAT", "read", "saved_model_variables"]
