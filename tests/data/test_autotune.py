"""`without_autotune`: the option is off and the elements are unchanged."""

import tensorflow as tf

from bert_tf.data.autotune import without_autotune


def test_without_autotune_turns_the_model_off_and_keeps_the_elements():
    dataset = tf.data.Dataset.range(5).map(lambda x: x * 2, num_parallel_calls=tf.data.AUTOTUNE)
    assert dataset.options().autotune.enabled is not False
    tuned_off = without_autotune(dataset)
    assert tuned_off.options().autotune.enabled is False
    assert list(tuned_off.as_numpy_iterator()) == [0, 2, 4, 6, 8]
