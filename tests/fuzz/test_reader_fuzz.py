"""Every reader of user files, fed damaged and hostile versions of valid fixtures: it returns or
raises a `UserError`, nothing else (no traceback, no hang: the profile's deadline bounds each
case). Profiles: tests/fuzz/conftest.py; `make fuzz` runs 10,000 cases per reader."""

import gzip
import io
import json
import os
import shutil

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bert_tf import file_io
from bert_tf.configs import BertConfig
from bert_tf.errors import UserError
from bert_tf.finetuning.table_reader import read_rows

TESTDATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "testdata")
HF_CONFIG = os.path.join(TESTDATA, "tiny_hf_pretraining", "config.json")
# Checkpoint folders of every format the registry reads, each with the files a user may get
# damaged (an interrupted download, a half-written copy).
CHECKPOINTS = {
    "huggingface": ("tiny_hf_pretraining", ["config.json", "model.safetensors", "vocab.txt"]),
    "sentence_transformers": ("sentence_transformers/as_shipped", ["modules.json"]),
    "keras_hub": ("keras_hub/backbone", ["config.json", "metadata.json", "model.weights.h5"]),
    "model_garden": ("model_garden/encoder", ["bert_config.json", "vocab.txt",
                                              "bert_model.ckpt.index",
                                              "bert_model.ckpt.data-00000-of-00001"]),
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=30)


# A damage: ("cut", where) keeps the bytes before `where` (a fraction of the length);
# ("flip", [(where, mask)...]) xors bytes; ("insert", [(where, bytes)...]) puts bytes in.
damages = st.one_of(
    st.tuples(st.just("cut"), st.floats(0, 1)),
    st.tuples(st.just("flip"), st.lists(st.tuples(st.floats(0, 1), st.integers(1, 255)),
                                        min_size=1, max_size=8)),
    st.tuples(st.just("insert"), st.lists(st.tuples(st.floats(0, 1), st.binary(min_size=1,
                                                                               max_size=16)),
                                          min_size=1, max_size=8)))


def damaged(data, damage):
    """`data` with `damage` (one of `damages`) done to it."""
    how, detail = damage
    if how == "cut":
        return data[:int(len(data) * detail)]
    data = bytearray(data)
    for where, change in detail:
        at = min(int(len(data) * where), len(data) - 1)
        if how == "flip" and data:
            data[at] ^= change
        elif how == "insert":
            data[at:at] = change
    return bytes(data)


def _only_user_errors(read, *args, **kwargs):
    try:
        read(*args, **kwargs)
    except UserError as error:
        assert "\n" not in str(error).strip(), str(error)  # one line


def _read(path):
    with open(path, "rb") as f:
        return f.read()


@given(st.one_of(json_values.map(lambda v: json.dumps(v).encode()),
                 st.integers(1, 50_000).map(lambda n: b"[" * n + b"]" * n),
                 st.integers(1, 50_000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
                 damages.map(lambda damage: damaged(_read(HF_CONFIG), damage))))
@example(b"[" * 100_000 + b"]" * 100_000)
@example(b'{"hidden_size": 1e999}')
def test_json_config_readers(tmp_path_factory, data):
    path = str(tmp_path_factory.mktemp("json") / "config.json")
    with open(path, "wb") as f:
        f.write(data)
    _only_user_errors(file_io.read_json_object, path)
    _only_user_errors(BertConfig.from_json_file, path)


@given(st.binary(max_size=3000), st.integers(1, 64), st.integers(1, 64))
def test_bounded_lines_keep_every_line_whole_or_cut_to_the_limit(data, max_bytes, chunk_bytes):
    lines = list(file_io.bounded_lines(io.BytesIO(data), max_bytes, chunk_bytes))
    expected = [line.removesuffix(b"\r") for line in data.split(b"\n")]
    expected = expected[:-1] if not expected[-1] and data.endswith(b"\n") or not data else expected
    assert len(lines) == len(expected)
    for (line, cut), whole in zip(lines, expected):
        assert line == whole if not cut else (whole.startswith(line) and len(line) <= max_bytes)


def _corpus_files():
    text = "".join(f"line {i}: ünïcode and words\n" for i in range(200)).encode()
    jsonl = "".join(json.dumps({"text": f"row {i}", "id": i}) + "\n" for i in range(100)).encode()
    return {"a.txt.gz": gzip.compress(text), "b.jsonl": jsonl, "c.txt": text}


@given(st.sampled_from(sorted(_corpus_files())), damages)
def test_corpus_line_reader(tmp_path_factory, name, damage):
    from bert_tf.corpus_inference.readers import LineReader

    path = str(tmp_path_factory.mktemp("corpus") / name)
    with open(path, "wb") as f:
        f.write(damaged(_corpus_files()[name], damage))
    _only_user_errors(lambda: list(LineReader(id_column="id" if "jsonl" in name else None,
                                              max_line_bytes=256).lines(path)))


def _parquet_file():
    import pyarrow
    import pyarrow.parquet as parquet

    buffer = io.BytesIO()
    parquet.write_table(pyarrow.table({"text": [f"row {i}" for i in range(300)]}), buffer)
    return buffer.getvalue()


@given(damages)
# Once failed: pyarrow's message of a damaged page header ran over two lines.
@example(("insert", [(0.0, b"\x00" * 4)]))
def test_corpus_parquet_reader(tmp_path_factory, damage):
    pytest.importorskip("pyarrow")
    from bert_tf.corpus_inference.readers import LineReader

    path = str(tmp_path_factory.mktemp("parquet") / "in.parquet")
    with open(path, "wb") as f:
        f.write(damaged(_parquet_file(), damage))
    _only_user_errors(lambda: list(LineReader().lines(path)))


_TABLES = {"train.tsv": b"sentence\tlabel\nA fine film.\t1\nDull.\t0\n",
           "train.csv": b'sentence,label\n"A fine, long film.",1\nDull.,0\n',
           "train.jsonl": b'{"sentence": "A fine film.", "label": 1}\n'
                          b'{"sentence": "x", "label": 0}\n'}


@given(st.sampled_from(sorted(_TABLES)), damages)
def test_fine_tuning_table_reader(tmp_path_factory, name, damage):
    path = str(tmp_path_factory.mktemp("table") / name)
    with open(path, "wb") as f:
        f.write(damaged(_TABLES[name], damage))
    _only_user_errors(read_rows, path, ["sentence", "label"])


@pytest.mark.parametrize("source", sorted(CHECKPOINTS))
@settings(max_examples=4)  # each case reads a whole checkpoint; `make fuzz` runs 10,000
@given(file_index=st.integers(0, 3), damage=damages)
# Cases that once failed: a data file cut short (Model Garden: IndexError from TensorFlow's
# reader), bytes flipped inside an HDF5 file (keras-hub: h5py's RuntimeError), a vocab that is
# not UTF-8 (Model Garden's described vocab size: UnicodeDecodeError).
@example(file_index=3, damage=("cut", 0.5))
@example(file_index=2, damage=("flip", [(0.02, 0x55), (0.021, 0x55), (0.022, 0x55)]))
@example(file_index=1, damage=("flip", [(0.0, 0x80)]))
def test_checkpoint_readers(tmp_path_factory, source, file_index, damage):
    """A folder of each format with one file damaged: described and read, or refused."""
    from bert_tf.checkpoints import registry

    folder_name, files = CHECKPOINTS[source]
    folder = str(tmp_path_factory.mktemp(source) / "folder")
    shutil.copytree(os.path.join(TESTDATA, folder_name), folder)
    name = files[file_index % len(files)]
    with open(os.path.join(folder, name), "wb") as f:
        f.write(damaged(_read(os.path.join(TESTDATA, folder_name, name)), damage))
    _only_user_errors(registry.describe_folder, folder)
    _only_user_errors(registry.read_pretrained, folder, do_lower_case=True)
