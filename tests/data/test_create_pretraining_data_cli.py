"""tools/create_pretraining_data.py end to end: flags in, google-research records out."""

import os
import subprocess
import sys

import pytest
import tensorflow as tf

from tests.data.conftest import HELDOUT, VOCAB

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tool(*flags):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([sys.executable, os.path.join(ROOT, "tools", "create_pretraining_data.py"), *flags],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.slow
def test_cli_writes_google_research_records(tmp_path):
    result = _tool(f"--input_file={HELDOUT}", f"--output_file={tmp_path}/out", f"--vocab_file={VOCAB}",
                   "--num_output_shards=2", "--dupe_factor=1", "--max_seq_length=64", "--max_predictions_per_seq=10",
                   "--do_whole_word_mask", "--random_seed=3")
    assert result.returncode == 0, result.stderr
    assert "wrote" in result.stderr and "instances from 59 documents" in result.stderr
    files = sorted(os.listdir(tmp_path))
    assert files == ["out-00000-of-00002", "out-00001-of-00002"]
    record = next(iter(tf.data.TFRecordDataset(str(tmp_path / files[0]))))
    features = tf.train.Example.FromString(record.numpy()).features.feature
    assert len(features["input_ids"].int64_list.value) == 64 and len(features["masked_lm_ids"].int64_list.value) == 10
