"""keras-hub BERT presets (`save_to_preset` folders), read and written without keras-hub.

`preset` reads the JSON files, `weights_file` the Keras 3 weights files by a name-map table,
`reader` builds bert_tf layers from them, `writer` writes a preset keras-hub's `from_preset`
loads. Presets of other architectures (RoBERTa, DistilBERT...) are refused by name.
"""

from bert_tf.checkpoints.format import Format
from bert_tf.checkpoints.keras_hub import reader, writer
from bert_tf.checkpoints.keras_hub.preset import is_preset

FORMAT = Format(
    name=reader.NAME, title=reader.TITLE,
    layout="config.json (keras_hub>BertBackbone) + model.weights.h5 + tokenizer.json + "
           "assets/tokenizer/vocabulary.txt [+ task.json + task.weights.h5]",
    recognise=is_preset, describe=reader.describe, read=reader.read, write=writer.write)
