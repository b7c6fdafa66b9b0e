"""`make demo` on a fresh clone: a clean venv with the package's own install, no extras; and
every tool from a non-editable install.

The test extras (safetensors, apache-beam, pytest) are in this test's own venv; the demo must
not need them. A missing install step fails here, not on a user's first command.
"""

import glob
import json
import os
import re
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.subprocess]  # a fresh clone and a fresh install

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# What each program's --helpshort must list (the one test of --helpshort in the suite).
FINETUNING_FLAGS = ("output_dir", "model_dir", "train_batch_size", "do_train")
HELP_FLAGS = {
    "tools/build_vocab.py": ("input_file", "output_file", "vocab_size"),
    "tools/convert_checkpoint.py": ("from", "do_lower_case", "output_dir"),
    "tools/create_pretraining_data.py": ("input_file", "output_file", "vocab_file"),
    "tools/export_saved_model.py": ("head", "task", "seq_length"),
    "tools/export_tflite.py": ("head", "quantization", "output"),
    "tools/export_onnx.py": ("model", "head", "text_input", "quantize", "opset"),
    "tools/extract_features.py": ("output_file", "do_lower_case"),
    "tools/fill_mask.py": ("model_dir", "top_k"),
    "tools/predict.py": ("model", "head", "long_lines", "doc_stride", "output_format",
                         "text_column", "beam_pipeline_options"),
    "tools/prepare_corpus.py": ("input_file", "heldout_every"),
    "tools/prepare_text_folders.py": ("input_dir", "dev_fraction"),
    "run_pretraining": ("train_batch_size", "num_train_steps"),
    "run_sentence_embeddings": ("init_checkpoint", "train_file", "loss", "matryoshka_dims"),
    "run_classifier": (*FINETUNING_FLAGS, "task_name", "text_a_column", "metrics"),
    "run_squad": (*FINETUNING_FLAGS, "doc_stride", "version_2_with_negative"),
    "run_ner": (*FINETUNING_FLAGS, "label_column", "dev_fraction"),
    "run_multiple_choice": (*FINETUNING_FLAGS, "train_file", "dev_file"),
}


def test_make_demo_runs_on_a_fresh_clone_without_extras(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", ROOT, str(clone)], check=True, timeout=120)
    env = {key: value for key, value in os.environ.items()
           if key not in ("VIRTUAL_ENV", "PYTHONPATH", "TF_CPP_MIN_LOG_LEVEL")}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                  if not p.startswith(os.path.join(ROOT, ".venv")))
    short = ("--output_dir=short_demo --num_train_steps=4 --num_warmup_steps=1 "
             "--steps_per_loop=2 --save_checkpoints_steps=4 --eval_every_steps=0 "
             "--max_eval_steps=1")
    result = subprocess.run(["make", "demo", f"DEMO_FLAGS={short}"], cwd=clone, env=env,
                            capture_output=True, text=True, timeout=1500, stdin=subprocess.DEVNULL)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert "Traceback" not in output
    freeze = subprocess.run([str(clone / ".venv" / "bin" / "python"), "-m", "pip", "freeze"],
                            capture_output=True, text=True, check=True).stdout.lower()
    for extra in ("safetensors", "pytest", "apache-beam"):
        assert extra not in freeze, f"{extra} was installed: the demo venv must be extras-free"
    assert "step 4/4" in output and "Held-out evaluation at step 4" in output
    # --dtype=auto: bfloat16 where the CPU has it natively, float32 elsewhere.
    assert "This run took" in output and re.search(r"(bfloat16|float32) matmul rate:", output)
    assert "cpu_feature_guard" not in output and "oneDNN" not in output  # a quiet console
    assert (clone / "short_demo" / "model.ckpt.index").exists()
    assert (clone / "short_demo" / "learning_curve.png").exists()


# Runs in one interpreter on the installed copy (PYTHONPATH=site only, cwd outside the checkout):
# prints where bert_tf was imported from, then each program's `--helpshort` as
# tests/entry_points.py's `call_entry_point` gives it (flags defined afresh each time), with a
# tool's own folder first on sys.path as `python tools/x.py` has it. One TensorFlow start-up
# instead of one per program; each program's own interpreter start is tested by its tests.
HELPSHORT_ALL = """
import importlib.util, json, os, sys
import bert_tf
from bert_tf.export import op_audit
print(json.dumps([bert_tf.__file__, os.path.isdir(os.path.dirname(op_audit.__file__))]))
spec = importlib.util.spec_from_file_location("entry_points", sys.argv[1])
entry_points = importlib.util.module_from_spec(spec)
spec.loader.exec_module(entry_points)
for target in sys.argv[2:]:
    sys.path.insert(0, os.path.dirname(target) if target.endswith(".py") else os.getcwd())
    run = entry_points.call_entry_point(target, "--helpshort")
    del sys.path[0]
    print(json.dumps([target, run.returncode, run.stdout, run.stderr]))
"""


def test_every_tool_and_entry_point_starts_from_a_non_editable_install(tmp_path):
    # `pip install .` (a built wheel, not the checkout): shipped code must not reach for the
    # source tree (tools/, official_configs/, tests/) and must carry its package data.
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--target", str(site), ROOT],
                   check=True, timeout=600, capture_output=True)
    env = {**os.environ, "PYTHONPATH": str(site), "TF_CPP_MIN_LOG_LEVEL": "2"}
    assert os.path.exists(os.path.join(site, "bert_tf", "data", "corpus", "kjv_vocab.txt"))
    tools = sorted(os.path.relpath(path, ROOT)
                   for path in glob.glob(os.path.join(ROOT, "tools", "*.py")))
    programs = {**dict.fromkeys(tools, ()), **HELP_FLAGS}
    targets = {name: os.path.join(ROOT, name) if name.startswith("tools/") else f"bert_tf.{name}"
               for name in programs}
    result = subprocess.run([sys.executable, "-c", HELPSHORT_ALL,
                             os.path.join(ROOT, "tests", "entry_points.py"), *targets.values()],
                            cwd=tmp_path, env=env, timeout=600, capture_output=True, text=True,
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-3000:]
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    where, is_dir = lines[0]
    assert where.startswith(str(site)) and is_dir, lines[0]  # the installed copy, not the checkout
    runs = {target: (returncode, stdout, stderr)
            for target, returncode, stdout, stderr in lines[1:]}
    assert list(runs) == list(targets.values())
    for name, flag_names in programs.items():
        returncode, stdout, stderr = runs[targets[name]]
        output = stdout + stderr
        assert returncode == 0 and "Traceback" not in output, (name, output[-2000:])
        assert re.search(r"^\s+--\w+", output, re.M), (name, output[-2000:])
        for flag_name in flag_names:
            assert re.search(rf"--(\[no\])?{flag_name}\b", stdout), (name, flag_name,
                                                                     output[-2000:])
