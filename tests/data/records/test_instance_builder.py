"""InstanceBuilder's masking picks positions uniformly, as google-research's full shuffle does."""

import collections
import random

from bert_tf.data.records.instance_builder import InstanceBuilder


def test_every_position_is_masked_equally_often():
    # Two sentences of six one-piece words: IsNext pairs are [CLS] a(6) [SEP] b(6) [SEP], 15 tokens,
    # never truncated at max_seq_length 16, and mask round(15 * 0.15) = 2 of the 12 word pieces.
    builder = InstanceBuilder(max_seq_length=16, max_predictions_per_seq=5, masked_lm_prob=0.15,
                              short_seq_prob=0.0, do_whole_word_mask=False, vocab_size=100,
                              cls_id=1, sep_id=2, mask_id=3)
    document = [(list(range(10, 16)), [True] * 6), (list(range(20, 26)), [True] * 6)]
    other = [(list(range(30, 36)), [True] * 6)]
    counts, pairs = collections.Counter(), 0
    for seed in range(4000):
        for instance in builder.build(document, lambda: other, random.Random(seed)):
            if not instance.is_random_next:
                pairs += 1
                assert len(instance.masked_lm_ids) == 2
                assert len(set(instance.masked_lm_positions)) == 2
                counts.update(instance.masked_lm_ids)
    expected = pairs * 2 / 12
    assert sorted(counts) == list(range(10, 16)) + list(range(20, 26)) and pairs > 1500
    assert all(abs(count - expected) < 0.2 * expected for count in counts.values()), (expected,
                                                                                      counts)
