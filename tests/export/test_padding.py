"""Exports packed to each request's longest sentence ("longest", the default) give the outputs of
"fixed" exports at real positions: encoder, SQuAD spans, NER labels; tokenized requests padded
either way agree too."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.export.exporter import export_saved_model
from bert_tf.export.serving_module import ExportError
from tests.export.conftest import HEAD_SEQ_LENGTH, TEXTS, TINY_SEQ_LENGTH, write_tiny_model_dir

pytestmark = pytest.mark.slow

SEQ_LENGTH = HEAD_SEQ_LENGTH
SHORT = [b"John Smith lives in Paris.", b"Rain again.", b""]


def _exports(tiny_head_export, head, **kwargs):
    """`{padding: serving signatures}` of one tiny model exported both ways (the "longest"
    export is test_task_exports.py's too: `tiny_head_export`)."""
    return {padding: tf.saved_model.load(tiny_head_export(head, padding, **kwargs)[1]).signatures
            for padding in ("fixed", "longest")}


def _numpy(outputs):
    return {k: v.numpy() for k, v in outputs.items()}


@pytest.fixture(scope="module")
def encoder(tiny_head_export):
    return _exports(tiny_head_export, "encoder", text_pair=True)


def test_encoder_text_request_equals_fixed_at_real_positions(encoder):
    text_a, text_b = tf.constant(SHORT), tf.constant([b"Yes.", b"No, not today.", b"x"])
    fixed = _numpy(encoder["fixed"]["serving_default"](text_a=text_a, text_b=text_b))
    packed = _numpy(encoder["longest"]["serving_default"](text_a=text_a, text_b=text_b))
    width = packed["input_mask"].shape[1]
    assert width == 16 and fixed["input_mask"].shape[1] == SEQ_LENGTH
    mask = fixed["input_mask"][:, :width].astype(bool)
    assert not fixed["input_mask"][:, width:].any()
    np.testing.assert_array_equal(packed["input_mask"], mask)
    np.testing.assert_allclose(packed["pooled_output"], fixed["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(packed["sequence_output"][mask],
                               fixed["sequence_output"][:, :width][mask], atol=1e-5)
    # The export computes real tokens only (`BertEncoder.packed_inference`): padding is zero.
    assert not packed["sequence_output"][~mask].any()
    assert not fixed["sequence_output"][~fixed["input_mask"].astype(bool)].any()


def test_tokenized_request_padded_either_way_gives_equal_outputs(encoder):
    serve = encoder["longest"]["serve_tokenized"]
    packed = encoder["longest"]["serving_default"](text_a=tf.constant(SHORT),
                                                   text_b=tf.constant(SHORT))
    mask = packed["input_mask"]
    # A client's own packing: made-up ids at the real positions, padded to the batch's width
    # and to SEQ_LENGTH.
    ids = tf.where(mask > 0, 100 + tf.range(tf.shape(mask)[1])[None, :], 0)
    short = {"input_word_ids": ids, "input_mask": mask, "input_type_ids": tf.zeros_like(mask)}
    pad = [[0, 0], [0, SEQ_LENGTH - int(mask.shape[1])]]
    long = {k: tf.pad(v, pad) for k, v in short.items()}
    a, b = _numpy(serve(**short)), _numpy(serve(**long))
    real = mask.numpy().astype(bool)
    np.testing.assert_allclose(a["pooled_output"], b["pooled_output"], atol=1e-5)
    np.testing.assert_allclose(a["sequence_output"][real],
                               b["sequence_output"][:, :real.shape[1]][real], atol=1e-5)


def test_squad_spans_equal_fixed(tiny_head_export):
    exports = _exports(tiny_head_export, "span_labeler")
    questions = tf.constant([b"Who won?", b"Where?", b"empty context"])
    contexts = tf.constant([b"Arsenal beat Chelsea 2-1 at Wembley on Saturday.",
                            b"caf\xc3\xa9 in Paris", b""])
    fixed = _numpy(exports["fixed"]["serving_default"](text_a=questions, text_b=contexts))
    packed = _numpy(exports["longest"]["serving_default"](text_a=questions, text_b=contexts))
    assert packed["start_logits"].shape[1] < SEQ_LENGTH
    for key in ("answer", "start", "end"):
        np.testing.assert_array_equal(packed[key], fixed[key])
    for key in ("score", "null_score"):
        np.testing.assert_allclose(packed[key], fixed[key], atol=1e-5)


def test_ner_labels_equal_fixed(tiny_head_export):
    exports = _exports(tiny_head_export, "token_classifier")
    for texts in (SHORT, TEXTS):  # short ones, then a batch with a 100,000-character text
        fixed = _numpy(exports["fixed"]["serving_default"](text=tf.constant(texts)))
        packed = _numpy(exports["longest"]["serving_default"](text=tf.constant(texts)))
        for key in ("labels", "word_start", "word_end", "word_mask"):
            np.testing.assert_array_equal(packed[key], fixed[key])
        width = packed["input_mask"].shape[1]
        real = fixed["input_mask"][:, :width].astype(bool)
        np.testing.assert_allclose(packed["logits"][real], fixed["logits"][:, :width][real],
                                   atol=1e-5)
    assert width == SEQ_LENGTH  # the long text fills the whole length


def test_multiple_choice_equals_fixed(tiny_head_export):
    exports = _exports(tiny_head_export, "multiple_choice")
    contexts = tf.constant([b"She opened the fridge", b"The match ended"])
    choices = tf.constant([[b"and took milk.", b"and flew away.", b""],
                           [b"in a draw.", b"x", b"y"]])
    fixed = _numpy(exports["fixed"]["serving_default"](text_a=contexts, text_b=choices))
    packed = _numpy(exports["longest"]["serving_default"](text_a=contexts, text_b=choices))
    np.testing.assert_allclose(packed["logits"], fixed["logits"], atol=1e-5)


def test_unknown_padding_is_refused(tmp_path):
    model_dir = str(tmp_path / "model")
    write_tiny_model_dir(model_dir, "classifier")
    with pytest.raises(ExportError, match="padding must be one of"):
        export_saved_model(model_dir, str(tmp_path / "export"), "classifier",
                           seq_length=TINY_SEQ_LENGTH, padding="buckets")
