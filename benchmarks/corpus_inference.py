"""tools/predict.py's pipeline on one worker vs the raw-text SavedModel (`--what=corpus`).

Both read the same lines in arrival order (the held-out corpus, long lines kept) and run the
model at `batch_size`. The SavedModel (`export_saved_model(head="encoder")`, loaded, one
warm-up call) takes the lines as they come, batch after batch: what a hand-written loop over a
served model does. `predict_corpus` runs the whole pipeline on the DirectRunner with one worker
(reading, RunInference with its length-sorted windows, JSON lines shards), model load and
tracing included, as a user's run pays them; the in-process `Predictor` (warm) shows the model
side alone. `overhead_ms_per_line` is the pipeline's time per line above the SavedModel's.
Never a test.
"""

import os
import tempfile
import time

import tensorflow as tf

from bert_tf.corpus_inference.corpus_predictions import predict_corpus
from bert_tf.corpus_inference.predictor import Predictor, PredictSettings
from bert_tf.corpus_inference.readers import Line
from bert_tf.dtype_policy import measured_matmul_flops
from bert_tf.export import export_saved_model


def _saved_model_seconds(model_dir, lines, batch_size, seq_length, work_dir):
    path = export_saved_model(model_dir, os.path.join(work_dir, "export"), "encoder",
                              seq_length=seq_length)
    signature = tf.saved_model.load(path).signatures["serving_default"]
    (name,) = signature.structured_input_signature[1]

    def run():
        for start in range(0, len(lines), batch_size):
            for output in signature(**{name: tf.constant(lines[start:start
                                                               + batch_size])}).values():
                output.numpy()

    run()  # warm-up: every request width traced once
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def _predictor_seconds(predictor, lines):
    settings = predictor.settings
    batch = [Line(str(i), text, (0, i)) for i, text in enumerate(lines)]
    window = 8 * settings.batch_size  # as model_handler.WINDOW_BATCHES
    windows = [batch[start:start + window] for start in range(0, len(batch), window)]
    for part in windows:  # warm-up
        predictor.predict(part)
    start = time.perf_counter()
    for part in windows:
        predictor.predict(part)
    return time.perf_counter() - start


def benchmark_corpus(model_dir, lines, batch_size=128):
    """Rows of lines/s for the SavedModel loop, the warm `Predictor` and the whole pipeline."""
    settings = PredictSettings(model=model_dir, head="encoder", batch_size=batch_size)
    with tempfile.TemporaryDirectory() as work_dir:
        corpus = os.path.join(work_dir, "corpus.txt")
        with open(corpus, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        predictor = Predictor(settings)  # the same packed length on both sides
        saved_model = _saved_model_seconds(model_dir, lines, batch_size,
                                           predictor.preprocessor.seq_length, work_dir)
        predictor = _predictor_seconds(predictor, lines)
        start = time.perf_counter()
        stats = predict_corpus(corpus, os.path.join(work_dir, "out"), settings, "jsonl",
                               beam_pipeline_options="runner=DirectRunner,direct_num_workers=1")
        pipeline = time.perf_counter() - start
    rows = [
        {
            "what": "corpus",
            "system": "SavedModel serving_default, arrival order",
            "lines_per_s": len(lines) / saved_model,
        },
        {
            "what": "corpus",
            "system": "Predictor (warm, no Beam)",
            "lines_per_s": len(lines) / predictor,
        },
        {
            "what": "corpus",
            "system": "tools/predict pipeline, DirectRunner, 1 worker",
            "lines_per_s": len(lines) / pipeline,
            "pipeline_run_s": stats["seconds"],
            "overhead_ms_per_line": 1000 * (pipeline - saved_model) / len(lines),
        },
    ]
    matmul_gflops = measured_matmul_flops("float32") / 1e9  # the machine's rate beside the times
    for row in rows:
        row.update(lines=len(lines), batch_size=batch_size, float32_matmul_gflops=matmul_gflops)
    return rows
