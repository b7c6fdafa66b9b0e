"""Peak memory of the Beam pipeline on the shipped corpus replicated 10x stays within 1.5x of 1x.

Records travel from the work unit that makes them to their shard as sorted run
files (`sorted_runs`), so memory holds one NotNext bucket's records (about 1,000
documents), not the corpus's. The 1x corpus (1,129 documents) is one bucket; 10x
is eleven. What still grows is the runner's copy of the text and token ids, a
small fraction of the records.
"""

import gzip
import os
import subprocess
import sys

import pytest

from tests.data.conftest import TRAIN, VOCAB

pytestmark = pytest.mark.beam  # runs the records pipeline on Beam

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

# Runs the pipeline in a fresh process and prints that process's peak resident memory (KiB).
_RUN = """
import resource, sys
from bert_tf.data.records import create_pretraining_data as cpd
from bert_tf.data.records.record_options import Options

result = cpd.create_pretraining_data(sys.argv[1], sys.argv[2], Options(vocab_file=sys.argv[3],
dupe_factor=2),
                                     num_output_shards=2)
print("instances", result["instances"], "peak_rss_kib",
resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _run(inputs, output):
    """(instances, peak RSS in KiB) of one run in a fresh process."""
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", _RUN, inputs, output, VOCAB],
                            capture_output=True, text=True, env=env, timeout=600,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr[-2000:]
    words = result.stdout.split()
    return int(words[words.index("instances") + 1]), int(words[words.index("peak_rss_kib") + 1])


@pytest.mark.subprocess
@pytest.mark.slow
def test_peak_memory_of_10x_corpus_within_1_5x(tmp_path):
    with gzip.open(TRAIN, "rt", encoding="utf-8") as f:
        text = f.read().rstrip("\n") + "\n\n"
    for copy in range(10):
        (tmp_path / f"copy{copy}.txt").write_text(text, encoding="utf-8")
    once, once_kib = _run(str(tmp_path / "copy0.txt"), str(tmp_path / "once" / "r"))
    ten_times, ten_times_kib = _run(str(tmp_path / "copy*"), str(tmp_path / "ten" / "r"))
    assert 9 * once < ten_times < 11 * once  # the corpus really is ten times larger
    assert ten_times_kib <= 1.5 * once_kib, (once_kib, ten_times_kib)
