"""BertConfig: the model hyper-parameters of google-research's `bert_config.json`.

One config system for the model. The field names are google-research's; a Hugging Face
`config.json` of a BERT model reads too (its extra bookkeeping keys are ignored, its
`layer_norm_eps` is kept).
"""

import dataclasses
import json
import os

from bert_tf import file_io
from bert_tf.errors import UserError


class ConfigError(UserError, ValueError):
    """A model config is missing keys, has unknown keys or holds bad values."""


# `hidden_act` values; bert_tf.layers.activations maps each name to its function.
HIDDEN_ACTS = ("gelu", "gelu_new", "gelu_approximate", "gelu_pytorch_tanh", "relu", "tanh",
               "swish", "silu")

# Keys every bert_config.json must give; the rest have google-research's defaults.
_REQUIRED_KEYS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
)

# bert_tf's keys beyond google-research's that may be None (unset): left out of `to_dict`.
_OPTIONAL_KEYS = ("masked_lm_hidden_act", "masked_lm_layer_norm_eps")

# Keys that Hugging Face writes into a BERT config.json and that do not change the
# encoder's math (bookkeeping, generation or head settings).
_IGNORED_HF_KEYS = frozenset({
    "_name_or_path", "architectures", "model_type", "transformers_version", "torch_dtype",
    "dtype", "gradient_checkpointing", "use_cache", "pad_token_id", "bos_token_id",
    "eos_token_id", "classifier_dropout", "directionality", "pooler_fc_size",
    "pooler_num_attention_heads", "pooler_num_fc_layers", "pooler_size_per_head",
    "pooler_type", "output_past", "id2label", "label2id", "problem_type", "is_decoder",
    "add_cross_attention", "tie_word_embeddings", "return_dict", "output_hidden_states",
    "output_attentions", "torchscript", "chunk_size_feed_forward", "finetuning_task",
    "num_labels",  # checked against the head by checkpoints.huggingface.architectures
})


@dataclasses.dataclass(frozen=True)
class BertConfig:
    """Hyper-parameters of a BERT encoder, named as in google-research's `bert_config.json`.

    Example:
    >>> config = BertConfig(vocab_size=30522, hidden_size=128, num_hidden_layers=2,
    ...                     num_attention_heads=2, intermediate_size=512)
    >>> BertConfig.from_dict(config.to_dict()) == config
    True
    """

    vocab_size: int
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-12
    # The masked-LM head's transform where it differs from the encoder's (keras-hub's
    # `BertMaskedLM` computes the exact GELU and epsilon 1e-5 over a tanh-GELU, 1e-12
    # backbone); None: `hidden_act` and `layer_norm_eps`. Written only when set, so a
    # `bert_config.json` without them reads as before.
    masked_lm_hidden_act: str = None
    masked_lm_layer_norm_eps: float = None

    def __post_init__(self):
        for name in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                     "intermediate_size", "max_position_embeddings", "type_vocab_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ConfigError(f"`{name}` must be a positive integer. Received: "
                                  f"`{name}={value!r}`.")
        if self.hidden_size % self.num_attention_heads:
            raise ConfigError("`hidden_size` must be divisible by `num_attention_heads`. "
                              f"Received: `hidden_size={self.hidden_size}`, "
                              f"`num_attention_heads={self.num_attention_heads}`.")
        for name in ("hidden_act", "masked_lm_hidden_act"):
            value = getattr(self, name)
            if name in _OPTIONAL_KEYS and value is None:
                continue
            if not isinstance(value, str) or value not in HIDDEN_ACTS:
                raise ConfigError(
                    f"Unknown `{name}={value!r}`. Expected one of {sorted(HIDDEN_ACTS)}.")
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob", "initializer_range",
                     "layer_norm_eps", "masked_lm_layer_norm_eps"):
            value = getattr(self, name)
            if name in _OPTIONAL_KEYS and value is None:
                continue
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise ConfigError(f"`{name}` must be a number. Received: `{name}={value!r}`.")
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, name)
            if not 0.0 <= value < 1.0:
                raise ConfigError(f"`{name}` must be in [0, 1). Received: `{name}={value!r}`.")
        for name in ("initializer_range", "layer_norm_eps", "masked_lm_layer_norm_eps"):
            value = getattr(self, name)
            if value is not None and not 0.0 < value < float("inf"):
                raise ConfigError(f"`{name}` must be positive. Received: `{name}={value!r}`.")

    @property
    def head_size(self):
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_dict(cls, values, source="config"):
        """Builds a config from google-research or Hugging Face keys.

        Args:
          values: mapping of config keys to values.
          source: where the values came from, used in error messages (e.g. a file path).

        Raises:
          ConfigError: a required key is missing, a key is unknown, or a value is invalid.
        """
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: expected a JSON object, got {type(values).__name__}.")
        fields = {f.name for f in dataclasses.fields(cls)}
        missing = [key for key in _REQUIRED_KEYS if key not in values]
        if missing:
            raise ConfigError(f"{source}: missing required key(s) {missing}.")
        unknown = sorted(set(values) - fields - _IGNORED_HF_KEYS)
        if "position_embedding_type" in values and values["position_embedding_type"] != "absolute":
            raise ConfigError(
                f"{source}: `position_embedding_type={values['position_embedding_type']!r}` is not "
                "supported; BERT uses learned absolute positions (`absolute`)."
            )
        unknown = [key for key in unknown if key != "position_embedding_type"]
        if unknown:
            raise ConfigError(f"{source}: unknown key(s) {unknown}. Known keys: {sorted(fields)}.")
        try:
            return cls(**{key: value for key, value in values.items() if key in fields})
        except ConfigError as error:
            raise ConfigError(f"{source}: {error}") from None

    @classmethod
    def from_json_file(cls, path):
        """Reads a `bert_config.json` (google-research) or `config.json` (Hugging Face)."""
        if not os.path.exists(path):
            raise ConfigError(f"Config file not found: {path}")
        return cls.from_dict(file_io.read_json(path, ConfigError), source=path)

    def to_dict(self):
        """The config's keys and values; optional keys only where set."""
        return {key: value for key, value in dataclasses.asdict(self).items()
                if value is not None or key not in _OPTIONAL_KEYS}

    def to_json_file(self, path):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_dict(), f, indent=2, sort_keys=True)
            f.write("\n")
