"""Logits of a fine-tuned classifier under ONNX Runtime, as the peer's users deploy it.

Not for direct use: `benchmarks/serving_tflite.py` runs it with the dev-only `.venv-ref` Python
(torch, transformers, onnxruntime) on a Hugging Face `BertForSequenceClassification` folder
that it wrote from bert_tf's classifier, so its TensorFlow venv needs none of them. For each
`--stage` (`serving_systems.onnx_graph`: exported, optimized, int8) it saves the logits of the
texts, tokenized by the folder's fast tokenizer, and prints one JSON line:
  {"stage": "int8", "graph": ".../classifier_int8.onnx", "logits": ".../int8_logits.npy"}
Only the standard library at the top, so a Python without the peer's packages fails naming
the missing one (its last stderr line is what serving_tflite.py reports).
"""

import argparse
import json
import os
import sys

# The repository root in place of this folder (see benchmark.py), so `benchmarks.*` imports.
_HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == _HERE:
    sys.path[0] = os.path.dirname(_HERE)

STAGES = ("exported", "optimized", "int8")


def stage_logits(hf_dir, texts, work_dir, stage, seq_length, threads, batch_size):
    """(graph path, logits) of the classifier's `stage` graph over `texts`, in batches."""
    import numpy as np

    from benchmarks.serving_systems import onnx_graph, onnxruntime_runner

    path = onnx_graph(hf_dir, work_dir, stage, head="classifier")
    run = onnxruntime_runner(path, hf_dir, seq_length, threads)
    return path, np.concatenate([run(texts[i:i + batch_size])
                                 for i in range(0, len(texts), batch_size)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hf_dir", required=True, help="a BertForSequenceClassification folder")
    parser.add_argument("--texts_file", required=True, help="JSON list of the texts")
    parser.add_argument("--work_dir", required=True, help="where graphs and logits go")
    parser.add_argument("--stage", action="append", choices=STAGES, required=True)
    parser.add_argument("--seq_length", type=int, required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch_size", type=int, default=32)
    args = parser.parse_args()
    import numpy as np

    with open(args.texts_file, encoding="utf-8") as f:
        texts = json.load(f)
    os.makedirs(args.work_dir, exist_ok=True)
    for stage in args.stage:
        path, logits = stage_logits(args.hf_dir, texts, args.work_dir, stage, args.seq_length,
                                    args.threads, args.batch_size)
        logits_file = os.path.join(args.work_dir, f"{stage}_logits.npy")
        np.save(logits_file, logits)
        print(json.dumps({"stage": stage, "graph": path, "logits": logits_file}), flush=True)


if __name__ == "__main__":
    main()
