"""Peak memory of the Beam pipeline on a corpus replicated 10x stays near the 1x run's.

A 300-document slice of the shipped corpus (about 7,000 sentences) keeps the test under a
minute. The DirectRunner keeps each stage's output in memory (about 4 KB per output record),
so the bound holds while the records are small next to the process's TensorFlow and Beam.
"""

import gzip
import os
import subprocess
import sys

import pytest

from tests.data.conftest import TRAIN, VOCAB
from bert_tf.data import document_reader

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Runs the pipeline in a fresh process and prints that process's peak resident memory (KiB).
_RUN = """
import resource, sys
from bert_tf.data import create_pretraining_data as cpd
cpd.create_pretraining_data(sys.argv[1], sys.argv[2], cpd.Options(vocab_file=sys.argv[3], dupe_factor=2),
                            num_output_shards=2)
print("peak_rss_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _peak_rss_kib(inputs, output):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", _RUN, inputs, output, VOCAB], capture_output=True, text=True,
                            env=env, timeout=300, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr[-2000:]
    return int(result.stdout.split("peak_rss_kib")[-1])


@pytest.mark.slow
def test_peak_memory_of_10x_corpus_within_1_5x(tmp_path):
    documents = []
    for document in document_reader.read_documents([TRAIN]):
        documents.append("\n".join(document.sentences) + "\n\n")
        if len(documents) == 300:
            break
    text = "".join(documents)
    for copy in range(10):
        with gzip.open(tmp_path / f"copy{copy}.txt.gz", "wt", encoding="utf-8") as f:
            f.write(text)
    once = _peak_rss_kib(str(tmp_path / "copy0.txt.gz"), str(tmp_path / "once" / "r"))
    ten_times = _peak_rss_kib(str(tmp_path / "copy*.txt.gz"), str(tmp_path / "ten" / "r"))
    assert ten_times <= 1.5 * once, (once, ten_times)
