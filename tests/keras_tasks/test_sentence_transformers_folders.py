"""SentenceEncoder follows a sentence-transformers folder's pooling, Normalize and length.

The references are sentence-transformers' own embeddings of MiniLM folder variants
(dev/make_sentence_transformers_fixtures.py); each folder is rebuilt here from the installed
MiniLM weights plus the variant's small files.
"""

import json
import os

import numpy as np
import pytest

from bert_tf.checkpoints.huggingface.sentence_transformers import (
    SentencePooling,
    read_sentence_pooling,
)
from bert_tf.errors import CheckpointError
from bert_tf.keras_tasks import SentenceEncoder

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "testdata",
                        "sentence_transformers")
VARIANTS = {"as_shipped": SentencePooling("mean", True, 256),
            "cls_token_unnormalized": SentencePooling("cls_token", False, 256),
            "max_normalized": SentencePooling("max", True, 256),
            "mean_16_tokens": SentencePooling("mean", True, 16)}


def _variant_folder(minilm_hf_dir, variant, folder):
    """MiniLM's files linked into `folder`, the variant's JSON files over them."""
    source = os.path.join(FIXTURES, variant)
    overlay = {os.path.relpath(os.path.join(root, name), source)
               for root, _, names in os.walk(source) for name in names}
    for name in os.listdir(minilm_hf_dir):
        if os.path.isfile(os.path.join(minilm_hf_dir, name)) and name not in overlay:
            os.symlink(os.path.join(minilm_hf_dir, name), os.path.join(folder, name))
    for relative in overlay:
        os.makedirs(os.path.dirname(os.path.join(folder, relative)), exist_ok=True)
        with open(os.path.join(source, relative), "rb") as f:
            open(os.path.join(folder, relative), "wb").write(f.read())
    return str(folder)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_embeddings_are_sentence_transformers(minilm_hf_dir, variant, tmp_path):
    reference = np.load(os.path.join(FIXTURES, "embeddings.npz"))
    folder = _variant_folder(minilm_hf_dir, variant, tmp_path)
    assert read_sentence_pooling(folder) == VARIANTS[variant]
    model = SentenceEncoder.from_pretrained(folder)
    embeddings = model.predict([str(s) for s in reference["sentences"]], verbose=0)
    np.testing.assert_allclose(embeddings, reference[variant], atol=1e-5, rtol=0)


def test_arguments_override_the_folder(minilm_hf_dir, tmp_path):
    folder = _variant_folder(minilm_hf_dir, "as_shipped", tmp_path)
    model = SentenceEncoder.from_pretrained(folder, pooling="cls_token", normalize=False,
                                            max_seq_length=32)
    assert (model.pooling, model.normalize, model.preprocessor.seq_length) == (
        "cls_token", False, 32)


def test_a_folder_without_modules_json_is_mean_pooled_and_normalized(tiny_model_dir):
    assert read_sentence_pooling(tiny_model_dir) is None
    model = SentenceEncoder.from_pretrained(tiny_model_dir)
    assert (model.pooling, model.normalize) == ("mean", True)


def _write(folder, relative, value):
    path = os.path.join(folder, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(value if isinstance(value, str) else json.dumps(value))


_TRANSFORMER = {"type": "sentence_transformers.models.Transformer", "path": ""}
_POOLING = {"type": "sentence_transformers.models.Pooling", "path": "1_Pooling"}


@pytest.mark.parametrize("files, message", [
    ({"modules.json": "[{"}, "modules.json: not valid JSON"),
    ({"modules.json": "[" * 100_000 + "]" * 100_000}, "modules.json: JSON nested deeper than 100"),
    ({"modules.json": [_TRANSFORMER, dict(_POOLING, path="../x")],
      "../x/config.json": {"pooling_mode_cls_token": True}},
     r"module path '\.\./x' leads out of the folder; refused"),
    ({"modules.json": {"type": "x"}}, "expected a list of modules"),
    ({"modules.json": [_TRANSFORMER]}, "no Pooling module after the Transformer"),
    ({"modules.json": [_TRANSFORMER, _POOLING,
                       {"type": "sentence_transformers.models.Dense", "path": "2_Dense"}],
      "1_Pooling/config.json": {"pooling_mode_mean_tokens": True}},
     "module 'sentence_transformers.models.Dense' is not one bert_tf runs"),
    ({"modules.json": [_TRANSFORMER, _POOLING],
      "1_Pooling/config.json": {"pooling_mode_weightedmean_tokens": True}},
     "pooling_mode_weightedmean_tokens is not a pooling bert_tf runs"),
    ({"modules.json": [_TRANSFORMER, _POOLING],
      "1_Pooling/config.json": {"pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": True}},
     "exactly one of"),
    ({"modules.json": [_TRANSFORMER, _POOLING]}, "its Pooling module has no"),
    ({"modules.json": [_TRANSFORMER, _POOLING],
      "1_Pooling/config.json": {"pooling_mode_cls_token": True},
      "sentence_bert_config.json": {"max_seq_length": "long"}},
     "max_seq_length must be an integer >= 3; received 'long'"),
])
def test_folders_it_cannot_follow_are_refused_in_one_line(tmp_path, files, message):
    for relative, value in files.items():
        _write(tmp_path, relative, value)
    with pytest.raises(CheckpointError, match=message) as error:
        read_sentence_pooling(str(tmp_path))
    assert "\n" not in str(error.value)
