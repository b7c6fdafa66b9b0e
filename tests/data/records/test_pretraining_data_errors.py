"""create_pretraining_data on bad input: clear errors, no partial shards that look complete."""

import glob
import gzip
import logging

import pytest

from bert_tf.data import document_reader
from bert_tf.data.records import create_pretraining_data as cpd
from bert_tf.data.records.record_options import Options, check_options
from tests.data.conftest import HELDOUT, VOCAB

pytestmark = pytest.mark.beam  # runs the records pipeline on Beam


def _run(tmp_path, inputs, **options):
    return cpd.create_pretraining_data(inputs, str(tmp_path / "out" / "records.tfrecord"),
                                       Options(vocab_file=VOCAB, dupe_factor=1, **options))


def test_empty_inputs(tmp_path):
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "blank.txt").write_text("\n\n  \n")
    with pytest.raises(document_reader.InputError, match="got 0 document"):
        _run(tmp_path, f"{tmp_path}/empty.txt,{tmp_path}/blank.txt")
    assert glob.glob(str(tmp_path / "out" / "*")) == []


def test_one_huge_document_is_cut_and_used(tmp_path, caplog):
    with gzip.open(HELDOUT, "rt") as f:
        sentences = [line for line in f if line.strip()]
    (tmp_path / "flat.txt").write_text("".join(sentences))
    with caplog.at_level(logging.WARNING):
        result = _run(tmp_path, str(tmp_path / "flat.txt"), max_document_sentences=100)
    assert "cut into pieces" in caplog.text
    assert result["documents"] == -(-len(sentences) // 100) and result["instances"] > 100


def test_single_short_document(tmp_path):
    (tmp_path / "one.txt").write_text("Only one sentence here.\n")
    with pytest.raises(document_reader.InputError, match="at least two documents"):
        _run(tmp_path, str(tmp_path / "one.txt"))


def test_documents_without_tokens_are_skipped(tmp_path):
    # Control characters only: valid UTF-8, but no WordPieces; a doc shorter than one sentence.
    (tmp_path / "docs.txt").write_text(
        "\x01\x02\n\nA real sentence.\n\nAnother one here.\n\n\x03\n")
    result = _run(tmp_path, str(tmp_path / "docs.txt"))
    assert result["documents"] == 2 and result["empty_documents"] == 2


def test_invalid_utf8_lines_are_skipped(tmp_path, caplog):
    (tmp_path / "mixed.txt").write_bytes(b"Good text.\n\xc3\x28 bad\n\nMore good text.\n")
    with caplog.at_level(logging.WARNING):
        result = _run(tmp_path, str(tmp_path / "mixed.txt"))
    assert result["sentences"] == 2
    assert "mixed.txt:2: skipping line that is not UTF-8" in caplog.text


def test_max_predictions_too_small_warns(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        check_options(Options(vocab_file=VOCAB, max_seq_length=128, max_predictions_per_seq=5))
    assert "max_predictions_per_seq=5 caps masking" in caplog.text
    assert "Use max_predictions_per_seq >= 19" in caplog.text
    with pytest.raises(ValueError, match="max_predictions_per_seq must be at least 1"):
        _run(tmp_path, HELDOUT, max_predictions_per_seq=0)


def test_unwritable_output(tmp_path):
    (tmp_path / "a_file").write_text("")
    with pytest.raises(ValueError, match="cannot write output file .*a_file/records"):
        cpd.create_pretraining_data(HELDOUT, str(tmp_path / "a_file" / "records"),
                                    Options(vocab_file=VOCAB))


def test_failure_leaves_no_shard(tmp_path):
    (tmp_path / "a.txt").write_text("First document.\n\nSecond document.\n")
    (tmp_path / "b.txt.gz").write_bytes(b"not gzip")
    with pytest.raises(document_reader.InputError, match="b.txt.gz"):
        cpd.create_pretraining_data(f"{tmp_path}/a.txt,{tmp_path}/b.txt.gz",
                                    str(tmp_path / "out" / "r"), Options(vocab_file=VOCAB),
                                    num_output_shards=2)
    assert glob.glob(str(tmp_path / "out" / "*")) == []


def test_bad_shard_counts(tmp_path):
    with pytest.raises(ValueError, match="num_output_shards must be at least 1, got 0"):
        cpd.create_pretraining_data(HELDOUT, str(tmp_path / "r"), Options(vocab_file=VOCAB),
                                    num_output_shards=0)
    with pytest.raises(ValueError, match="lists 2 files but --num_output_shards=3"):
        cpd.output_paths("a,b", 3)
