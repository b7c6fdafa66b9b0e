"""export_saved_model: versions, clear errors, nothing overwritten or left behind."""

import os

import pytest

from bert_tf.export import exporter, op_audit
from tests.entry_points import assert_user_error, call_entry_point
from tests.export.conftest import RoundRobinModule, write_tiny_model_dir

TOOL = "tools/export_saved_model.py"


@pytest.fixture(scope="module")
def encoder_only_dir(tmp_path_factory):
    model_dir = str(tmp_path_factory.mktemp("encoder_only"))
    write_tiny_model_dir(model_dir, "encoder")
    return model_dir


def test_missing_head_is_a_clear_error(encoder_only_dir, tmp_path):
    export_dir = str(tmp_path / "export")
    with pytest.raises(ValueError, match=r"cannot be exported as --head=classifier: .* has no "
                                         r"head \(it holds encoder"):
        exporter.export_saved_model(encoder_only_dir, export_dir, "classifier")
    with pytest.raises(ValueError, match="has no masked_lm"):
        exporter.export_saved_model(encoder_only_dir, export_dir, "pretrainer")
    assert not os.path.exists(export_dir)


def test_existing_version_is_not_overwritten(tiny_classifier):
    model_dir, export_path = tiny_classifier
    export_dir, version = os.path.split(export_path)
    saved_model = os.path.join(export_path, "saved_model.pb")
    before = (os.path.getmtime(saved_model), os.path.getsize(saved_model))
    with pytest.raises(FileExistsError, match=r"1 already exists; nothing was overwritten"):
        exporter.export_saved_model(model_dir, export_dir, "classifier", version=int(version))
    assert (os.path.getmtime(saved_model), os.path.getsize(saved_model)) == before
    assert sorted(os.listdir(export_dir)) == ["1"]
    assert exporter.existing_versions(export_dir) == [1]


def test_unknown_head_and_release_fail_before_any_work(encoder_only_dir, tmp_path):
    with pytest.raises(ValueError, match="Unknown head 'ner'; choose one of encoder, pretrainer"):
        exporter.export_saved_model(encoder_only_dir, str(tmp_path), "ner")
    with pytest.raises(ValueError, match="No op list for TF Serving 1.15"):
        exporter.export_saved_model(encoder_only_dir, str(tmp_path), "encoder",
                                    tf_serving_version="1.15")
    with pytest.raises(ValueError, match="seq_length must be in 3..64"):
        exporter.export_saved_model(encoder_only_dir, str(tmp_path), "encoder", seq_length=65)
    assert os.listdir(tmp_path) == []


def test_failed_audit_leaves_nothing_behind(encoder_only_dir, tmp_path, monkeypatch):
    export_dir = str(tmp_path)
    os.makedirs(os.path.join(export_dir, "3"))  # TF Serving's highest version so far
    monkeypatch.setattr(exporter, "build_export_module", lambda *args: RoundRobinModule())
    # The export goes to the next version, 4, and stops there.
    with pytest.raises(op_audit.OpAuditError, match=r"/4 stopped, nothing was written: .* "
                                                    r"TFText>RoundRobinTrim \(used in"):
        exporter.export_saved_model(encoder_only_dir, export_dir, "encoder")
    assert os.listdir(export_dir) == ["3"]


def test_cli_reports_an_existing_version_without_a_stack_trace(tiny_classifier):
    model_dir, export_path = tiny_classifier
    export_dir, version = os.path.split(export_path)
    result = call_entry_point(TOOL, f"--model_dir={model_dir}", f"--export_dir={export_dir}",
                              "--task=classifier", f"--version={version}")
    assert_user_error(result, "Export version", "already exists; nothing was overwritten")


def test_cli_reports_an_export_dir_that_is_a_file_in_one_line(encoder_only_dir, tmp_path):
    taken = tmp_path / "export"
    taken.write_text("not a folder")
    result = call_entry_point(TOOL, f"--model_dir={encoder_only_dir}", f"--export_dir={taken}",
                              "--task=encoder")
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.stderr.strip() == (f"export_saved_model: error: export_dir {taken} is a file, "
                                     "not a folder; give the folder that TF Serving reads "
                                     "versions from (it is created if missing).")
    assert taken.read_text() == "not a folder"
