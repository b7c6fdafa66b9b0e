"""Hugging Face task folders (BertFor*, PyTorch safetensors and TF h5) against transformers.

The fixtures and references are dev/make_hf_task_fixtures.py's (transformers 4.57.6);
`pretraining_sharded_tf` is `pretraining_tf` re-written as transformers 4 shards it
(dev/make_sharded_tf_fixture.py).
"""

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import huggingface
from bert_tf.checkpoints.building import with_models
from bert_tf.checkpoints.tokenizer_json import read_folder_vocab, write_vocab
from bert_tf.errors import CheckpointError
from tests.checkpoints.conftest import edit_config, edit_safetensors, folder_of

IDS = ("input_ids", "attention_mask", "token_type_ids")

# (fixture, folder suffixes): every architecture in both formats, the variants in PyTorch.
FOLDERS = [(name, fmt) for name in ("bert_model", "pretraining", "masked_lm",
                                    "sequence_classification", "token_classification",
                                    "question_answering", "multiple_choice")
           for fmt in ("pt", "tf")] + [
    ("multi_label_classification", "pt"), ("regression", "pt"),
    ("sequence_classification", "sharded_pt"), ("pretraining", "sharded_tf")]
# (fixture, single-file suffix, sharded suffix): the same model saved both ways.
SHARDED = [("sequence_classification", "pt", "sharded_pt"), ("pretraining", "tf", "sharded_tf")]


def load_huggingface_task(folder):
    """The Hugging Face reader's `Pretrained` of `folder`, its models built on first use."""
    return with_models(huggingface.read(folder))


def run_task(task, ids):
    """The bert_tf model of `task` on reference ids: {output name: numpy}, like transformers'."""
    inputs = {"input_word_ids": ids["input_ids"], "input_mask": ids["attention_mask"],
              "input_type_ids": ids["token_type_ids"]}
    if task.head == "encoder":
        outputs = task.build_model()(inputs)
        return {"last_hidden_state": outputs["sequence_output"].numpy(),
                "pooler_output": outputs["pooled_output"].numpy()}
    if task.head == "pretrainer":
        batch, length = ids["input_ids"].shape
        positions = np.tile(np.arange(length, dtype=np.int32), (batch, 1))
        outputs = task.build_model()(dict(inputs, masked_lm_positions=positions))
        if "next_sentence" not in task.heads:
            return {"logits": outputs["mlm_logits"].numpy()}
        return {"prediction_logits": outputs["mlm_logits"].numpy(),
                "seq_relationship_logits": outputs["nsp_logits"].numpy()}
    if task.head == "span_labeler":
        outputs = task.build_model()(inputs)
        return {name: outputs[name].numpy() for name in ("start_logits", "end_logits")}
    num_choices = ids["input_ids"].shape[1] if task.head == "multiple_choice" else None
    return {"logits": task.build_model(num_choices=num_choices)(inputs).numpy()}


@pytest.mark.parametrize("name, fmt", FOLDERS, ids=lambda value: value)
def test_outputs_match_transformers(name, fmt, references, meta):
    task = load_huggingface_task(folder_of(name, fmt))
    assert task.architecture == meta[name]["architecture"]
    ids = {key: references[f"{name}/{key}"] for key in IDS}
    outputs = run_task(task, ids)
    expected = {key.split("/", 1)[1] for key in references.files
                if key.startswith(name + "/") and key.split("/", 1)[1] not in IDS}
    assert set(outputs) == expected
    real = ids["attention_mask"].astype(bool)
    for key, value in outputs.items():
        reference = references[f"{name}/{key}"]
        if value.shape[:2] == real.shape and value.ndim >= 2 and "choice" not in name:
            # Per-token outputs: padding carries no meaning (bert_tf's reads as zeros).
            value, reference = value[real], reference[real]
        np.testing.assert_allclose(value, reference, atol=1e-5, rtol=0, err_msg=key)


@pytest.mark.parametrize("name", ["sequence_classification", "multi_label_classification",
                                  "regression", "token_classification"])
def test_label_names_and_problem_types(name, meta):
    task = load_huggingface_task(folder_of(name))
    assert task.label_names == meta[name]["label_names"]
    assert task.problem_type == meta[name]["problem_type"]


def test_heads_and_poolers():
    heads = {name: load_huggingface_task(folder_of(name, "tf"))
             for name in ("bert_model", "pretraining", "masked_lm", "question_answering",
                          "multiple_choice")}
    assert {name: task.head for name, task in heads.items()} == {
        "bert_model": "encoder", "pretraining": "pretrainer", "masked_lm": "pretrainer",
        "question_answering": "span_labeler", "multiple_choice": "multiple_choice"}
    assert sorted(heads["pretraining"].heads) == ["masked_lm", "next_sentence"]
    assert sorted(heads["masked_lm"].heads) == ["masked_lm"]
    # transformers builds these without a pooler; the others hold one.
    assert not heads["masked_lm"].has_pooler and not heads["question_answering"].has_pooler
    assert heads["multiple_choice"].has_pooler and heads["multiple_choice"].num_labels == 1


def _all_weights(task):
    """The encoder's weights, then its task head's or pretraining heads'."""
    heads = [task.task_head] if task.task_head is not None else list(task.heads.values())
    return task.encoder.weights + [w for head in heads for w in head.weights]


@pytest.mark.parametrize("name, single, sharded", SHARDED)
def test_shards_read_as_the_single_file(name, single, sharded, references, run_encoder):
    one, split = (load_huggingface_task(folder_of(name, fmt)) for fmt in (single, sharded))
    assert (split.head, sorted(split.heads)) == (one.head, sorted(one.heads))
    for a, b in zip(_all_weights(one), _all_weights(split), strict=True):
        assert a.path == b.path
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.path)
    ids = {key: references[f"{name}/{key}"] for key in IDS}
    for a, b in zip(run_encoder(one.encoder, ids), run_encoder(split.encoder, ids)):
        np.testing.assert_array_equal(a, b)


def test_tokenizer_json_gives_the_vocab_txt_ids(tmp_path, references, meta):
    only_json = read_folder_vocab(folder_of("token_classification"))
    assert only_json.vocab_file is None and only_json.lower_case is False
    # The same tokens written as vocab.txt tokenize alike.
    with_txt = tmp_path / "with_txt"
    shutil.copytree(folder_of("token_classification"), with_txt)
    write_vocab(only_json.tokens, with_txt / "vocab.txt")
    from_txt = read_folder_vocab(str(with_txt))
    assert from_txt.tokens == only_json.tokens and from_txt.lower_case is False
    texts = ["John lives in London.", "Mary played a song in Paris!", "Wait, WHO wrote éa?"]
    ids = [vocab.preprocessor(False, seq_length=16)(tf.constant(texts))["input_word_ids"].numpy()
           for vocab in (only_json, from_txt)]
    np.testing.assert_array_equal(ids[0], ids[1])
    # ... and as transformers' tokenizer did for the reference.
    expected = references["token_classification/input_ids"]
    texts = [" ".join(words) for words in meta["token_classification"]["words"]]
    preprocessor = only_json.preprocessor(False, seq_length=16)
    found = preprocessor(tf.constant(texts))["input_word_ids"].numpy()
    np.testing.assert_array_equal(found[:, :expected.shape[1]], expected)


def test_tokenizer_json_casing_must_agree_with_tokenizer_config(tmp_path):
    folder = tmp_path / "tokens"
    shutil.copytree(folder_of("token_classification"), folder)
    path = folder / "tokenizer_config.json"
    config = json.loads(path.read_text())
    path.write_text(json.dumps(dict(config, do_lower_case=True)))
    with pytest.raises(CheckpointError, match="do_lower_case.*normalizer"):
        read_folder_vocab(str(folder))
    tokenizer = json.loads((folder / "tokenizer.json").read_text())
    tokenizer["normalizer"] = {"type": "BertNormalizer", "lowercase": True,
                               "strip_accents": False}
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer))
    with pytest.raises(CheckpointError, match="lower-cases without stripping accents"):
        read_folder_vocab(str(folder))


def _copy(tmp_path, name, fmt="pt"):
    folder = tmp_path / f"{name}_{fmt}"
    shutil.copytree(folder_of(name, fmt), folder)
    return str(folder)


def _one_line_error(folder, match):
    with pytest.raises(CheckpointError, match=match) as error:
        load_huggingface_task(folder)
    assert "\n" not in str(error.value)
    return str(error.value)


def test_unknown_architecture(tmp_path):
    folder = _copy(tmp_path, "sequence_classification")
    edit_config(folder, architectures=["BertForNextSentencePrediction"])
    message = _one_line_error(folder, "BertForNextSentencePrediction")
    assert os.path.join(folder, "config.json") in message


def test_head_of_the_wrong_shape(tmp_path):
    folder = _copy(tmp_path, "sequence_classification")
    edit_safetensors(folder, lambda t: t.update(
        {"classifier.weight": np.zeros([3, 5], np.float32)}))
    message = _one_line_error(folder, r"`classifier.weight` has shape \[3, 5\]")
    assert os.path.join(folder, "model.safetensors") in message


def test_missing_weights(tmp_path):
    folder = _copy(tmp_path, "token_classification")
    edit_safetensors(folder, lambda t: t.pop("classifier.bias"))
    _one_line_error(folder, "lacks tensor.*classifier.bias")
    folder = _copy(tmp_path, "question_answering")
    edit_safetensors(folder, lambda t: t.pop("qa_outputs.weight"))
    _one_line_error(folder, "lacks `qa_outputs.weight`, its task head")


def test_h5_errors_name_the_tf_weight(tmp_path):
    import h5py

    folder = _copy(tmp_path, "sequence_classification", "tf")
    with h5py.File(os.path.join(folder, "tf_model.h5"), "r+") as f:
        group = f["classifier"]
        name = [n for n in group.attrs["weight_names"] if n.endswith("kernel:0")][0]
        del group[name]
        group.create_dataset(name, data=np.zeros([5, 3], np.float32))
    message = _one_line_error(folder, r"tf_bert_for_sequence_classification/classifier/"
                                      r"kernel:0` has shape \[5, 3\]")
    assert os.path.join(folder, "tf_model.h5") in message
    with open(os.path.join(folder, "tf_model.h5"), "wb") as f:
        f.write(b"not hdf5")
    _one_line_error(folder, "not a readable HDF5 file")


def test_labels_unlike_the_head(tmp_path):
    folder = _copy(tmp_path, "sequence_classification")
    edit_config(folder, id2label={"0": "a", "1": "b"})
    _one_line_error(folder, r"`id2label` names ids \[0, 1\], but `classifier.weight` has 3")
    edit_config(folder, id2label={"0": "a", "1": "b", "2": "c"}, problem_type="regression")
    _one_line_error(folder, "problem_type")


def test_pooler_required_where_the_head_reads_it(tmp_path):
    folder = _copy(tmp_path, "multiple_choice")
    edit_safetensors(folder, lambda t: [t.pop(k) for k in list(t) if "pooler" in k])
    _one_line_error(folder, "lacks `pooler.dense.weight`")


def test_pickle_only_folder_is_refused(tmp_path):
    folder = tmp_path / "pickled"
    folder.mkdir()
    shutil.copy(os.path.join(folder_of("sequence_classification"), "config.json"), folder)
    (folder / "pytorch_model.bin").write_bytes(b"\x80\x04pickle")
    with pytest.raises(CheckpointError, match="never unpickles"):
        load_huggingface_task(str(folder))


def test_h5_copies_must_agree_and_links_are_not_followed(tmp_path):
    import h5py

    folder = _copy(tmp_path, "masked_lm", "tf")
    path = os.path.join(folder, "tf_model.h5")
    with h5py.File(path, "r+") as f:
        group = f["mlm___cls"]
        name = [n for n in group.attrs["weight_names"] if "word_embeddings" in n][0]
        group[name][0, 0] += 1.0  # the copy the MLM decoder lists
    _one_line_error(folder, "word_embeddings/weight:0` differs from")
    folder = _copy(tmp_path, "question_answering", "tf")
    with h5py.File(os.path.join(folder, "tf_model.h5"), "r+") as f:
        group = f["qa_outputs"]
        name = [n for n in group.attrs["weight_names"] if n.endswith("bias:0")][0]
        del group[name]
        group[name] = h5py.ExternalLink(path, "/mlm___cls/" + name)
    _one_line_error(folder, "qa_outputs/bias:0` is not a float array stored in the file")
