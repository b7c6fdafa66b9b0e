"""Sentence-transformers folders written here, and conversions that keep a folder's pooling.

The reference is sentence-transformers itself: dev/make_sentence_transformers_written_fixture.py
had bert_tf write each variant, loaded it with `SentenceTransformer` and kept its embeddings and
the written files' digests (tests/testdata/sentence_transformers/written/). Here the variants
are written again: the same files must come out, and `SentenceEncoder.from_pretrained` of them
must compute sentence-transformers' embeddings.
"""

import importlib.util
import json
import os
import shutil

import numpy as np
import pytest
from safetensors.numpy import load_file

from bert_tf.checkpoints import load_pretrained, write_sentence_transformers_folder
from bert_tf.checkpoints.convert import convert_checkpoint
from bert_tf.checkpoints.huggingface.sentence_transformers import (
    SentencePooling,
    read_sentence_pooling,
)
from bert_tf.checkpoints.huggingface.tokenizer_files import write_tokenizer_files
from bert_tf.checkpoints.model_dir import MODEL_INFO_NAME
from bert_tf.checkpoints.tokenizer_json import read_folder_vocab
from bert_tf.errors import CheckpointError, UserError
from bert_tf.file_io import OutputExistsError
from bert_tf.keras_tasks import SentenceEncoder
from bert_tf.models import BertEncoder
from bert_tf.tokenization import vocab as vocab_lib
from tests.entry_points import REPO, call_entry_point
from tests.fixtures import CASED_VOCAB, TESTDATA, write_tiny_model_dir

WRITTEN = os.path.join(TESTDATA, "sentence_transformers", "written")
# Largest difference to sentence-transformers' embeddings (float32, MiniLM).
TOLERANCE = 1e-5


def _dev_script():
    path = os.path.join(REPO, "dev", "make_sentence_transformers_written_fixture.py")
    spec = importlib.util.spec_from_file_location("written_fixture", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def reference():
    """`(sentences, {variant: sentence-transformers' embeddings}, {variant: files record})`."""
    saved = np.load(os.path.join(WRITTEN, "embeddings.npz"))
    with open(os.path.join(WRITTEN, "files.json"), encoding="utf-8") as f:
        files = json.load(f)["variants"]
    return [str(s) for s in saved["sentences"]], dict(saved), files


def _embed(folder, sentences, **kwargs):
    model = SentenceEncoder.from_pretrained(folder, **kwargs)
    return model, model.predict(sentences, verbose=0)


@pytest.mark.parametrize("variant", ["converted", "cls_token_16"])
def test_sentence_transformers_loads_what_is_written(minilm_hf_dir, reference, variant,
                                                     tmp_path):
    sentences, embeddings, files = reference
    dev = _dev_script()
    folder = str(tmp_path / variant)
    dev.write_variant(variant, minilm_hf_dir, folder)
    assert dev.file_digests(folder) == files[variant]["files"], (
        "the written files changed: check them with sentence-transformers "
        "(dev/make_sentence_transformers_written_fixture.py)")
    model, ours = _embed(folder, sentences)
    assert model.preprocessor.seq_length == files[variant]["max_seq_length"]
    np.testing.assert_allclose(ours, embeddings[variant], atol=TOLERANCE, rtol=0)


def test_a_model_directory_keeps_max_seq_length_pooling_and_normalization(
        minilm_hf_dir, reference, tmp_path):
    # MiniLM is mean + Normalize at 256 tokens; its long line embeds differently at 128.
    sentences, embeddings, files = reference
    model_dir = str(tmp_path / "model_dir")
    convert_checkpoint(None, minilm_hf_dir, "model_dir", model_dir)
    model, ours = _embed(model_dir, sentences)
    assert (model.pooling, model.normalize, model.preprocessor.seq_length) == ("mean", True, 256)
    np.testing.assert_allclose(ours, embeddings["converted"], atol=TOLERANCE, rtol=0)
    # Back to a Hugging Face or sentence-transformers folder: the files sentence-transformers
    # loaded as the model, and MiniLM's weights.
    original = load_file(os.path.join(minilm_hf_dir, "model.safetensors"))
    for target in ("huggingface", "sentence_transformers"):
        folder = str(tmp_path / target)
        convert_checkpoint(None, model_dir, target, folder)
        assert _dev_script().file_digests(folder) == files["converted"]["files"], target
        for name, value in load_file(os.path.join(folder, "model.safetensors")).items():
            np.testing.assert_array_equal(value, original[name], err_msg=name)


def test_a_folder_saved_by_sentence_transformers_6_is_read(minilm_hf_dir, tmp_path):
    # Its newer layout: longer module types, `pooling_mode`, max_seq_length in the tokenizer.
    saved = os.path.join(TESTDATA, "sentence_transformers", "saved_by_sentence_transformers")
    shutil.copytree(saved, tmp_path / "saved")
    for name in ("model.safetensors", "vocab.txt", "tokenizer.json"):
        os.symlink(os.path.join(minilm_hf_dir, name), tmp_path / "saved" / name)
    assert read_sentence_pooling(str(tmp_path / "saved")) == SentencePooling("mean", True, 256)
    assert load_pretrained(str(tmp_path / "saved")).max_seq_length == 256


@pytest.mark.parametrize("mode", ["weightedmean", ["mean", "max"]])
def test_a_pooling_mode_bert_tf_does_not_run_is_refused(tmp_path, mode):
    saved = os.path.join(TESTDATA, "sentence_transformers", "saved_by_sentence_transformers")
    shutil.copytree(saved, tmp_path / "saved")
    with open(tmp_path / "saved" / "1_Pooling" / "config.json", "w") as f:
        json.dump({"embedding_dimension": 384, "pooling_mode": mode}, f)
    with pytest.raises(CheckpointError, match="is not a pooling bert_tf runs"):
        read_sentence_pooling(str(tmp_path / "saved"))


def test_a_keras_hub_preset_keeps_max_seq_length_and_names_the_pooling_it_drops(
        minilm_hf_dir, tmp_path, caplog):
    preset = str(tmp_path / "preset")
    with caplog.at_level("WARNING"):
        convert_checkpoint(None, minilm_hf_dir, "keras_hub", preset)
    assert ("holds no sentence pooling: " f"{minilm_hf_dir}'s mean pooling and normalization is "
            "not written") in caplog.text
    assert load_pretrained(preset).max_seq_length == 256


@pytest.fixture(scope="module")
def cased_model_dir(tmp_path_factory):
    """A tiny cased encoder (tests/fixtures.py), no pooling recorded."""
    folder = str(tmp_path_factory.mktemp("cased") / "model")
    write_tiny_model_dir(folder)
    return folder


def test_a_plain_encoder_is_written_mean_pooled_and_normalized(cased_model_dir, tmp_path):
    folder = str(tmp_path / "st")
    write_sentence_transformers_folder(load_pretrained(cased_model_dir), folder)
    # 128 tokens capped at the tiny position table.
    assert read_sentence_pooling(folder) == SentencePooling("mean", True, 64)
    vocab = read_folder_vocab(folder)
    assert vocab.tokens == vocab_lib.load_vocab(CASED_VOCAB) and vocab.lower_case is False
    assert np.allclose(_embed(folder, ["Hello there."])[1], _embed(cased_model_dir,
                                                                   ["Hello there."])[1])


def test_a_sentence_encoders_settings_are_written(cased_model_dir, tmp_path):
    encoder = SentenceEncoder.from_pretrained(cased_model_dir, pooling="max", normalize=False,
                                              max_seq_length=24)
    folder = write_sentence_transformers_folder(encoder, str(tmp_path / "st"))
    assert read_sentence_pooling(folder) == SentencePooling("max", False, 24)
    # The arguments override the model's.
    folder = write_sentence_transformers_folder(encoder, str(tmp_path / "st2"),
                                                pooling="cls_token", max_seq_length=20)
    assert read_sentence_pooling(folder) == SentencePooling("cls_token", False, 20)


def test_a_sentence_encoders_model_directory_keeps_its_pooling(cased_model_dir, tmp_path):
    encoder = SentenceEncoder.from_pretrained(cased_model_dir, pooling="max", normalize=False,
                                              max_seq_length=24)
    encoder.save_model_dir(str(tmp_path / "saved"))
    back = SentenceEncoder.from_pretrained(str(tmp_path / "saved"))
    assert (back.pooling, back.normalize, back.preprocessor.seq_length) == ("max", False, 24)


def test_what_sentence_transformers_cannot_load_is_refused(cased_model_dir, tmp_path):
    encoder = SentenceEncoder.from_pretrained(cased_model_dir, pooling="cls")
    with pytest.raises(CheckpointError, match="pooling 'cls' is not one sentence-transformers"):
        write_sentence_transformers_folder(encoder, str(tmp_path / "cls"))
    with pytest.raises(UserError, match="needs the model's vocab and casing"):
        write_sentence_transformers_folder(BertEncoder(encoder.encoder.config),
                                           str(tmp_path / "bare"))
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(OutputExistsError):
        write_sentence_transformers_folder(encoder, str(tmp_path / "full"))
    encoder = SentenceEncoder.from_pretrained(cased_model_dir)  # beside a run's other files:
    write_sentence_transformers_folder(encoder, str(tmp_path / "full"), exist_ok=True)
    assert read_sentence_pooling(str(tmp_path / "full")) == SentencePooling("mean", True, 64)


def test_a_task_head_is_left_out_with_a_warning(tmp_path, caplog):
    model_dir = str(tmp_path / "classifier")
    write_tiny_model_dir(model_dir, head="classifier")
    with caplog.at_level("WARNING"):
        convert_checkpoint(None, model_dir, "sentence_transformers", str(tmp_path / "st"))
    assert "classifier head is not written" in caplog.text
    assert load_pretrained(str(tmp_path / "st")).head == "encoder"


def test_a_damaged_model_info_pooling_is_one_line(tmp_path):
    folder = tmp_path / "model"
    write_tiny_model_dir(str(folder), info={"sentence_pooling": {"pooling": "mean"}})
    with pytest.raises(CheckpointError, match=f"{MODEL_INFO_NAME}: `sentence_pooling` must be"):
        load_pretrained(str(folder))


@pytest.mark.parametrize("lower_case", [True, False])
def test_tokenizer_json_reads_back(tmp_path, lower_case):
    tokens = vocab_lib.load_vocab(CASED_VOCAB)
    write_tokenizer_files(str(tmp_path), tokens, lower_case, model_max_length=64)
    os.remove(tmp_path / "vocab.txt")  # transformers 5 reads tokenizer.json alone
    vocab = read_folder_vocab(str(tmp_path))
    assert (vocab.tokens, vocab.lower_case) == (tokens, lower_case)


def test_convert_checkpoint_writes_a_sentence_transformers_folder(cased_model_dir, tmp_path):
    folder = tmp_path / "st"
    result = call_entry_point("tools/convert_checkpoint.py", f"--input={cased_model_dir}",
                              "--to=sentence_transformers", f"--output_dir={folder}")
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"wrote {folder} (sentence_transformers)" in result.stdout
    assert read_sentence_pooling(str(folder)) == SentencePooling("mean", True, 64)
    assert sorted(os.listdir(folder)) == [
        "1_Pooling", "2_Normalize", "config.json", "model.safetensors", "modules.json",
        "sentence_bert_config.json", "special_tokens_map.json", "tokenizer.json",
        "tokenizer_config.json", "vocab.txt"]
