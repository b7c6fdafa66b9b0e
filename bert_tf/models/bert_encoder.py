"""BertEncoder: the BERT network with TF Hub input and output names."""

import contextlib

import keras
import tensorflow as tf

from bert_tf.configs import BertConfig
from bert_tf.layers.attention import block_diagonal_mask
from bert_tf.layers.dense import Dense
from bert_tf.layers.embeddings import BertEmbeddings
from bert_tf.layers.initializers import truncated_normal
from bert_tf.layers.packing import NUM_ATTENTION_GROUPS, TokenPacking
from bert_tf.layers.transformer_block import TransformerBlock
from bert_tf.models.encoder_layout import (
    BATCH_OF_ONE,
    PACKED,
    POSITION_IDS,
    ROWS,
    EncoderLayout,
    choose_layout,
)
from bert_tf.models.named_weights import OPTIONAL, encoder_part, set_weights

ENCODER_INPUTS = ("input_word_ids", "input_mask", "input_type_ids")


def _forward(embeddings, blocks, pooler, inputs, layout, training=None, output_positions=None,
             pooled_positions=None, attention_groups=NUM_ATTENTION_GROUPS):
    """Embeddings, blocks and pooler in `layout` (an `EncoderLayout`): the one loop of
    `BertEncoder` (see its `call` and `models.encoder_layout`); a packed layout attends in
    `attention_groups` length groups (`layers.packing.TokenPacking`)."""
    if layout.tokens == BATCH_OF_ONE:
        packed = EncoderLayout(PACKED, layout.output_at_positions)
        return tf.cond(tf.shape(inputs["input_mask"])[0] == 1,
                       lambda: _forward_prefix(embeddings, blocks, pooler, inputs, training,
                                               output_positions),
                       lambda: _forward(embeddings, blocks, pooler, inputs, packed, training,
                                        output_positions))
    input_mask = inputs["input_mask"]
    packing = TokenPacking(input_mask, attention_groups) if layout.tokens == PACKED else None
    rows = layout.tokens == ROWS
    position_ids = inputs[POSITION_IDS] if rows else None
    # Rows of several sequences: each attends to itself only.
    attention_mask = block_diagonal_mask(input_mask) if rows else None
    num_pooled = 1  # [CLS] states the pooler reads
    if layout.pooled_at_positions:
        pooled_positions = tf.cast(pooled_positions, tf.int32)
        num_pooled = pooled_positions.shape[1] or tf.shape(pooled_positions)[1]
    if layout.output_at_positions:
        # [CLS] goes first (each sequence's, for rows of several), for the pooler.
        output_positions = tf.cast(output_positions, tf.int32)
        first = (pooled_positions if layout.pooled_at_positions
                 else tf.zeros([tf.shape(output_positions)[0], 1], tf.int32))
        output_positions = tf.concat([first, output_positions], 1)
    # Embed tokens, segments and positions.
    hidden = embeddings(inputs["input_word_ids"], inputs["input_type_ids"], training=training,
                        packing=packing, position_ids=position_ids)
    encoder_outputs = []
    for index, block in enumerate(blocks):
        last = index == len(blocks) - 1
        at_positions = last and layout.output_at_positions
        hidden = block(hidden, input_mask, training=training, packing=packing,
                       output_positions=output_positions if at_positions else None,
                       attention_mask=attention_mask)
        # Padded layout out: packed hidden states return to [B, S, H] (padding zero).
        unpacked = hidden if packing is None or at_positions else packing.unpack(hidden)
        encoder_outputs.append(unpacked)
    sequence_output = encoder_outputs[-1]
    # The pooler reads the final hidden state of [CLS] (paper §3: C ∈ R^H); a row whose first
    # position is padding reads zeros, in every layout.
    # (keras.ops: the functional graph runs this on symbolic tensors.)
    if not layout.pooled_at_positions:
        first = sequence_output[:, 0, :] * keras.ops.cast(input_mask[:, :1], sequence_output.dtype)
    elif layout.output_at_positions:
        first = sequence_output[:, :num_pooled]  # [B, K, H]
    else:
        first = tf.gather(sequence_output, pooled_positions, batch_dims=1)  # [B, K, H]
    if layout.output_at_positions:
        sequence_output = sequence_output[:, num_pooled:]
        encoder_outputs[-1] = sequence_output
    return {
        "sequence_output": sequence_output,
        "pooled_output": pooler(first),
        "encoder_outputs": encoder_outputs,
    }


def _forward_prefix(embeddings, blocks, pooler, inputs, training=None, output_positions=None):
    """Inference on a batch of one row, padded, without packing's bookkeeping.

    One row has no padding to drop but what follows its last real token: the row is cut
    there, runs padded, and its outputs are zeroed at padding and padded back to the input
    width, so they equal the packed outputs (within float rounding). `output_positions`
    (real tokens, so within the cut) stop the last block as in the other layouts.
    """
    mask = inputs["input_mask"]
    width = tf.shape(mask)[1]
    positions = tf.range(1, width + 1)
    # At least 1: the pooler reads position 0 (zeroed by the mask when it is padding).
    length = tf.maximum(tf.reduce_max(tf.where(mask[0] > 0, positions, 0)), 1)
    at_positions = output_positions is not None
    outputs = _forward(embeddings, blocks, pooler,
                       {name: value[:, :length] for name, value in inputs.items()},
                       EncoderLayout(output_at_positions=at_positions), training,
                       output_positions)
    kept = mask[:, :length, tf.newaxis]

    def restore(sequence):  # [1, length, H] -> [1, width, H], zero at padding
        sequence = sequence * tf.cast(kept, sequence.dtype)
        return tf.pad(sequence, [[0, 0], [0, width - length], [0, 0]])
    *inner, last = outputs["encoder_outputs"]
    last = last if at_positions else restore(last)  # at positions: `[1, K, H]` as it is
    return {"sequence_output": last, "pooled_output": outputs["pooled_output"],
            "encoder_outputs": [restore(x) for x in inner] + [last]}


def encoder_inputs(name_prefix=""):
    """Symbolic int32 `[batch, seq]` inputs named as TF Hub BERT encoders name them."""
    return {name: keras.Input(shape=(None,), dtype="int32", name=name_prefix + name)
            for name in ENCODER_INPUTS}


def check_encoder_inputs(inputs, max_position_embeddings):
    """Raises a clear error for a non-integer dtype or too long a sequence.

    (A missing key never gets here: Keras's functional call names it first.)
    """
    where = "BertEncoder"
    if not isinstance(inputs, dict):
        raise TypeError(f"{where} takes a dict with keys {list(ENCODER_INPUTS)}; "
                        f"received {type(inputs).__name__}.")
    for name in ENCODER_INPUTS + ((POSITION_IDS,) if POSITION_IDS in inputs else ()):
        value = inputs[name]
        dtype = tf.as_dtype(getattr(value, "dtype", None) or tf.convert_to_tensor(value).dtype)
        if not dtype.is_integer:
            raise TypeError(f"{where}: input `{name}` must be an integer tensor "
                            f"(int32); received dtype {dtype.name}.")
        shape = value.shape
        if len(shape) != 2:
            raise ValueError(f"{where}: input `{name}` must have shape [batch, seq]; "
                             f"received shape {tuple(shape)}.")
        if shape[1] is not None and shape[1] > max_position_embeddings:
            raise ValueError(
                f"{where}: input `{name}` has sequence length {shape[1]}, longer than "
                f"`max_position_embeddings={max_position_embeddings}` of the config.")


@keras.saving.register_keras_serializable(package="bert_tf")
class BertEncoder(keras.Model):
    """The BERT encoder: embeddings, `num_hidden_layers` post-LN blocks, tanh pooler.

    Inputs and outputs use TF Hub's BERT names, so a hub encoder and this one swap.

    Args:
      config: a `BertConfig` or its dict.
      causal_attention: mask attention to the left context (paper Table 5 LTR ablation).
      remat: recompute each block's activations in the backward pass (saves memory at seq 512).
      packed_inference: in inference (`training` falsy), run the position-wise layers on the
        real tokens only (`layers.packing`); outputs equal the padded computation at every
        real position and are zero at padding. False keeps the padded computation (whose
        padded positions hold values no one should read).
      packed_training: the same in training: the same values and gradients as the padded
        computation (dropout aside, whose noise falls on other elements), for the work of
        the real tokens. Off by default: the packing's gathers cost more than they save
        where batches are nearly full (docs/design.md, "Packed training"); the raw-text task
        models turn it on in `compile` (`keras_tasks.text_task.packs_training`).
      training_attention_groups: the length groups packed training attends in (inference
        keeps `layers.packing.NUM_ATTENTION_GROUPS`); fine-tuning sets it from its
        sequence length (`layers.packing.training_attention_groups`).

    Call with a dict of int32 `[B, S]` tensors `input_word_ids`, `input_mask`,
    `input_type_ids`; returns a dict with `sequence_output` `[B, S, H]`, `pooled_output`
    `[B, H]` and `encoder_outputs` (one `[B, S, H]` per layer).

    Rows of several sequences (records of `create_pretraining_data --max_sequences_per_pack`)
    add `input_position_ids` `[B, S]` (each sequence's positions from 0), and their
    `input_mask` numbers the sequences 1..k (0 at padding): attention is then
    block-diagonal (`layers.attention.block_diagonal_mask`), so each sequence gets the
    outputs it would get alone in its own row. Such rows are computed padded (neither
    `packed_*` applies; `packed_training` with them is refused).

    Example:
    >>> config = BertConfig(vocab_size=100, hidden_size=8, num_hidden_layers=2,
    ...                     num_attention_heads=2, intermediate_size=32)
    >>> encoder = BertEncoder(config)
    >>> ids = tf.constant([[2, 7, 3, 0]])
    >>> outputs = encoder({"input_word_ids": ids, "input_mask": tf.sign(ids),
    ...                    "input_type_ids": tf.zeros_like(ids)})
    >>> outputs["pooled_output"].shape
    TensorShape([1, 8])
    """

    def __init__(self, config, causal_attention=False, remat=False, packed_inference=True,
                 packed_training=False, training_attention_groups=NUM_ATTENTION_GROUPS, **kwargs):
        if isinstance(config, dict):
            config = BertConfig.from_dict(config)
        embeddings = BertEmbeddings(
            vocab_size=config.vocab_size,
            hidden_size=config.hidden_size,
            max_position_embeddings=config.max_position_embeddings,
            type_vocab_size=config.type_vocab_size,
            dropout_rate=config.hidden_dropout_prob,
            layer_norm_eps=config.layer_norm_eps,
            initializer_range=config.initializer_range,
            name="embeddings",
        )
        with keras.RematScope(mode="full" if remat else None):
            blocks = [
                TransformerBlock(
                    hidden_size=config.hidden_size,
                    num_heads=config.num_attention_heads,
                    intermediate_size=config.intermediate_size,
                    hidden_act=config.hidden_act,
                    hidden_dropout_prob=config.hidden_dropout_prob,
                    attention_probs_dropout_prob=config.attention_probs_dropout_prob,
                    layer_norm_eps=config.layer_norm_eps,
                    causal=causal_attention,
                    initializer_range=config.initializer_range,
                    name=f"layer_{index}",
                )
                for index in range(config.num_hidden_layers)
            ]
        pooler = Dense(
            config.hidden_size, activation="tanh",
            kernel_initializer=truncated_normal(config.initializer_range), name="pooler")

        # The functional graph (symbolic calls, summary) is the same forward as `call`.
        inputs = encoder_inputs()
        outputs = _forward(embeddings, blocks, pooler, inputs, EncoderLayout())
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

        self.config = config
        self.causal_attention = causal_attention
        self.remat = remat
        self.packed_inference = packed_inference
        self.packed_training = packed_training
        self.training_attention_groups = training_attention_groups
        # The single-request setting (`serving_batch_of_one`): off but while an export traces.
        self.single_sequence_padded = False
        self.embeddings = embeddings
        self.blocks = blocks
        self.pooler = pooler

    def _checked(self, inputs):
        check_encoder_inputs(inputs, self.config.max_position_embeddings)
        names = ENCODER_INPUTS + ((POSITION_IDS,) if POSITION_IDS in inputs else ())
        return {name: tf.cast(inputs[name], tf.int32) for name in names}

    def compute_output_spec(self, inputs, training=None, mask=None, output_positions=None,
                            pooled_positions=None):
        if isinstance(inputs, dict) and POSITION_IDS not in inputs and pooled_positions is None:
            spec = super().compute_output_spec(inputs, training=training, mask=mask)
            if output_positions is None:
                return spec
            # The last block stops at the K positions: `[B, K, H]` for `[B, S, H]`. Shapes
            # given, not traced: a classifier's symbolic build would trace the whole encoder.
            last = spec["sequence_output"]
            at_positions = keras.KerasTensor(
                tuple(output_positions.shape[:2]) + tuple(last.shape[2:]), dtype=last.dtype)
            return dict(spec, sequence_output=at_positions,
                        encoder_outputs=spec["encoder_outputs"][:-1] + [at_positions])
        # A call the functional graph does not hold (rows of several sequences): traced.
        return keras.Operation.compute_output_spec(
            self, inputs, training=training, output_positions=output_positions,
            pooled_positions=pooled_positions)

    def call(self, inputs, training=None, output_positions=None, pooled_positions=None,
             mask=None):
        """The forward pass: padded, on real tokens only, or up to chosen positions.

        `models.encoder_layout.choose_layout` picks the layout once from the inputs, these
        arguments and the encoder's settings; its module docstring tables which combine.

        Args:
          inputs: the encoder inputs dict (int `[B, S]` each).
          training: dropout on. Real tokens are packed per `packed_training` in training,
            `packed_inference` otherwise.
          output_positions: int `[B, K]` (real tokens; K may be 0), or None for every
            position. Given, the last block computes its queries, feed-forward and
            LayerNorms only there and at [CLS] (keys and values still at every position)
            and `sequence_output` is `[B, K, H]`: the same values as at those positions of
            the full output, for 1 - (K + 1)/S less of that block's position-wise work
            (pretraining's losses read nothing else; a classifier passes K = 0).
          pooled_positions: int `[B, K]`, or None for [CLS] at 0: the pooler reads the
            states there and `pooled_output` is `[B, K, H]` (the [CLS] of each sequence of
            rows that hold several).
        """
        inputs = self._checked(inputs)
        layout = choose_layout(inputs, training, self.packed_training, self.packed_inference,
                               output_positions, pooled_positions, self.single_sequence_padded)
        return _forward(self.embeddings, self.blocks, self.pooler, inputs, layout,
                        training=training, output_positions=output_positions,
                        pooled_positions=pooled_positions,
                        attention_groups=(self.training_attention_groups if training
                                          else NUM_ATTENTION_GROUPS))

    @contextlib.contextmanager
    def serving_batch_of_one(self):
        """Within it, inference on a batch of one row runs padded on its prefix.

        The single-request setting (layout "batch_of_one" of `models.encoder_layout`): a
        lone request skips packing's sort/scatter/group ops. Serving modules trace their
        signatures within it; it is off elsewhere because the `tf.cond` on the batch size
        doubles the traced inference graph, which only exports need.

        Example:
        >>> with encoder.serving_batch_of_one():  # doctest: +SKIP
        ...     signature = tf.function(encoder).get_concrete_function(specs)
        """
        previous, self.single_sequence_padded = self.single_sequence_padded, True
        try:
            yield
        finally:
            self.single_sequence_padded = previous

    @classmethod
    def from_pretrained(cls, folder, **kwargs):
        """Builds the encoder of any checkpoint folder bert_tf reads, weights loaded.

        A model directory, a Hugging Face folder, a google-research checkpoint, and every
        other format of `checkpoints.registry.FORMATS`, through `read_pretrained` (config and
        numpy weights; the readers sit below the models); heads the folder holds are dropped.
        `kwargs` are the constructor's (`packed_inference`, `remat`, ...).

        Raises:
          FileNotFoundError: no such folder, or a file its format needs.
          CheckpointError: not a checkpoint bert_tf reads, a damaged checkpoint, one unlike
            its config, or NaN/Inf weights.

        Example:
        >>> encoder = BertEncoder.from_pretrained("all-MiniLM-L6-v2/")  # doctest: +SKIP
        """
        # Here, not at the top: the package `bert_tf.checkpoints` also exports its building
        # side (`checkpoints/building.py`), which imports the models.
        from bert_tf.checkpoints.registry import read_pretrained

        pretrained = read_pretrained(folder)
        return cls.from_weights(pretrained.config, pretrained.weights, where=pretrained.path,
                                **kwargs)

    @classmethod
    def from_weights(cls, config, weights, where="weights", **kwargs):
        """The encoder of `config` with `weights` set: numpy arrays keyed by our variables'
        paths, what every checkpoint reader returns (`models/named_weights.py`).

        Heads' arrays in `weights` (`masked_lm/...`, `head/...`) are left for their models;
        a missing pooler stays as initialized. `kwargs` are the constructor's.

        Raises:
          ValueError: an encoder weight without an array, or an array of the wrong shape.

        Example:
        >>> weights = {w.path: w.numpy() for w in encoder.weights}     # doctest: +SKIP
        >>> copy = BertEncoder.from_weights(encoder.config, weights)   # doctest: +SKIP
        """
        encoder = cls(config, **kwargs)
        set_weights([encoder], encoder_part(weights), where, optional=OPTIONAL)
        return encoder

    def get_config(self):
        return {
            "config": self.config.to_dict(),
            "causal_attention": self.causal_attention,
            "remat": self.remat,
            "packed_inference": self.packed_inference,
            "packed_training": self.packed_training,
            "training_attention_groups": self.training_attention_groups,
            "name": self.name,
            "trainable": self.trainable,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)
