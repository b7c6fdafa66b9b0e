"""Exports of a fine-tuned classifier against its float32 SavedModel: accuracy, size, batch 1.

  python benchmarks/serving_tflite.py --model_dir=/tmp/minilm --train_sentences=2048 \
      --eval_sentences=1000 --ref_python=.venv-ref/bin/python

Fine-tunes `--model_dir` on BBC News sentences (5 topics, one epoch, `TextClassifier.fit`
on strings), writes the classifier's model directory, exports it as the raw-text SavedModel
in float32 and bfloat16 and as `.tflite` float32 and dynamic-range int8, and reports for each:
held-out accuracy, argmax agreement with the float32 SavedModel, the largest logit difference,
size, and batch-1 latency p50/p99 over the held-out sentences one at a time, the systems timed
in turns (rounds of 10 requests each) so other load falls on all alike.

Beside them, the same classifier as ONNX Runtime's users deploy it (issue 46: int8 accuracy
within a point of the peer's): written as a Hugging Face `BertForSequenceClassification`
folder, exported from PyTorch, optimized, and quantized to int8 (`serving_systems.onnx_graph`),
scored with the folder's fast tokenizer at the same sequence length by
`benchmarks/ort_classifier.py` in `--ref_python` (the dev-only `.venv-ref`; without it those
rows carry an "error" saying why). They have no latency: batch 1 against ONNX Runtime is
`benchmark.py --what=serving`'s. Run by hand, never as a test
(`tests/export/test_finetuned_exports.py` runs `export_rows` on a small split).
"""

import json
import os
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == _HERE:
    sys.path[0] = os.path.dirname(_HERE)

import numpy as np  # noqa: E402

from benchmarks import REPO_ROOT  # noqa: E402
from benchmarks.export import directory_bytes  # noqa: E402
from benchmarks.peer_process import PeerError, peer_json_rows, require_peer_python  # noqa: E402

# The ONNX Runtime systems, by the `serving_systems.onnx_graph` stage each scores.
ORT_STAGES = {"onnxruntime optimized": "optimized", "onnxruntime int8": "int8"}
SYSTEMS = ("saved_model float32", "saved_model bfloat16", "tflite none", "tflite dynamic_int8",
           *ORT_STAGES)
REF_PYTHON = os.path.join(REPO_ROOT, ".venv-ref", "bin", "python")
ORT_SCRIPT = os.path.join(REPO_ROOT, "benchmarks", "ort_classifier.py")


def fine_tune_classifier(model_dir, output_dir, texts, labels, label_names, seq_length=64,
                         batch_size=32, epochs=1):
    """Fine-tunes the encoder of `model_dir` as a classifier; writes `output_dir`."""
    from bert_tf.keras_tasks.text_classifier import TextClassifier

    classifier = TextClassifier.from_pretrained(
        model_dir, num_classes=len(label_names), max_seq_length=seq_length,
        label_names=label_names)
    classifier.fit(list(texts), np.asarray(labels, np.int32), batch_size=batch_size,
                   epochs=epochs, verbose=0)
    classifier.save_model_dir(output_dir)
    return output_dir


def _saved_model_runner(path):
    import tensorflow as tf

    serve = tf.saved_model.load(path).signatures["serving_default"]
    return lambda texts: serve(text=tf.constant(texts))["logits"].numpy()


def _tflite_runner(path, num_threads):
    from bert_tf.export.tflite import tflite_interpreter

    runner = tflite_interpreter(model_path=path, num_threads=num_threads).get_signature_runner()
    return lambda texts: runner(text=np.array(texts, dtype=object))["logits"]


def _tensorflow_runners(classifier_dir, work_dir, systems, num_threads):
    """(paths, runners) of the SavedModel and TFLite exports in `systems`, by system."""
    from bert_tf.export.exporter import export_saved_model
    from bert_tf.export.tflite import export_tflite

    paths, runners = {}, {}
    for name in systems:
        kind, variant = name.split()
        if kind == "saved_model":
            paths[name] = export_saved_model(classifier_dir, os.path.join(work_dir, variant),
                                             "classifier", dtype=variant)
            runners[name] = _saved_model_runner(paths[name])
        else:
            paths[name] = os.path.join(work_dir, f"classifier_{variant}.tflite")
            export_tflite(classifier_dir, paths[name], "classifier", quantization=variant)
            runners[name] = _tflite_runner(paths[name], num_threads)
    return paths, runners


def onnxruntime_logits(classifier_dir, texts, work_dir, systems, ref_python, num_threads=2,
                       batch_size=32):
    """{system: (graph path, logits)} of the ONNX Runtime `systems` (keys of `ORT_STAGES`).

    The classifier is written as a Hugging Face folder here (TensorFlow); `ORT_SCRIPT` exports,
    optimizes, quantizes and runs it in `ref_python`, which has torch, transformers and
    onnxruntime, truncating at the classifier's export length as the SavedModel does.

    Raises:
      PeerError: `ref_python` does not exist, or the script failed (its last stderr line).
    """
    from bert_tf.checkpoints import export_huggingface_checkpoint
    from bert_tf.export.exporter import export_seq_length

    peer, needs = "ONNX Runtime peer", "torch, transformers and onnxruntime"
    require_peer_python(ref_python, peer, needs)  # before the Hugging Face folder is written
    hf_dir = os.path.join(work_dir, "hf")
    export_huggingface_checkpoint(classifier_dir, hf_dir)
    texts_file = os.path.join(work_dir, "texts.json")
    with open(texts_file, "w", encoding="utf-8") as f:
        json.dump(list(texts), f)
    arguments = [f"--hf_dir={hf_dir}", f"--texts_file={texts_file}",
                 f"--work_dir={os.path.join(work_dir, 'onnx')}",
                 f"--seq_length={export_seq_length(classifier_dir, 'classifier')}",
                 f"--threads={num_threads}", f"--batch_size={batch_size}",
                 *(f"--stage={ORT_STAGES[name]}" for name in systems)]
    rows = peer_json_rows(ref_python, ORT_SCRIPT, arguments, peer, needs)
    stages = {row["stage"]: row for row in rows}
    return {name: (stages[ORT_STAGES[name]]["graph"],
                   np.load(stages[ORT_STAGES[name]]["logits"])) for name in systems}


def _score_row(name, path, logits, reference, labels):
    """A system's row: accuracy, agreement with and largest logit gap to `reference`, size."""
    return {"system": name, "sentences": len(labels),
            "accuracy": float(np.mean(logits.argmax(-1) == labels)),
            "agreement": float(np.mean(logits.argmax(-1) == reference.argmax(-1))),
            "max_abs_logit_diff": float(np.abs(logits - reference).max()),
            "megabytes": (directory_bytes(path) if os.path.isdir(path)
                          else os.path.getsize(path)) / 1e6}


def _add_latency(rows, runners, texts, requests):
    """Adds batch-1 p50_ms / p99_ms to the rows of `runners`, timed in turns (rounds of 10)."""
    times = {name: [] for name in runners}
    for run in runners.values():
        run(texts[:1])  # warm-up
    for start in range(0, requests, 10):
        for name, run in runners.items():
            for text in texts[start:start + 10]:
                begin = time.perf_counter()
                run([text])
                times[name].append(time.perf_counter() - begin)
    for row in rows:
        if row["system"] in times:
            row["p50_ms"] = 1e3 * float(np.percentile(times[row["system"]], 50))
            row["p99_ms"] = 1e3 * float(np.percentile(times[row["system"]], 99))


def export_rows(classifier_dir, texts, labels, work_dir, batch_size=32, latency_requests=0,
                num_threads=2, systems=SYSTEMS, ref_python=REF_PYTHON):
    """Accuracy (and batch-1 latency) of each export in `systems` (the first, a SavedModel or
    TFLite one, is the reference).

    Args:
      ref_python: the Python that runs the ONNX Runtime systems (`onnxruntime_logits`).

    Returns:
      One dict per system, in order: accuracy, agreement (argmax equal to the reference's),
      max_abs_logit_diff, megabytes, and with `latency_requests` p50_ms / p99_ms (SavedModel
      and TFLite only); an ONNX Runtime system whose peer did not run has only an "error".
    """
    ort_systems = [name for name in systems if name in ORT_STAGES]
    paths, runners = _tensorflow_runners(
        classifier_dir, work_dir, [name for name in systems if name not in ORT_STAGES],
        num_threads)
    outputs = {name: (paths[name], np.concatenate([run(texts[i:i + batch_size])
                                                   for i in range(0, len(texts), batch_size)]))
               for name, run in runners.items()}
    errors = {}
    if ort_systems:
        try:
            outputs.update(onnxruntime_logits(classifier_dir, texts, work_dir, ort_systems,
                                              ref_python, num_threads, batch_size))
        except PeerError as error:
            errors = dict.fromkeys(ort_systems, str(error))
    labels, reference = np.asarray(labels), outputs[systems[0]][1]
    rows = [_score_row(name, *outputs[name], reference, labels) if name in outputs
            else {"system": name, "error": errors[name]} for name in systems]
    if latency_requests:
        _add_latency(rows, runners, texts, latency_requests)
    return rows


def main(argv):
    from absl import flags

    from benchmarks.real_sentences import bbc_news_sentences

    del argv
    f = flags.FLAGS
    sentences, labels, names = bbc_news_sentences(f.train_sentences + f.eval_sentences)
    work_dir = f.work_dir or tempfile.mkdtemp(prefix="bert_tf_tflite_")
    classifier_dir = os.path.join(work_dir, "classifier")
    if not os.path.exists(classifier_dir):
        begin = time.perf_counter()
        fine_tune_classifier(f.model_dir, classifier_dir, sentences[:f.train_sentences],
                             labels[:f.train_sentences], names)
        print(json.dumps({"fine_tuned_s": round(time.perf_counter() - begin, 1),
                          "classifier_dir": classifier_dir}), flush=True)
    for row in export_rows(classifier_dir, sentences[f.train_sentences:],
                                  labels[f.train_sentences:], os.path.join(work_dir, "runs",
                                                                           str(os.getpid())),
                                  latency_requests=f.latency_requests,
                                  num_threads=f.num_threads, ref_python=f.ref_python):
        print(json.dumps({k: round(v, 4) if isinstance(v, float) else v
                          for k, v in row.items()}), flush=True)


if __name__ == "__main__":
    from absl import app, flags

    flags.DEFINE_string("model_dir", None, "A model directory to fine-tune (e.g. the converted "
                        "MiniLM).", required=True)
    flags.DEFINE_integer("train_sentences", 2048, "BBC News sentences to fine-tune on.")
    flags.DEFINE_integer("eval_sentences", 1000, "Held-out BBC News sentences to score.")
    flags.DEFINE_integer("latency_requests", 200, "Batch-1 requests timed per system (0: none).")
    flags.DEFINE_integer("num_threads", 2, "TFLite interpreter and ONNX Runtime threads.")
    flags.DEFINE_string("ref_python", REF_PYTHON, "A Python with torch, transformers and "
                        "onnxruntime for the ONNX Runtime rows (missing: they say so).")
    flags.DEFINE_string("work_dir", None, "Where the classifier and exports go (a fine-tuned "
                        "classifier there is reused).")
    app.run(main)
