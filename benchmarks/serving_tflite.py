"""Exports of a fine-tuned classifier against its float32 SavedModel: accuracy, size, batch 1.

  python benchmarks/serving_tflite.py --model_dir=/tmp/minilm --train_sentences=2048 \
      --eval_sentences=1000

Fine-tunes `--model_dir` on BBC News sentences (5 topics, one epoch, `TextClassifier.fit`
on strings), writes the classifier's model directory, exports it as the raw-text SavedModel
in float32 and bfloat16 and as `.tflite` float32 and dynamic-range int8, and reports for each:
held-out accuracy, argmax agreement with the float32 SavedModel, the largest logit difference,
size, and batch-1 latency p50/p99 over the held-out sentences one at a time, the systems timed
in turns (rounds of 10 requests each) so other load falls on all alike. Run by hand, never as a
test (`tests/export/test_finetuned_exports.py` runs `export_rows` on a small split).
"""

import os
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == _HERE:
    sys.path[0] = os.path.dirname(_HERE)

import numpy as np  # noqa: E402


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


SYSTEMS = ("saved_model float32", "saved_model bfloat16", "tflite none", "tflite dynamic_int8")


def export_rows(classifier_dir, texts, labels, work_dir, batch_size=32, latency_requests=0,
                num_threads=2, systems=SYSTEMS):
    """Accuracy (and batch-1 latency) of each export in `systems` (the first is the reference).

    Returns:
      One dict per system: accuracy, agreement (argmax equal to the SavedModel's),
      max_abs_logit_diff, megabytes, and with `latency_requests` p50_ms / p99_ms.
    """
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
    logits = {name: np.concatenate([run(texts[i:i + batch_size])
                                    for i in range(0, len(texts), batch_size)])
              for name, run in runners.items()}
    labels = np.asarray(labels)
    reference = logits[systems[0]]
    rows = []
    for name, values in logits.items():
        path = paths[name]
        size = (sum(os.path.getsize(os.path.join(root, f)) for root, _, files in os.walk(path)
                    for f in files) if os.path.isdir(path) else os.path.getsize(path))
        rows.append({"system": name, "sentences": len(texts),
                     "accuracy": float(np.mean(values.argmax(-1) == labels)),
                     "agreement": float(np.mean(values.argmax(-1) == reference.argmax(-1))),
                     "max_abs_logit_diff": float(np.abs(values - reference).max()),
                     "megabytes": size / 1e6})
    if latency_requests:
        times = {name: [] for name in runners}
        for name, run in runners.items():
            run(texts[:1])  # warm-up
        for start in range(0, latency_requests, 10):  # rounds of 10 requests, in turns
            for name, run in runners.items():
                for text in texts[start:start + 10]:
                    begin = time.perf_counter()
                    run([text])
                    times[name].append(time.perf_counter() - begin)
        for row in rows:
            row["p50_ms"] = 1e3 * float(np.percentile(times[row["system"]], 50))
            row["p99_ms"] = 1e3 * float(np.percentile(times[row["system"]], 99))
    return rows


def main(argv):
    import json

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
                                  num_threads=f.num_threads):
        print(json.dumps({k: round(v, 4) if isinstance(v, float) else v
                          for k, v in row.items()}), flush=True)


if __name__ == "__main__":
    from absl import app, flags

    flags.DEFINE_string("model_dir", None, "A model directory to fine-tune (e.g. the converted "
                        "MiniLM).", required=True)
    flags.DEFINE_integer("train_sentences", 2048, "BBC News sentences to fine-tune on.")
    flags.DEFINE_integer("eval_sentences", 1000, "Held-out BBC News sentences to score.")
    flags.DEFINE_integer("latency_requests", 200, "Batch-1 requests timed per system (0: none).")
    flags.DEFINE_integer("num_threads", 2, "TFLite interpreter threads.")
    flags.DEFINE_string("work_dir", None, "Where the classifier and exports go (a fine-tuned "
                        "classifier there is reused).")
    app.run(main)
