"""`--describe` gives the model's sizes for every format, from small files and variable shapes:
the same sizes the reader then builds."""

import os

import pytest

from bert_tf.checkpoints import registry
from bert_tf.checkpoints.format import sizes
from tests.fixtures import write_tiny_model_dir

TESTDATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "testdata")


@pytest.mark.parametrize("folder", ["tiny_hf_pretraining", "keras_hub/classifier",
                                    "model_garden/encoder", "tf_hub/bert_uncased_tiny",
                                    "model_dir"])
def test_every_format_describes_the_sizes_its_reader_builds(tmp_path, folder):
    if folder == "model_dir":
        path = str(tmp_path / "model")
        write_tiny_model_dir(path)
    else:
        path = os.path.join(TESTDATA, folder)
    described = registry.describe_folder(path)
    casing = True if described.lower_case is None else described.lower_case
    read = registry.read_pretrained(path, do_lower_case=casing)
    assert sizes(described.config) == sizes(read.config)
    assert f"  sizes: {sizes(read.config)}" in str(described).splitlines()


def test_sizes_count_the_encoders_weights():
    from bert_tf.configs import BertConfig

    assert sizes(BertConfig(vocab_size=30522)) == (
        "12 layers, H=768, 12 heads, FFN 3072, vocab 30522, 512 positions, "
        "109,482,240 weights")
