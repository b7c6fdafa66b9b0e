"""A peer's script run in the peer's own Python (the dev-only `.venv-ref`): its JSON rows, or
one line saying why there are none."""

import json
import os
import subprocess

from benchmarks import REPO_ROOT


class PeerError(RuntimeError):
    """The peer did not run; the message says why in one line."""


def require_peer_python(ref_python, peer, needs):
    """Raises `PeerError` unless `ref_python` exists (`peer`, `needs`: as `peer_json_rows`)."""
    if not ref_python or not os.path.exists(ref_python):
        raise PeerError(f"no {peer}: --ref_python {ref_python} does not exist (a Python with "
                        f"{needs}, e.g. .venv-ref/bin/python)")


def peer_json_rows(ref_python, script, arguments, peer, needs):
    """The JSON lines that `script` prints, run by `ref_python` from the repository root.

    Args:
      peer: the peer's name in messages ("peer", "ONNX Runtime peer").
      needs: what `ref_python` must have, for the message when it is missing.

    Raises:
      PeerError: `ref_python` does not exist, or the script failed (its last stderr line).
    """
    require_peer_python(ref_python, peer, needs)
    result = subprocess.run([ref_python, script, *arguments], cwd=REPO_ROOT,
                            capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=REPO_ROOT))
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise PeerError(f"{peer} failed (exit {result.returncode}): {last}")
    return [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
