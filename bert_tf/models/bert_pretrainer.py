"""BertPretrainer: the encoder plus the masked-LM and next-sentence heads (paper §3.1)."""

import keras

from bert_tf.layers.initializers import truncated_normal
from bert_tf.layers.masked_lm_head import MaskedLMHead
from bert_tf.models.bert_encoder import ENCODER_INPUTS, POSITION_IDS, BertEncoder, encoder_inputs
from bert_tf.models.named_weights import HEAD_GROUPS, group, set_weights
from bert_tf.models.task_model import BertTaskModel, check_encoder

NEXT_SENTENCE_POSITIONS = "next_sentence_positions"


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPretrainer(BertTaskModel):
    """Pretraining model: masked LM on gathered positions, NSP on the pooled output.

    Args:
      encoder: a `BertEncoder`.
      use_next_sentence: include the next-sentence head (False for MLM-only ablations).
      packed_rows: take rows that hold several sequences each (records of
        `create_pretraining_data --max_sequences_per_pack`, Krell et al. 2021): the inputs
        add `input_position_ids` int32 `[B, S]` and (with NSP) `next_sentence_positions`
        int32 `[B, K]`, each sequence's [CLS]; `input_mask` numbers the sequences 1..k.
        Each sequence gets the logits it would get alone in its own row.

    The masked-LM head's transform takes the config's `masked_lm_hidden_act` and
    `masked_lm_layer_norm_eps` where set (a keras-hub `BertMaskedLM`), else the encoder's.

    Inputs: the encoder inputs plus `masked_lm_positions` int32 `[B, P]`. Outputs:
    `mlm_logits` float32 `[B, P, V]` and (with NSP) `nsp_logits` float32 `[B, 2]`
    (`[B, K, 2]` with `packed_rows`).
    In training the encoder's last block runs only at [CLS] and the masked positions
    (`BertEncoder.call`'s `output_positions`): the same logits, less work.

    Example:
    >>> pretrainer = BertPretrainer(BertEncoder(config))  # doctest: +SKIP
    >>> pretrainer(batch)["mlm_logits"].shape  # doctest: +SKIP
    TensorShape([32, 20, 30522])
    """

    def __init__(self, encoder, use_next_sentence=True, packed_rows=False, **kwargs):
        check_encoder(encoder)
        config = encoder.config
        masked_lm = MaskedLMHead(
            encoder.embeddings.word_embeddings,
            hidden_act=config.masked_lm_hidden_act or config.hidden_act,
            layer_norm_eps=config.masked_lm_layer_norm_eps or config.layer_norm_eps,
            initializer_range=config.initializer_range, name="masked_lm")
        next_sentence = None
        if use_next_sentence:
            next_sentence = keras.layers.Dense(
                2, kernel_initializer=truncated_normal(config.initializer_range),
                dtype="float32", name="next_sentence")

        inputs = encoder_inputs()
        inputs["masked_lm_positions"] = keras.Input(
            shape=(None,), dtype="int32", name="masked_lm_positions")
        if packed_rows:
            inputs[POSITION_IDS] = keras.Input(shape=(None,), dtype="int32", name=POSITION_IDS)
            if use_next_sentence:
                inputs[NEXT_SENTENCE_POSITIONS] = keras.Input(
                    shape=(None,), dtype="int32", name=NEXT_SENTENCE_POSITIONS)
        encoded = _encode(encoder, inputs, packed_rows, use_next_sentence)
        outputs = {"mlm_logits": masked_lm(encoded["sequence_output"],
                                           inputs["masked_lm_positions"])}
        if next_sentence is not None:
            outputs["nsp_logits"] = next_sentence(encoded["pooled_output"])
        super().__init__(encoder, inputs=inputs, outputs=outputs, **kwargs)

        self.use_next_sentence = use_next_sentence
        self.packed_rows = packed_rows
        self.masked_lm = masked_lm
        self.next_sentence = next_sentence

    def call(self, inputs, training=None, mask=None):
        if not training:
            return super().call(inputs, training=training, mask=mask)
        encoded = _encode(self.encoder, inputs, self.packed_rows, self.use_next_sentence,
                          training=training, output_positions=inputs["masked_lm_positions"])
        outputs = {"mlm_logits": self.masked_lm(encoded["sequence_output"])}
        if self.next_sentence is not None:
            outputs["nsp_logits"] = self.next_sentence(encoded["pooled_output"])
        return outputs

    def checkpoint_items(self):
        items = {"encoder": self.encoder, "masked_lm": self.masked_lm}
        if self.next_sentence is not None:
            items["next_sentence"] = self.next_sentence
        return items

    def task_config(self):
        return {"use_next_sentence": self.use_next_sentence, "packed_rows": self.packed_rows}


def _encode(encoder, inputs, packed_rows, use_next_sentence, **kwargs):
    """Calls `encoder` on the encoder entries of the pretrainer's `inputs` (rows of several
    sequences: with their position ids, pooled at each sequence's [CLS])."""
    names = ENCODER_INPUTS + ((POSITION_IDS,) if packed_rows else ())
    if packed_rows and use_next_sentence:
        kwargs["pooled_positions"] = inputs[NEXT_SENTENCE_POSITIONS]
    return encoder({name: inputs[name] for name in names}, **kwargs)


def build_pretrainer(config, use_next_sentence=True, left_to_right=False, remat=False,
                     packed_training=False, packed_rows=False):
    """The `BertPretrainer` for an objective (paper Table 5's ablations included).

    `left_to_right` gives a causal encoder and no NSP head; `use_next_sentence=False` an
    MLM-only model; `remat` recomputes each block in the backward pass; `packed_training`
    computes the real tokens only (`BertEncoder`); `packed_rows` takes rows of several
    sequences (packed records, `BertPretrainer`).
    """
    encoder = BertEncoder(config, causal_attention=left_to_right, remat=remat,
                          packed_training=packed_training)
    return BertPretrainer(encoder, use_next_sentence=use_next_sentence and not left_to_right,
                          packed_rows=packed_rows)


def pretraining_heads(encoder, weights, where="weights"):
    """The pretraining heads `weights` holds (`masked_lm/...`, `next_sentence/...`) on
    `encoder`, their weights set (`named_weights.set_weights`).

    Returns:
      {key: layer}, keyed as `BertPretrainer.checkpoint_items()`; {} without heads.

    Raises:
      ValueError: a next-sentence head without the masked-LM head, or weights that do not fit.
    """
    held = {group(path) for path in weights} & set(HEAD_GROUPS)
    if not held:
        return {}
    if "masked_lm" not in held:
        raise ValueError(f"{where}: a next-sentence head needs the masked-LM head too.")
    items = BertPretrainer(encoder, use_next_sentence="next_sentence" in held).checkpoint_items()
    heads = {key: layer for key, layer in items.items() if key != "encoder"}
    paths = {weight.path for layer in heads.values() for weight in layer.weights}
    set_weights(list(heads.values()),
                {path: value for path, value in weights.items() if path in paths}, where)
    return heads
