"""Fixtures of the fill-mask tests: a converted tiny masked-LM checkpoint and HF's predictions."""

import json
import os

import pytest

TESTDATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "testdata")


@pytest.fixture(scope="session")
def fill_mask_reference():
    """transformers' fill-mask pipeline on tiny_hf_masked_lm (dev/make_reference_fixtures.py)."""
    with open(os.path.join(TESTDATA, "fill_mask_reference.json"), encoding="utf-8") as f:
        return json.load(f)["cases"]


@pytest.fixture(scope="session")
def masked_lm_model_dir(tmp_path_factory):
    """Our model directory converted from the tiny Hugging Face BertForPreTraining."""
    from bert_tf.checkpoints import convert_huggingface_checkpoint

    model_dir = str(tmp_path_factory.mktemp("masked_lm_model_dir"))
    convert_huggingface_checkpoint(os.path.join(TESTDATA, "tiny_hf_masked_lm"), model_dir)
    return model_dir
