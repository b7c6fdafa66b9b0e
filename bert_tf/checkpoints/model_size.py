"""Refuses a config whose weights would not fit in the machine's memory, before building it.

Every checkpoint reader asks `weight_map.expected_shapes` for the weights it must fill, which
calls `check_fits_memory` first: a config of vocab 10^9 x hidden 4096 then ends in one line naming
the file, the sizes and the GiB needed against the GiB the machine has, instead of
TensorFlow's `ResourceExhaustedError` from an initializer (or the machine swapping) minutes in.

Example:
>>> count_parameters(BertConfig(vocab_size=30522))   # BERT-base    # doctest: +SKIP
109482240
>>> check_fits_memory(config, where="config.json")                  # doctest: +SKIP
"""

import os

from bert_tf.errors import CheckpointError

# Bytes of one float32 weight: checkpoints are read into float32 variables.
FLOAT32_BYTES = 4
GIB = 2 ** 30


def count_parameters(config, heads=(), num_labels=None):
    """Weights of a `BertEncoder` for `config`, the pretraining `heads` (checkpoint keys:
    `masked_lm`, `next_sentence`) and a task head of `num_labels` outputs, from the sizes alone
    (nothing is built).

    Embeddings V*H + P*H + T*H + LayerNorm; per layer the Q, K, V, output projections
    (4*(H*H + H)), the feed-forward pair (H*I + I + I*H + H) and two LayerNorms; the pooler
    (H*H + H); the masked-LM transform, LayerNorm and output bias (the decoder is the tied
    word-embedding table); the next-sentence classifier (2*H + 2).
    """
    vocab, hidden = config.vocab_size, config.hidden_size
    intermediate = config.intermediate_size
    layer_norm = 2 * hidden
    dense = hidden * hidden + hidden
    embeddings = (vocab + config.max_position_embeddings + config.type_vocab_size) * hidden
    layer = (4 * dense + hidden * intermediate + intermediate + intermediate * hidden + hidden
             + 2 * layer_norm)
    count = embeddings + layer_norm + config.num_hidden_layers * layer + dense
    if "masked_lm" in heads:
        count += dense + layer_norm + vocab
    if "next_sentence" in heads:
        count += 2 * hidden + 2
    if num_labels:
        count += (hidden + 1) * num_labels
    return count


def physical_memory():
    """Bytes of physical memory of this machine (Linux's sysconf), or None where unknown."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_fits_memory(config, heads=(), where="config"):
    """Refuses `config` when its float32 weights alone exceed the machine's memory.

    Args:
      config: the `BertConfig` about to be built.
      heads: the pretraining heads built with it (as `count_parameters` takes them).
      where: the file the config came from, for the message.

    Raises:
      CheckpointError: one line with the file, the sizes and the GiB needed vs available.
    """
    available = physical_memory()
    needed = count_parameters(config, heads) * FLOAT32_BYTES
    if available is None or needed <= available:
        return
    raise CheckpointError(
        f"{where}: vocab_size={config.vocab_size}, hidden_size={config.hidden_size}, "
        f"num_hidden_layers={config.num_hidden_layers}, "
        f"intermediate_size={config.intermediate_size} need {needed / GIB:,.1f} GiB of float32 "
        f"weights; this machine has {available / GIB:,.1f} GiB of memory.")
