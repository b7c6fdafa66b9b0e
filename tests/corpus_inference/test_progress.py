"""The progress of a corpus run: worker counts in files, summed by the launcher with an ETA."""

import gzip
import os

from bert_tf.corpus_inference import progress
from bert_tf.corpus_inference.writers import remove_partial


def test_progress_reads_as_lines_rate_and_eta():
    assert str(progress.Progress(120, 3000, 10.0)) == "120/3,000 lines, 12.0 lines/s, ETA 4 min 0 s"
    assert str(progress.Progress(5, None, 2.0)) == "5 lines, 2.5 lines/s"
    assert progress.Progress(0, 10, 1.0).eta_seconds is None


def test_the_watcher_sums_the_workers_files_against_the_counted_inputs(tmp_path):
    text, packed = tmp_path / "a.txt", tmp_path / "b.txt.gz"
    text.write_text("one\ntwo\n\nfour\n")
    packed.write_bytes(gzip.compress(b"five\nsix\nseven"))  # no newline at the end
    output = tmp_path / "out"
    output.mkdir()
    seen = []
    watcher = progress.Watcher(str(output), [str(text), str(packed)], seen.append,
                               interval=3600)
    for lines in (3, 2):
        progress.ProgressFile(str(output)).add(lines)
    watcher.stop()
    assert [(p.lines, p.total_lines) for p in seen] == [(5, 7)]
    remove_partial(str(output))
    assert os.listdir(output) == []


def test_no_total_for_an_input_that_is_not_a_file_and_none_without_a_callback(tmp_path):
    fifo = tmp_path / "in.txt"
    os.mkfifo(fifo)
    seen = []
    watcher = progress.Watcher(str(tmp_path), [str(fifo)], seen.append, interval=3600)
    progress.ProgressFile(str(tmp_path)).add(4)
    watcher.stop()
    assert [(p.lines, p.total_lines) for p in seen] == [(4, None)]
    progress.Watcher(str(tmp_path), [str(fifo)], None).stop()
