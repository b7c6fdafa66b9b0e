"""Strategies by name, and clear errors for bad names, device counts and TF_CONFIG."""

import pytest
import tensorflow as tf

from bert_tf.training.distribution import get_strategy, is_chief, lost_worker_message


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


CLUSTER = {"worker": ["10.0.0.1:2222", "10.0.0.2:2222"]}
# What TensorFlow 2.21 reported when one of two CPU workers was lost (kill -9 of worker 1, seen
# by worker 0; kill -9 of worker 0, seen by worker 1; worker 1 hung in Python; worker 0 stopped).
_HEARTBEATS = ("Graph execution error:\n\nDetected at node while/cond_1/CollectiveReduceV2_3\n"
               "Collective ops is aborted by: Error reported from /job:worker/task:1: The "
               "following tasks are unhealthy (stopped sending heartbeats):\n"
               "/job:worker/replica:0/task:1\n"
               "The tasks have crashed. Check the task logs for an earlier error")
_RESET = ("Collective ops is aborted by: recvmsg:Connection reset by peer\nAdditional GRPC error "
          "information from remote target /job:worker/replica:0/task:0 while calling "
          "/tensorflow.WorkerService/RecvBuf:\n:UNKNOWN:Error received from peer  "
          "{grpc_status:14, "
          'grpc_message:"recvmsg:Connection reset by peer"}')
_TIMEOUT = "Collective ops is aborted by: Collective has timed out during execution."
_LEADER = ("Collective ops is aborted by: Deadline Exceeded\n\n"
           "RPC: /tensorflow.CoordinationService/Heartbeat")


@pytest.mark.parametrize("message, this_task, named", [
    (_HEARTBEATS, ("worker", 0), "worker 1 (10.0.0.2:2222) stopped sending heartbeats"),
    (_RESET, ("worker", 1), "worker 0 (10.0.0.1:2222) stopped answering (recvmsg:Connection "
                            "reset by peer)"),
    (_TIMEOUT, ("worker", 0), "worker 1 (10.0.0.2:2222) did not join a step within "
                              "--collective_timeout_seconds=20"),
    (_LEADER, ("worker", 1), "worker 0 (10.0.0.1:2222), which runs the coordination service"),
])
def test_a_lost_worker_is_one_line_naming_it(message, this_task, named):
    line = lost_worker_message(message, CLUSTER, 20, this_task)
    assert line.startswith(f"lost a worker of the 2-worker run: {named}"), line
    assert "\n" not in line and line.endswith("to resume from the newest checkpoint.")


def test_other_errors_are_not_a_lost_worker():
    assert lost_worker_message("Read less bytes than requested", CLUSTER, 20) is None
    three = {"worker": ["a:1", "b:1", "c:1"]}
    assert "a worker did not join" in lost_worker_message(_TIMEOUT, three, 20, ("worker", 0))
