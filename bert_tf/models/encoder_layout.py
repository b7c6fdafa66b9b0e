"""The layout of one `BertEncoder` call, chosen once from its inputs and settings.

Which options combine (`*_positions`: the call's `output_positions`, `pooled_positions`;
`tests/models/test_encoder_layouts.py` runs the table row by row):

| layout       | training | inference | packed_* | position ids | *_positions      | batch of one |
|--------------|----------|-----------|----------|--------------|------------------|--------------|
| padded       | yes      | yes       | off      | -            | optional         | padded       |
| packed       | yes      | yes       | on       | -            | optional         | packed (1)   |
| rows         | yes      | yes       | (2)      | given        | optional         | rows         |
| batch_of_one | -        | yes       | on       | -            | output only (4)  | padded (3)   |

(1) Without the single-request setting, in training, or with `pooled_positions` given.
(2) `packed_training` in training is refused (ValueError); `packed_inference` is ignored.
(3) With the single-request setting (`BertEncoder.single_sequence_padded`, on while a serving
    module traces its signatures); a batch of several rows runs packed.
(4) `output_positions` only (a classifier's last block at [CLS]); `pooled_positions` given
    runs packed.

- padded: every position computed, `[B, S, H]` throughout.
- packed: embeddings, projections, feed-forward and LayerNorms on the real tokens only
  (`layers.packing.TokenPacking`); outputs equal the padded ones at real positions, zero at
  padding.
- rows: rows that hold several sequences (`input_position_ids`, packed records): padded, with
  block-diagonal attention and positions from `input_position_ids`.
- batch_of_one: inference with the single-request setting (`single_sequence_padded`, set
  while a serving module traces its signatures): a `tf.cond` on the batch size runs a batch of
  one row padded on the prefix up to its last real token, any other batch packed.
- output_positions `[B, K]`: the last block computes its queries, feed-forward and LayerNorms
  only there; pooled_positions `[B, K]`: the pooler reads those states instead of [CLS] at 0.
"""

import dataclasses

# Present only for rows that hold several sequences (packed records): each token's position
# in its own sequence; `input_mask` then numbers the sequences 1..k (0 at padding).
POSITION_IDS = "input_position_ids"

PADDED, PACKED, ROWS, BATCH_OF_ONE = "padded", "packed", "rows", "batch_of_one"


@dataclasses.dataclass(frozen=True)
class EncoderLayout:
    """How one encoder call lays out its tokens (a row of the module docstring's table).

    Attributes:
      tokens: "padded", "packed", "rows" or "batch_of_one".
      output_at_positions: the last block stops at `output_positions`.
      pooled_at_positions: the pooler reads the states at `pooled_positions`.

    Example:
    >>> EncoderLayout(PACKED).tokens
    'packed'
    """

    tokens: str = PADDED
    output_at_positions: bool = False
    pooled_at_positions: bool = False


def choose_layout(inputs, training=None, packed_training=False, packed_inference=True,
                  output_positions=None, pooled_positions=None, single_sequence_padded=False):
    """The layout of a `BertEncoder` call (see the module docstring's table).

    Args:
      inputs: the encoder inputs dict; `input_position_ids` in it means rows of several
        sequences.
      training: the call's `training`: `packed_training` applies when truthy,
        `packed_inference` otherwise.
      packed_training, packed_inference: the encoder's settings.
      output_positions, pooled_positions: the call's arguments (only whether they are given
        matters here).
      single_sequence_padded: the single-request setting (serving exports).

    Returns:
      An `EncoderLayout`.

    Raises:
      ValueError: rows of several sequences with packed training.
    """
    rows = POSITION_IDS in inputs
    packed = packed_training if training else packed_inference
    if rows and packed and training:
        raise ValueError(
            "BertEncoder: rows of several sequences (`input_position_ids`, packed "
            "records) and packed_training (--packed_training) do not combine: "
            "use --packed_training=false; packed rows have little padding to skip.")
    at_positions = output_positions is not None
    pooled = pooled_positions is not None
    if rows:
        tokens = ROWS
    elif not packed:
        tokens = PADDED
    elif not training and single_sequence_padded and not pooled:
        tokens = BATCH_OF_ONE
    else:
        tokens = PACKED
    return EncoderLayout(tokens, at_positions, pooled)
