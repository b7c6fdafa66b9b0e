"""The TF Serving batching parameters written beside each export."""

import os
import re

import pytest

from bert_tf.export import batching

# BatchingParameters' fields that take a wrapped value (`name { value: N }`).
_WRAPPED = ("max_batch_size", "batch_timeout_micros", "num_batch_threads",
            "max_enqueued_batches")


def parse(text):
    """The fields of a BatchingParameters text proto (comments dropped)."""
    fields, allowed = {}, []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        wrapped = re.fullmatch(r"(\w+) \{ value: (\d+) \}", line)
        if wrapped:
            fields[wrapped.group(1)] = int(wrapped.group(2))
            continue
        name, value = (part.strip() for part in line.split(":"))
        if name == "allowed_batch_sizes":
            allowed.append(int(value))
        else:
            fields[name] = value
    return fields, allowed


def test_every_export_has_the_file_beside_it(tiny_classifier):
    path = os.path.join(tiny_classifier[1], batching.BATCHING_PARAMETERS_FILE)
    with open(path, encoding="utf-8") as f:
        fields, allowed = parse(f.read())
    assert set(fields) == {*_WRAPPED, "pad_variable_length_inputs"}
    assert fields["max_batch_size"] == 32 and fields["batch_timeout_micros"] == 5000
    assert fields["num_batch_threads"] >= 1 and fields["pad_variable_length_inputs"] == "false"
    assert allowed == []


def test_allowed_batch_sizes_and_bad_values():
    fields, allowed = parse(batching.batching_parameters_text(
        max_batch_size=64, num_batch_threads=4, allowed_batch_sizes=[8, 16, 64]))
    assert allowed == [8, 16, 64] and fields["num_batch_threads"] == 4
    with pytest.raises(ValueError, match="must increase and end at max_batch_size=64"):
        batching.batching_parameters_text(max_batch_size=64, allowed_batch_sizes=[8, 32])
    with pytest.raises(ValueError, match="max_batch_size must be a positive integer"):
        batching.batching_parameters_text(max_batch_size=0)
