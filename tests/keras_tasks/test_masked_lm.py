"""MaskedLM: predict on raw text is fill_mask's result for the same weights; .keras round trip."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.errors import CheckpointError
from bert_tf.inference import fill_mask
from bert_tf.keras_tasks import MaskedLM, TaskInputError
from tests.keras_tasks.conftest import TEXTS, fit_under

HF_MASKED_LM = os.path.join(os.path.dirname(os.path.dirname(__file__)), "testdata",
                            "tiny_hf_masked_lm")
MASKED = ["the [MASK] sat on the mat .", "a [MASK] [MASK] ran ."]


@pytest.fixture(scope="module")
def masked_lm_dir(tmp_path_factory):
    from bert_tf.checkpoints import convert_huggingface_checkpoint

    model_dir = str(tmp_path_factory.mktemp("mlm"))
    convert_huggingface_checkpoint(HF_MASKED_LM, model_dir)
    return model_dir


def _as_tuples(results):
    return [(r.text, [(m.position, [(piece, round(p, 5)) for piece, p in m.candidates])
                      for m in r.masks], r.words) for r in results]


def test_predict_is_fill_mask_on_hf_folder_and_model_dir(masked_lm_dir):
    expected = _as_tuples(fill_mask(masked_lm_dir, MASKED, top_k=3))
    for folder in (HF_MASKED_LM, masked_lm_dir):
        mlm = MaskedLM.from_pretrained(folder, top_k=3)
        assert _as_tuples(mlm.predict(MASKED)) == expected
    assert len(mlm.predict(MASKED[:1], top_k=2)[0].masks[0].candidates) == 2


def test_keras_round_trip_predicts_the_same(tmp_path):
    mlm = MaskedLM.from_pretrained(HF_MASKED_LM)
    path = str(tmp_path / "mlm.keras")
    mlm.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded, MaskedLM) and loaded.top_k == 5
    assert _as_tuples(loaded.predict(MASKED)) == _as_tuples(mlm.predict(MASKED))


def test_folder_without_head_and_raw_fit_are_refused(tiny_model_dir):
    with pytest.raises(CheckpointError, match="no masked-LM head"):
        MaskedLM.from_pretrained(tiny_model_dir)
    mlm = MaskedLM.from_pretrained(HF_MASKED_LM)
    with pytest.raises(TaskInputError, match="not raw texts"):
        mlm.fit(MASKED, [0, 1])
    with pytest.raises(TaskInputError, match="one text"):
        mlm.predict("the [MASK] sat")


def test_model_dir_is_what_fill_mask_reads(tmp_path):
    mlm = MaskedLM.from_pretrained(HF_MASKED_LM, top_k=3)
    mlm.save_model_dir(str(tmp_path / "mlm"))
    assert (_as_tuples(fill_mask(str(tmp_path / "mlm"), MASKED, top_k=3))
            == _as_tuples(mlm.predict(MASKED)))


@pytest.mark.parametrize("setting", ["mixed_bfloat16", "mirrored"])
def test_a_fit_step_in_bfloat16_and_under_mirrored_strategy(setting):
    def build():
        mlm = MaskedLM.from_pretrained(HF_MASKED_LM)
        mlm.compile(loss={"mlm_logits": keras.losses.SparseCategoricalCrossentropy(
            from_logits=True)})
        return mlm

    def fit(mlm):
        ids = {k: v.numpy() for k, v in mlm.preprocessor(tf.constant(TEXTS)).items()}
        positions = np.tile(np.array([[1, 2]], np.int32), (len(TEXTS), 1))
        targets = np.take_along_axis(ids["input_word_ids"], positions, axis=1)
        np.put_along_axis(ids["input_word_ids"], positions, mlm.preprocessor.tokenizer.mask_id,
                          axis=1)
        return mlm.fit(dict(ids, masked_lm_positions=positions), {"mlm_logits": targets},
                       batch_size=4, verbose=0)

    mlm, _ = fit_under(setting, build, fit)
    assert mlm.optimizer.iterations.numpy() == 2  # two global batches of 4
