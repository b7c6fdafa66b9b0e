"""A `.keras` file is not read as a checkpoint: `read` says how to load it instead."""

from bert_tf.checkpoints.keras_file.layout import TITLE
from bert_tf.errors import CheckpointError


def read(path, do_lower_case=None):
    """Refuses: a `.keras` file is loaded with `keras.saving.load_model`."""
    del do_lower_case
    raise CheckpointError(f"{path}: a {TITLE} is not read as a checkpoint; load it with "
                          "keras.saving.load_model.")
