"""Hugging Face conversion: real-checkpoint parity, export round trips, bad folders."""

import json
import os

import numpy as np
import pytest
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

from bert_tf.checkpoints import (
    convert_huggingface_checkpoint,
    export_huggingface_checkpoint,
    huggingface,
)
from bert_tf.configs import BertConfig
from bert_tf.models.bert_encoder import BertEncoder
from tests.checkpoints.conftest import edit_config, edit_safetensors

WEIGHTS = "model.safetensors"


def test_minilm_matches_transformers(minilm_model_dir, minilm_reference, run_encoder):
    encoder = BertEncoder.from_pretrained(minilm_model_dir)
    real = minilm_reference["attention_mask"].astype(bool)
    for packed in (True, False):
        encoder.packed_inference = packed
        sequence, pooled = run_encoder(encoder, minilm_reference)
        diff = np.abs(sequence - minilm_reference["last_hidden_state"])
        assert diff[real].max() <= 1e-5
        assert np.abs(pooled - minilm_reference["pooler_output"]).max() <= 1e-5
        if packed:  # Padding is not computed: it reads as zeros.
            assert not sequence[~real].any()
        else:
            # Padded positions carry no meaning and are ill-conditioned: there transformers'
            # own float32 output differs from its float64 one by 5.7e-5, ours by 1.3e-4.
            assert diff[~real].max() <= 1e-3


def test_tiny_pretraining_heads_match_transformers(tiny_hf_dir, tiny_reference, tmp_path,
                                                   run_pretrainer):
    model_dir = str(tmp_path / "model")
    convert_huggingface_checkpoint(tiny_hf_dir, model_dir)
    mlm, nsp = run_pretrainer(model_dir, tiny_reference)
    np.testing.assert_allclose(mlm, tiny_reference["mlm_logits"], atol=1e-5, rtol=0)
    np.testing.assert_allclose(nsp, tiny_reference["nsp_logits"], atol=1e-5, rtol=0)


def test_export_reproduces_transformers_file(tiny_hf_dir, tmp_path):
    model_dir, exported = str(tmp_path / "model"), str(tmp_path / "exported")
    convert_huggingface_checkpoint(tiny_hf_dir, model_dir)
    export_huggingface_checkpoint(model_dir, exported)
    original = load_file(os.path.join(tiny_hf_dir, WEIGHTS))
    written = load_file(os.path.join(exported, WEIGHTS))
    assert sorted(written) == sorted(original)
    for name, value in original.items():
        np.testing.assert_array_equal(written[name], value, err_msg=name)
    assert (BertConfig.from_json_file(os.path.join(exported, "config.json"))
            == BertConfig.from_json_file(os.path.join(tiny_hf_dir, "config.json")))
    with open(os.path.join(exported, "vocab.txt")) as a, \
            open(os.path.join(tiny_hf_dir, "vocab.txt")) as b:
        assert a.read() == b.read()


@pytest.mark.slow
def test_encoder_export_round_trip(minilm_hf_dir, minilm_model_dir, tmp_path):
    # Tensor-for-tensor equality with the original file: reading the export back is then
    # reading the original, which test_minilm_matches_transformers checks.
    exported = str(tmp_path / "exported")
    export_huggingface_checkpoint(minilm_model_dir, exported)
    with safe_open(os.path.join(exported, WEIGHTS), "np") as f:
        assert f.metadata() == {"format": "pt"}
        written = {name: f.get_tensor(name) for name in f.keys()}
    original = load_file(os.path.join(minilm_hf_dir, WEIGHTS))
    assert sorted(written) == sorted(set(original) - {"embeddings.position_ids"})
    for name, value in written.items():
        np.testing.assert_array_equal(value, original[name], err_msg=name)


def test_export_of_a_model_object(tmp_path):
    config = BertConfig(vocab_size=30, hidden_size=8, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=12, max_position_embeddings=8,
                        hidden_act="gelu_approximate")
    encoder = BertEncoder(config)
    export_huggingface_checkpoint(encoder, str(tmp_path))
    with open(tmp_path / "config.json") as f:
        assert json.load(f)["hidden_act"] == "gelu_new"  # HF's name of the tanh form
    back = BertEncoder.from_pretrained(str(tmp_path))
    for ours, theirs in zip(encoder.weights, back.weights):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with pytest.raises(TypeError, match="model directory, a BertEncoder or a BertPretrainer"):
        export_huggingface_checkpoint(object(), str(tmp_path))


def test_shape_not_matching_config_names_tensor(tiny_hf_dir):
    edit_config(tiny_hf_dir, intermediate_size=40)
    with pytest.raises(ValueError, match=r"`encoder\.layer\.0\.intermediate\.dense\.weight` "
                                         r"has shape \[37, 32\].*needs \[40, 32\]"):
        BertEncoder.from_pretrained(tiny_hf_dir)


def test_unused_tensor_is_named(tiny_hf_dir):
    edit_safetensors(tiny_hf_dir,
                     lambda t: t.update({"classifier.weight": np.zeros((3, 32), "f4")}))
    with pytest.raises(ValueError, match=r"map to no model weight: \['classifier\.weight'\]"):
        BertEncoder.from_pretrained(tiny_hf_dir)


def test_fewer_layers_in_config_leaves_tensors_unused(tiny_hf_dir):
    edit_config(tiny_hf_dir, num_hidden_layers=1)
    with pytest.raises(ValueError, match=r"encoder\.layer\.1\.attention\.output\.LayerNorm"):
        BertEncoder.from_pretrained(tiny_hf_dir)


def test_missing_tensor_names_weight_left_unset(tiny_hf_dir):
    edit_safetensors(tiny_hf_dir, lambda t: t.pop("bert.encoder.layer.1.output.LayerNorm.bias"))
    with pytest.raises(ValueError, match=r"encoder\.layer\.1\.output\.LayerNorm\.bias "
                                         r"\(for layer_1/output_layer_norm/beta\)"):
        BertEncoder.from_pretrained(tiny_hf_dir)


def test_tied_decoder_copy_must_equal_embeddings(tiny_hf_dir):
    def add_copy(tensors, offset):
        tensors["cls.predictions.decoder.weight"] = (
            tensors["bert.embeddings.word_embeddings.weight"] + offset)

    edit_safetensors(tiny_hf_dir, lambda t: add_copy(t, 0.0))
    BertEncoder.from_pretrained(tiny_hf_dir)  # an equal copy is a documented extra
    edit_safetensors(tiny_hf_dir, lambda t: add_copy(t, 1.0))
    with pytest.raises(ValueError, match="cls.predictions.decoder.weight` differs"):
        BertEncoder.from_pretrained(tiny_hf_dir)


def test_pytorch_pickle_is_refused_unread(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    # Not a valid pickle: any attempt to unpickle would fail differently.
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80\x04 not a pickle")
    with pytest.raises(ValueError, match="pickle.*never unpickles.*safetensors"):
        BertEncoder.from_pretrained(str(tmp_path))
    os.remove(tmp_path / "pytorch_model.bin")
    with pytest.raises(FileNotFoundError, match="No model.safetensors"):
        huggingface.read(str(tmp_path))
    with pytest.raises(ValueError, match="not a checkpoint folder.*config.json"):
        BertEncoder.from_pretrained(str(tmp_path))  # no weights: not recognised as HF


def test_sharded_safetensors_folder(tiny_hf_dir, tiny_reference, tmp_path, run_pretrainer):
    # Large checkpoints come as model-0000N-of-0000M.safetensors + an index (transformers).
    path = os.path.join(tiny_hf_dir, WEIGHTS)
    tensors = load_file(path)
    os.remove(path)
    names = sorted(tensors)
    shards = {"model-00001-of-00002.safetensors": names[:20],
              "model-00002-of-00002.safetensors": names[20:]}
    for shard, shard_names in shards.items():
        save_file({n: tensors[n] for n in shard_names}, os.path.join(tiny_hf_dir, shard))
    with open(path + ".index.json", "w") as f:
        json.dump({"weight_map": {n: s for s, ns in shards.items() for n in ns}}, f)
    model_dir = str(tmp_path / "model")
    convert_huggingface_checkpoint(tiny_hf_dir, model_dir)
    mlm, _ = run_pretrainer(model_dir, tiny_reference)
    np.testing.assert_allclose(mlm, tiny_reference["mlm_logits"], atol=1e-5, rtol=0)


def test_bfloat16_checkpoint_reads_as_float32(tiny_hf_dir):
    import ml_dtypes

    original = load_file(os.path.join(tiny_hf_dir, WEIGHTS))
    edit_safetensors(tiny_hf_dir, lambda t: t.update(
        {name: value.astype(ml_dtypes.bfloat16) for name, value in t.items()}))
    with safe_open(os.path.join(tiny_hf_dir, WEIGHTS), "np") as f:
        assert f.get_slice("cls.predictions.bias").get_dtype() == "BF16"
    encoder = BertEncoder.from_pretrained(tiny_hf_dir)
    table = encoder.embeddings.word_embeddings.embeddings
    assert table.dtype == "float32"
    expected = original["bert.embeddings.word_embeddings.weight"]
    np.testing.assert_allclose(table.numpy(), expected, rtol=2 ** -8)


def test_corrupt_safetensors_file_is_named(tiny_hf_dir):
    with open(os.path.join(tiny_hf_dir, WEIGHTS), "wb") as f:
        f.write(b"\xff" * 16)
    with pytest.raises(ValueError, match=r"model\.safetensors: not a readable safetensors"):
        BertEncoder.from_pretrained(tiny_hf_dir)
