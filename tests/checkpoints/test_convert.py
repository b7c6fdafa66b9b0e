"""convert_checkpoint: what the conversion writes, and what it refuses."""

import os
import shutil

import numpy as np
import pytest

from bert_tf.checkpoints.convert import convert_checkpoint
from bert_tf.checkpoints.model_dir import read_model_info
from bert_tf.errors import CheckpointError
from bert_tf.file_io import OutputExistsError


def test_hf_conversion_refuses_nan_and_records_casing(tiny_hf_dir, tmp_path):
    from safetensors.numpy import load_file, save_file

    good = str(tmp_path / "good")
    convert_checkpoint("huggingface", tiny_hf_dir, "model_dir", good, do_lower_case=True)
    assert read_model_info(good)["do_lower_case"] is True
    assert read_model_info(good)["head"] == "pretrainer"
    with pytest.raises(OutputExistsError):
        convert_checkpoint("huggingface", tiny_hf_dir, "model_dir", good)
    weights = os.path.join(tiny_hf_dir, "model.safetensors")
    tensors = load_file(weights)
    name = sorted(key for key in tensors if key.endswith("LayerNorm.weight"))[0]
    tensors[name] = np.full_like(tensors[name], np.nan)
    save_file(tensors, weights, metadata={"format": "pt"})
    with pytest.raises(CheckpointError, match=f"`{name.removeprefix('bert.')}` holds NaN or Inf"):
        convert_checkpoint("huggingface", tiny_hf_dir, "model_dir", str(tmp_path / "bad"))
    assert not os.path.exists(tmp_path / "bad")
    shutil.rmtree(good)
