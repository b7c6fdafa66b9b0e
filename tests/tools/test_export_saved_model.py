"""tools/export_saved_model.py as a user runs it: every bad input refused, nothing overwritten."""

import os

import pytest

from tests.entry_points import assert_user_error, call_entry_point, snapshot

TOOL = "tools/export_saved_model.py"

@pytest.mark.parametrize("flags, fragments", [
    ([], ["--head", "required"]),
    (["--head=ner"], ["--head"]),
    (["--task=classifier"], ["cannot be exported as --head=classifier", "holds encoder"]),
    (["--head=encoder", "--seq_length=1000"], ["seq_length must be in 3..64"]),
    (["--head=encoder", "--version=0"], ["--version"]),
    (["--head=encoder", "--tf_serving_version=1.15"], ["No op list for TF Serving 1.15"]),
    (["--head=encoder", "extra"], ["unexpected argument(s) ['extra']"]),
])
def test_bad_flags(tiny_model_dir, tmp_path, flags, fragments):
    before = snapshot(tiny_model_dir)
    result = call_entry_point(TOOL, f"--model_dir={tiny_model_dir}",
                      f"--export_dir={tmp_path / 'export'}", *flags)
    assert_user_error(result, *fragments)
    assert not (tmp_path / "export").exists() or os.listdir(tmp_path / "export") == []
    assert snapshot(tiny_model_dir) == before


@pytest.mark.parametrize("model_dir_fixture, fragments", [
    ("damaged_model_dir", ["model.ckpt is damaged or half-written"]),
    ("nan_model_dir", ["pooler/bias", "NaN or Inf"]),
])
def test_unusable_checkpoints(request, model_dir_fixture, fragments, tmp_path):
    model_dir = request.getfixturevalue(model_dir_fixture)
    result = call_entry_point(TOOL, f"--model_dir={model_dir}", "--head=encoder",
                      f"--export_dir={tmp_path / 'export'}")
    assert_user_error(result, *fragments)


def test_missing_model_dir(tmp_path):
    result = call_entry_point(TOOL, f"--model_dir={tmp_path / 'nope'}", "--head=encoder",
                      f"--export_dir={tmp_path / 'export'}")
    assert_user_error(result, str(tmp_path / "nope"))


def test_existing_version_is_kept_byte_for_byte(tiny_model_dir, tmp_path):
    version = tmp_path / "export" / "1"
    version.mkdir(parents=True)
    (version / "saved_model.pb").write_bytes(b"old export")
    before = snapshot(str(tmp_path / "export"))
    result = call_entry_point(TOOL, f"--model_dir={tiny_model_dir}", "--head=encoder",
                              f"--export_dir={tmp_path / 'export'}", "--version=1")
    assert_user_error(result, "already exists; nothing was overwritten")
    assert snapshot(str(tmp_path / "export")) == before
