"""`make demo` on a fresh clone: a clean venv with the package's own install, no extras.

The test extras (safetensors, apache-beam, pytest) are in this test's own venv; the demo must
not need them. A missing install step fails here, not on a user's first command.
"""

import os
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.mark.slow
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
    assert "This run took" in output and "bfloat16 matmul rate:" in output
    assert "cpu_feature_guard" not in output and "oneDNN" not in output  # a quiet console
    assert (clone / "short_demo" / "model.ckpt.index").exists()
    assert (clone / "short_demo" / "learning_curve.png").exists()
