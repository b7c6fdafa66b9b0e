"""The options of pretraining-record making and the `InstanceBuilder` they configure.

A leaf of `records/`: both the entry function (`create_pretraining_data`) and the Beam
workers that build instances (`beam_pipeline`) import it, and it imports neither of them.
"""

import dataclasses

from absl import logging

from bert_tf.data.records import instance_builder as instance_builder_lib
from bert_tf.data.records import sequence_packing
from bert_tf.tokenization import vocab as vocab_lib

# Buckets hold documents_per_bucket on average; at 50 the chance that one holds fewer than
# the two a NotNext pair needs is about 1e-20.
_MIN_DOCUMENTS_PER_BUCKET = 50


@dataclasses.dataclass
class Options:
    """Flags of `tools/create_pretraining_data.py` (google-research names and defaults)."""

    vocab_file: str
    do_lower_case: bool = True
    do_whole_word_mask: bool = False
    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    random_seed: int = 12345
    dupe_factor: int = 10
    masked_lm_prob: float = 0.15
    short_seq_prob: float = 0.1
    documents_per_bucket: int = 1000
    max_document_sentences: int = 10000
    tokenize_batch_size: int = 1024
    max_sequences_per_pack: int = 1  # 1: one sequence per record, as google-research writes


def instance_builder(options, vocab):
    """The `InstanceBuilder` of `options` for `vocab` (a list of tokens); validates both."""
    vocab_lib.check_case_matches_vocab(vocab, options.do_lower_case, options.vocab_file)
    ids = vocab_lib.special_token_ids(vocab)
    return instance_builder_lib.InstanceBuilder(options.max_seq_length,
                                                options.max_predictions_per_seq,
                                                options.masked_lm_prob, options.short_seq_prob,
                                                options.do_whole_word_mask, len(vocab), ids.cls_id,
                                                ids.sep_id, ids.mask_id)


def check_options(options):
    """Validates `options`; warns when `max_predictions_per_seq` caps masking."""
    if options.dupe_factor < 1:
        raise ValueError(f"dupe_factor must be at least 1, got {options.dupe_factor}")
    if not 0.0 <= options.short_seq_prob <= 1.0:
        raise ValueError(f"short_seq_prob must be in [0, 1], got {options.short_seq_prob}")
    if options.documents_per_bucket < _MIN_DOCUMENTS_PER_BUCKET:
        raise ValueError(f"documents_per_bucket must be at least {_MIN_DOCUMENTS_PER_BUCKET}, "
                         f"got {options.documents_per_bucket}")
    limit = sequence_packing.max_sequences_limit(options.max_seq_length)
    if not 1 <= options.max_sequences_per_pack <= max(1, limit):
        raise ValueError(f"--max_sequences_per_pack must be in [1, {max(1, limit)}] (a sequence "
                         f"has at least {sequence_packing.MIN_SEQUENCE_LENGTH} tokens, a row "
                         f"--max_seq_length={options.max_seq_length}), got "
                         f"{options.max_sequences_per_pack}")
    if options.max_document_sentences < 1 or options.tokenize_batch_size < 1:
        raise ValueError("max_document_sentences and tokenize_batch_size must be positive")
    expected = int(round(options.max_seq_length * options.masked_lm_prob))
    if options.max_predictions_per_seq < expected:
        logging.warning("max_predictions_per_seq=%d caps masking: a full sequence of "
                        "max_seq_length=%d at masked_lm_prob=%g would mask %d tokens, so long "
                        "sequences get an effective masked_lm_prob of %.3f. Use "
                        "max_predictions_per_seq >= %d.", options.max_predictions_per_seq,
                        options.max_seq_length, options.masked_lm_prob, expected,
                        options.max_predictions_per_seq / options.max_seq_length, expected)
