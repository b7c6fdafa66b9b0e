"""keras-hub BERT presets (`save_to_preset` folders), read and written without keras-hub.

`layout` recognises and describes a preset, `preset` parses its JSON files, `weights_file`
reads and writes its Keras 3 weights files by a name-map table, `reader` builds bert_tf layers
from them, `writer` writes a preset keras-hub's `from_preset` loads. Presets of other
architectures (RoBERTa, DistilBERT...) are refused by name.
"""

from bert_tf.checkpoints.format import Format
from bert_tf.checkpoints.keras_hub.layout import NAME, TITLE, describe, recognise
from bert_tf.checkpoints.keras_hub.reader import read
from bert_tf.checkpoints.keras_hub.writer import write

FORMAT = Format(
    name=NAME, title=TITLE,
    layout="config.json (keras_hub>BertBackbone) + model.weights.h5 + tokenizer.json + "
           "assets/tokenizer/vocabulary.txt [+ task.json + task.weights.h5]",
    recognise=recognise, describe=describe, read=read, write=write,
    options=("vocab_file",))  # a preset saved without its tokenizer

__all__ = ["FORMAT", "read", "write"]
