"""google-research TF1 checkpoints: written with tf.compat.v1 under their names, read back."""

import json
import os
import re
import shutil

import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import load_file

from bert_tf.checkpoints import google_research
from bert_tf.checkpoints.convert import convert_checkpoint
from bert_tf.configs import BertConfig
from bert_tf.models.bert_encoder import BertEncoder


def tf1_names(hf_tensors):
    """Renames Hugging Face tensors to google-research TF1 variables.

    Written from the rules of transformers' `load_tf_weights_in_bert` (the inverse
    direction), independently of bert_tf's own table: `layer_N`, LayerNorm `gamma`/`beta`,
    `*_embeddings` without a suffix, dense `kernel`s `[in, out]`, and `cls/seq_relationship`
    `output_weights` kept `[2, H]`.
    """
    tensors = {}
    for name, value in hf_tensors.items():
        if name == "embeddings.position_ids":
            continue
        name = name if name.startswith(("bert.", "cls.")) else "bert." + name
        name = re.sub(r"\.layer\.(\d+)\.", r".layer_\1.", name)
        *scope, module, kind = name.split(".")
        if module == "LayerNorm":
            kind = {"weight": "gamma", "bias": "beta"}[kind]
        elif module.endswith("_embeddings"):
            scope, module, kind = scope + [module], None, None
        elif module == "predictions":  # the MLM output bias
            kind = "output_bias"
        elif module == "seq_relationship":
            kind = {"weight": "output_weights", "bias": "output_bias"}[kind]
        elif kind == "weight":
            kind, value = "kernel", value.T
        tensors["/".join(part for part in scope + [module, kind] if part)] = value
    return tensors


def write_tf1_checkpoint(tensors, prefix, slots=()):
    """Saves `tensors` as a TF1 graph checkpoint, the way google-research's Saver does.

    `slots` names variables that also get AdamWeightDecay `adam_m`/`adam_v` slots.
    """
    values = dict(tensors)
    for name in slots:
        values[f"{name}/adam_m"] = values[f"{name}/adam_v"] = np.zeros_like(tensors[name])
    graph = tf.Graph()
    with graph.as_default():
        # Variables initialized from fed placeholders: no 90 MB of constants in the graph.
        feeds = {}
        for name, value in values.items():
            placeholder = tf.compat.v1.placeholder(tf.float32, value.shape)
            tf.compat.v1.get_variable(name, initializer=placeholder)
            feeds[placeholder] = value
        tf.compat.v1.train.get_or_create_global_step()
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session(graph=graph) as session:
            session.run(tf.compat.v1.global_variables_initializer(), feed_dict=feeds)
            return saver.save(session, prefix, write_meta_graph=False)


def _google_research_config(hf_dir, path):
    """The HF config as a google-research bert_config.json (their keys only)."""
    config = BertConfig.from_json_file(os.path.join(hf_dir, "config.json")).to_dict()
    del config["layer_norm_eps"]  # not a google-research key; their LayerNorm used 1e-12
    with open(path, "w") as f:
        json.dump(config, f)
    return str(path)


@pytest.mark.slow
def test_minilm_round_trip_through_tf1(minilm_hf_dir, minilm_reference, tmp_path, run_encoder):
    tensors = tf1_names(load_file(os.path.join(minilm_hf_dir, "model.safetensors")))
    prefix = write_tf1_checkpoint(tensors, str(tmp_path / "bert_model.ckpt"),
                                  slots=["bert/pooler/dense/kernel"])
    saved = dict(tf.train.list_variables(prefix))
    assert {"bert/pooler/dense/kernel/adam_m", "global_step"} <= set(saved)  # ignored on read
    model_dir = str(tmp_path / "model")
    convert_checkpoint(
        "google_research", prefix, "model_dir", model_dir,
        bert_config_file=_google_research_config(minilm_hf_dir, tmp_path / "bert_config.json"),
        vocab_file=os.path.join(minilm_hf_dir, "vocab.txt"))
    sequence, pooled = run_encoder(BertEncoder.from_pretrained(model_dir), minilm_reference)
    real = minilm_reference["attention_mask"].astype(bool)
    assert np.abs(sequence - minilm_reference["last_hidden_state"])[real].max() <= 1e-5
    assert np.abs(pooled - minilm_reference["pooler_output"]).max() <= 1e-5


def _read(prefix, config_file):
    """The google_research reader on `prefix`, the config given, the tiny model's vocab."""
    vocab_file = os.path.join(os.path.dirname(os.path.dirname(__file__)), "testdata",
                              "tiny_hf_pretraining", "vocab.txt")
    return google_research.read(prefix, do_lower_case=True, bert_config_file=config_file,
                                vocab_file=vocab_file)


@pytest.fixture
def tiny_tf1(tiny_hf_dir, tmp_path):
    """The tiny HF pretraining tensors under TF1 names, and its bert_config.json."""
    tensors = tf1_names(load_file(os.path.join(tiny_hf_dir, "model.safetensors")))
    return tensors, _google_research_config(tiny_hf_dir, tmp_path / "bert_config.json")


def test_tiny_pretraining_heads_through_tf1(tiny_tf1, tiny_hf_dir, tiny_reference, tmp_path,
                                            run_pretrainer):
    tensors, config_file = tiny_tf1
    prefix = write_tf1_checkpoint(tensors, str(tmp_path / "ckpt" / "bert_model.ckpt"),
                                  slots=["cls/seq_relationship/output_weights"])
    model_dir = str(tmp_path / "model")
    convert_checkpoint("google_research", prefix, "model_dir", model_dir,
                       bert_config_file=config_file,
                       vocab_file=os.path.join(tiny_hf_dir, "vocab.txt"))
    mlm, nsp = run_pretrainer(model_dir, tiny_reference)
    np.testing.assert_allclose(mlm, tiny_reference["mlm_logits"], atol=1e-5, rtol=0)
    np.testing.assert_allclose(nsp, tiny_reference["nsp_logits"], atol=1e-5, rtol=0)


def test_shape_not_matching_config_names_tensor(tiny_tf1, tmp_path):
    tensors, config_file = tiny_tf1
    prefix = write_tf1_checkpoint(tensors, str(tmp_path / "ckpt" / "bert_model.ckpt"))
    with open(config_file) as f:
        values = json.load(f)
    with open(config_file, "w") as f:
        json.dump({**values, "vocab_size": 100}, f)
    with pytest.raises(ValueError, match=r"`bert/embeddings/word_embeddings` has shape "
                                         r"\[99, 32\], but the config needs \[100, 32\]"):
        _read(prefix, config_file)


def test_fine_tuned_classifier_tensors_are_named_unused(tiny_tf1, tmp_path):
    tensors, config_file = tiny_tf1
    tensors["output_weights"] = np.zeros((3, 32), np.float32)
    tensors["output_bias"] = np.zeros((3,), np.float32)
    prefix = write_tf1_checkpoint(tensors, str(tmp_path / "ckpt" / "bert_model.ckpt"))
    with pytest.raises(ValueError, match=r"map to no model weight: \['output_bias', "
                                         r"'output_weights'\]"):
        _read(prefix, config_file)


def test_missing_tensor_names_weight_left_unset(tiny_tf1, tmp_path):
    tensors, config_file = tiny_tf1
    del tensors["bert/encoder/layer_0/attention/self/key/bias"]
    prefix = write_tf1_checkpoint(tensors, str(tmp_path / "ckpt" / "bert_model.ckpt"))
    with pytest.raises(ValueError, match=r"layer_0/attention/self/key/bias "
                                         r"\(for layer_0/attention/key/bias\)"):
        _read(prefix, config_file)


def test_not_a_checkpoint_prefix(tiny_tf1, tmp_path):
    _, config_file = tiny_tf1
    with pytest.raises(FileNotFoundError, match=r"expected .*bert_model\.ckpt\.index"):
        _read(str(tmp_path / "bert_model.ckpt"), config_file)


def test_google_research_folder_to_huggingface(tiny_tf1, tiny_hf_dir, tmp_path):
    # google-research's zip layout: bert_model.ckpt, bert_config.json, vocab.txt together.
    tensors, config_file = tiny_tf1
    folder = tmp_path / "uncased_tiny"
    prefix = write_tf1_checkpoint(tensors, str(folder / "bert_model.ckpt"))
    os.replace(config_file, folder / "bert_config.json")
    shutil.copy(os.path.join(tiny_hf_dir, "vocab.txt"), folder / "vocab.txt")
    convert_checkpoint("google_research", prefix, "huggingface", str(tmp_path / "hf"))
    original = load_file(os.path.join(tiny_hf_dir, "model.safetensors"))
    exported = load_file(str(tmp_path / "hf" / "model.safetensors"))
    assert sorted(exported) == sorted(original)  # HF -> TF1 -> ours -> HF is lossless
    for name, value in original.items():
        np.testing.assert_array_equal(exported[name], value, err_msg=name)
