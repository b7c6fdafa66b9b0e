"""The one list of checkpoint formats bert_tf reads and writes, and the lookups over it.

`FORMATS` lists one `Format` per module, explicitly (no registration by import side effect);
`detect_format`, `describe_folder`, `read_pretrained` and `convert.convert_checkpoint` go
through it, so nothing outside `bert_tf/checkpoints/` names a format. The first format whose
`recognise` accepts a path is its format (the test over the list checks that no fixture is
recognised by two). To add a format: `checkpoints/ADDING_A_FORMAT.md`.

Example:
>>> detect_format("all-MiniLM-L6-v2/").name              # doctest: +SKIP
'huggingface'
>>> print(describe_folder("bert-sst2/"))                 # doctest: +SKIP
bert-sst2/: Hugging Face folder, safetensors (model.safetensors)
  architecture: BertForSequenceClassification (bert_tf head: classifier)
  head: 2 outputs, labels negative, positive (single_label_classification)
  vocab: bert-sst2/vocab.txt (30522 tokens), lower case
>>> weights = read_pretrained("bert-sst2/").weights     # doctest: +SKIP
"""

import os

from bert_tf.checkpoints import (
    google_research,
    huggingface,
    keras_file,
    keras_hub,
    model_dir,
    model_garden,
    tf_hub,
)
from bert_tf.errors import CheckpointError

# Every format, in the order `detect_format` tries them.
FORMATS = (
    model_dir.FORMAT,
    google_research.FORMAT,
    huggingface.FORMAT,
    keras_file.FORMAT,
    tf_hub.FORMAT,
    keras_hub.FORMAT,
    model_garden.FORMAT,
)
# Formats bert_tf writes that `detect_format` never names, since another format reads them:
# a sentence-transformers folder is a Hugging Face folder (its pooling read with it).
TARGETS = (huggingface.SENTENCE_TRANSFORMERS,)


def find_format(name):
    """The `Format` (or write-only target) called `name` (or one of its `aliases`).

    Raises:
      CheckpointError: no such format; the known names are listed.
    """
    for entry in FORMATS + TARGETS:
        if name in entry.names:
            return entry
    known = [n for entry in FORMATS + TARGETS for n in entry.names]
    raise CheckpointError(f"Unknown checkpoint format {name!r}: bert_tf knows "
                          f"{', '.join(known)}.")


def detect_format(path):
    """The `Format` of `path` (a folder, a file or a TF checkpoint prefix), from its file
    names and small files.

    Raises:
      FileNotFoundError: no such path.
      CheckpointError: a path no format reads (what the folder holds is listed), or one
        plainly of a format that bert_tf refuses (a pickle-only Hugging Face folder).
    """
    path = os.fspath(path)
    for entry in FORMATS:
        if entry.recognise(path):
            return entry
    if os.path.isfile(path):
        raise CheckpointError(f"{path} is a file; pass its folder (or a `.keras` file or a "
                              "TF checkpoint prefix).")
    if not os.path.isdir(path):
        raise FileNotFoundError(f"No such checkpoint folder: {path}")
    layouts = "; ".join(f"{entry.title} ({entry.layout})" for entry in FORMATS)
    raise CheckpointError(f"{path} is not a checkpoint folder bert_tf reads: expected one "
                          f"of: {layouts}; it holds {sorted(os.listdir(path))[:10]}.")


def describe_folder(path):
    """A `FolderDescription` of `path` (what its format's `describe` finds), no weights read.

    Raises:
      FileNotFoundError: no such path, or a file the layout needs.
      CheckpointError: not a layout bert_tf reads, or small files that contradict each other
        (one line, naming the file).
    """
    description = detect_format(path).describe(os.fspath(path))
    if description.vocab_size is None and description.vocab and os.path.isfile(
            description.vocab):
        with open(description.vocab, "rb") as f:
            description.vocab_size = sum(1 for line in f if line.strip())
    return description


def read_pretrained(path, do_lower_case=None, **options):
    """Reads `path`, of any format in `FORMATS`, into a `Pretrained`: its config, numpy
    weights and vocab, no model built (`building.load_pretrained` adds the models).

    Args:
      path: the checkpoint folder (or file, or TF checkpoint prefix).
      do_lower_case: the caller's casing, checked against the folder's record; None takes it
        (else a guess from the vocab, with a warning).
      **options: the format's own `read` options (`Format.options`).

    Raises:
      FileNotFoundError: no such folder, or a file its format needs (the vocab).
      CheckpointError: not a checkpoint bert_tf reads, damaged or unlike its config, or a
        casing that contradicts the folder's record.
    """
    path = os.fspath(path).rstrip(os.sep) or os.sep
    pretrained = detect_format(path).read(path, do_lower_case=do_lower_case, **options)
    _check_vocab_fits(pretrained, path)
    return pretrained


def _check_vocab_fits(pretrained, path):
    """Refuses a vocab with more tokens than the embedding table has rows: its last ids would
    fail at the first request that meets them (GatherV2), or read zeros on a GPU."""
    vocab, rows = pretrained.vocab, pretrained.config.vocab_size
    if vocab is not None and len(vocab.tokens) > rows:
        raise CheckpointError(
            f"{vocab.vocab_file or vocab.where or path}: {len(vocab.tokens)} tokens, but the "
            f"checkpoint's word-embedding table has {rows} rows (vocab_size); use the vocab "
            "that came with these weights.")
