"""TokenPacking: packed real tokens and length groups lose and duplicate nothing."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.layers.packing import TokenPacking


def _mask(lengths, width):
    return (np.arange(width)[None] < np.asarray(lengths)[:, None]).astype(np.int32)


@pytest.mark.parametrize("lengths,num_groups", [
    ([1, 9, 4, 2, 7, 9, 3], 3), ([5], 8), ([2, 2, 2, 2], 8), ([], 4)])
def test_pack_unpack_round_trip_and_groups_cover_every_token_once(lengths, num_groups):
    width = 9
    mask = _mask(lengths, width).reshape(len(lengths), width)
    values = np.arange(1, mask.size + 1, dtype=np.float32).reshape(mask.shape) * mask
    packing = TokenPacking(tf.constant(mask), num_groups=num_groups)
    packed = packing.pack(tf.constant(values))
    assert packed.shape == (mask.sum(),)
    np.testing.assert_array_equal(packing.unpack(packed), values)

    grouped = packing.to_groups(packed[:, tf.newaxis])
    assert len(grouped) == num_groups
    seen = []
    for group, (_slots, valid) in zip(grouped, packing.groups):
        group = group.numpy()[..., 0]
        # Padding slots read zeros; each group is padded only to its own longest row.
        assert not group[~valid.numpy()].any()
        if valid.shape[0]:
            assert valid.numpy()[:, -1].any()
        seen += group[valid.numpy()].tolist()
    assert sorted(seen) == sorted(values[mask.astype(bool)].tolist())
    np.testing.assert_array_equal(packing.from_groups(grouped)[:, 0], packed)


def test_rows_are_grouped_by_length():
    lengths = [3, 9, 1, 8, 2, 7]
    packing = TokenPacking(tf.constant(_mask(lengths, 9)), num_groups=3)
    group_lengths = [sorted(v.numpy().sum(axis=1).tolist()) for _, v in packing.groups]
    assert group_lengths == [[8, 9], [3, 7], [1, 2]]


def test_a_mask_with_holes_keeps_each_tokens_own_column():
    mask = tf.constant([[1, 0, 1, 1], [0, 1, 0, 0]])
    packing = TokenPacking(mask)
    assert packing.positions.numpy().tolist() == [0, 2, 3, 1]
