"""Strategies by name, and clear errors for bad names, device counts and TF_CONFIG."""

import pytest
import tensorflow as tf

from bert_tf.training.distribution import get_strategy, is_chief


def test_one_device_and_mirrored_over_the_logical_cpus():
    assert get_strategy("one_device").num_replicas_in_sync == 1
    mirrored = get_strategy("mirrored")
    assert isinstance(mirrored, tf.distribute.MirroredStrategy)
    assert mirrored.num_replicas_in_sync == len(tf.config.list_logical_devices("CPU")) == 2
    assert get_strategy("mirrored", num_gpus=1).num_replicas_in_sync == 1
    assert is_chief(mirrored)


def test_bad_names_and_counts_are_explained():
    with pytest.raises(ValueError, match="parameter_server.*one_device"):
        get_strategy("parameter_server")
    with pytest.raises(ValueError, match="num_gpus=5.*2 device"):
        get_strategy("mirrored", num_gpus=5)


@pytest.mark.parametrize("tf_config, match", [
    ("{not json", "TF_CONFIG must be JSON"),
    ('{"cluster": {"worker": ["localhost:1"]}, "task": {"type": "worker", "index": 3}}', "index"),
])
def test_malformed_tf_config_fails_before_connecting(monkeypatch, tf_config, match):
    monkeypatch.setenv("TF_CONFIG", tf_config)
    with pytest.raises(ValueError, match=match):
        get_strategy("multi_worker_mirrored")
