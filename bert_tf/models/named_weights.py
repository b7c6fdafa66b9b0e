"""Models take their weights by name: numpy arrays keyed by our variables' paths.

Every checkpoint reader (`bert_tf/checkpoints/`) hands over a config and the weights under
one naming, the paths Keras gives our variables: `embeddings/word_embeddings/embeddings`,
`layer_0/attention/query/kernel`, `pooler/kernel`, the pretraining heads' `masked_lm/...` and
`next_sentence/...`, a fine-tuned task head's `head/kernel` and `head/bias`. The readers never
build a model; the models take the arrays here, as a PyTorch module takes a state dict: each
variable from the array of its path, its shape checked, every array taken.

Example:
>>> encoder = BertEncoder.from_weights(config, weights)                  # doctest: +SKIP
>>> head = build_task_head(weights)                                      # doctest: +SKIP
>>> head.units                                                           # doctest: +SKIP
2
"""

import keras
import numpy as np

# The pretraining heads' weight groups (keys of `BertPretrainer.checkpoint_items()`) and the
# task head's; every other group (`embeddings`, `layer_N`, `pooler`) is the encoder's.
HEAD_GROUPS = ("masked_lm", "next_sentence")
TASK_HEAD = "head"
# The encoder's weights a checkpoint may lack (an untrained pooler stays as initialized).
OPTIONAL = ("pooler/",)


def group(path):
    """The weight group of a path: `layer_0/attention/query/kernel` -> `layer_0`."""
    return path.split("/")[0]


def encoder_part(weights):
    """The encoder's weights of `weights` (heads left out)."""
    return {path: value for path, value in weights.items()
            if group(path) not in HEAD_GROUPS + (TASK_HEAD,)}


def set_weights(layers, weights, where="weights", optional=()):
    """Sets every weight of `layers` from the array of its path in `weights`.

    Tied weights (the masked-LM head reads the word embeddings) are set once. Nothing is set
    unless every array fits.

    Args:
      layers: built Keras layers or models.
      weights: {path: array}.
      where: what the weights came from, for messages.
      optional: path prefixes of weights that may be missing (left as initialized).

    Raises:
      ValueError: a weight without an array (not `optional`), an array no weight takes, or a
        shape unlike the weight's; the paths are named.
    """
    variables = {}
    for layer in layers:
        for variable in layer.weights:
            variables.setdefault(variable.path, variable)
    missing = sorted(path for path in set(variables) - set(weights)
                     if not path.startswith(tuple(optional)))
    if missing:
        raise ValueError(f"{where}: no array for weight(s) {missing}.")
    unknown = sorted(set(weights) - set(variables))
    if unknown:
        raise ValueError(f"{where}: no model weight takes {unknown}.")
    for path, value in weights.items():
        if tuple(np.shape(value)) != tuple(variables[path].shape):
            raise ValueError(f"{where}: `{path}` has shape {list(np.shape(value))}; the model "
                             f"needs {list(variables[path].shape)}.")
    for path, value in weights.items():
        variable = variables[path]
        variable.assign(np.asarray(value).astype(variable.dtype))


def build_task_head(weights, where="weights"):
    """The fine-tuned task head of `weights` (`head/kernel` `[H, units]`, `head/bias`) as a
    built float32 `Dense` named `head`, or None without one."""
    if f"{TASK_HEAD}/kernel" not in weights:
        return None
    kernel = np.shape(weights[f"{TASK_HEAD}/kernel"])
    head = keras.layers.Dense(kernel[1], dtype="float32", name=TASK_HEAD)
    head.build((None, kernel[0]))
    set_weights([head], {path: value for path, value in weights.items()
                         if group(path) == TASK_HEAD}, where)
    return head
