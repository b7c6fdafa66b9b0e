"""One serving system in its own process, for `benchmarks/benchmark.py --what=serving`.

Not for direct use: the benchmark starts one worker per system (the PyTorch and ONNX Runtime
ones with the dev-only `.venv-ref` Python) and sends it one JSON request per line on stdin:
  {"batch_size": 32}  serve every full batch of the lines in order → {"seconds": s}
  {"latency": 200}    serve the first 200 lines one at a time   → {"seconds": [s, ...]}
Answers are JSON lines on stdout. Only argparse and the standard library at the top, so it
starts in a venv without TensorFlow or absl.
"""

import argparse
import json
import os
import sys
import time

# The repository root in place of this folder (see benchmark.py), so `benchmarks.*` imports.
_HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == _HERE:
    sys.path[0] = os.path.dirname(_HERE)

from benchmarks.serving_systems import SYSTEMS, build_system  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", required=True, choices=SYSTEMS)
    parser.add_argument("--model_dir", required=True)
    parser.add_argument("--hf_dir", required=True)
    parser.add_argument("--lines_file", required=True, help="JSON list of the lines, in order")
    parser.add_argument("--work_dir", required=True)
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    with open(args.lines_file, encoding="utf-8") as f:
        lines = json.load(f)
    os.makedirs(args.work_dir, exist_ok=True)
    serve = build_system(args.system, args.model_dir, args.hf_dir, args.seq_length,
                         args.work_dir, args.threads)
    print(json.dumps({"ready": args.system}), flush=True)
    for request in sys.stdin:
        request = json.loads(request)
        if "batch_size" in request:
            size = request["batch_size"]
            batches = [lines[i:i + size] for i in range(0, len(lines) - size + 1, size)]
            start = time.perf_counter()
            for batch in batches:
                serve(batch)
            answer = {"seconds": time.perf_counter() - start}
        else:
            times = []
            for line in lines[:request["latency"]]:
                start = time.perf_counter()
                serve([line])
                times.append(time.perf_counter() - start)
            answer = {"seconds": times}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
