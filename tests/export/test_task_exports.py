"""Span, token-classifier, multiple-choice and pretrainer exports: outputs vs the Keras model.

Each head is exported (which runs the op audit for TF Serving 2.12) and loaded back in-process.
"""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.export.exporter import build_export_module, export_saved_model
from bert_tf.export.restored_model import restore_model
from bert_tf.export.span_serving import best_spans
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor
from tests.export.conftest import HEAD_SEQ_LENGTH, TAGS, TINY_SEQ_LENGTH, write_tiny_model_dir

pytestmark = pytest.mark.slow


def _export(tmp_path_factory, head):
    root = tmp_path_factory.mktemp(head)
    write_tiny_model_dir(str(root / "model"), head)
    path = export_saved_model(str(root / "model"), str(root / "export"), head,
                              seq_length=TINY_SEQ_LENGTH)
    return _loaded(str(root / "model"), path, head, TINY_SEQ_LENGTH)


def _loaded(model_dir, path, head, seq_length):
    """(serving_default, the restored Keras model, its preprocessor) of an export."""
    restored = restore_model(model_dir, head)
    # Packed as the export packs (each request to its own longest sequence).
    preprocessor = BertPreprocessor(restored.vocab_file, lower_case=restored.lower_case,
                                    seq_length=seq_length, padding="longest")
    return tf.saved_model.load(path).signatures["serving_default"], restored, preprocessor


def _shared_export(tiny_head_export, head):
    """`_export` of test_padding.py's "longest" export of `head` (at HEAD_SEQ_LENGTH, made once
    for both files); what these tests assert does not depend on the length."""
    return _loaded(*tiny_head_export(head), head, HEAD_SEQ_LENGTH)


def test_best_spans_respects_context_and_length():
    start = tf.constant([[9.0, 1.0, 5.0, 0.0, 2.0]])
    end = tf.constant([[9.0, 0.0, 1.0, 3.0, 4.0]])
    is_context = tf.constant([[False, True, True, True, True]])
    s, e, score, found = best_spans(start, end, is_context, max_answer_length=2)
    # [CLS] (index 0) is excluded; (2, 3) scores 8, (2, 4) would be 9 but is 3 tokens long.
    assert (s.numpy()[0], e.numpy()[0], score.numpy()[0], found.numpy()[0]) == (2, 3, 8.0, True)
    _, _, _, found = best_spans(start, end, tf.zeros_like(is_context), max_answer_length=2)
    assert not found.numpy()[0]


def test_span_answer_is_the_context_substring(tiny_head_export):
    serve, restored, preprocessor = _shared_export(tiny_head_export, "span_labeler")
    questions = [b"Who won?", b"Where?", b"empty context"]
    contexts = [b"Arsenal beat Chelsea 2-1 at Wembley on Saturday.", b"caf\xc3\xa9 in Paris", b""]
    out = serve(text_a=tf.constant(questions), text_b=tf.constant(contexts))
    inputs = preprocessor((tf.constant(questions), tf.constant(contexts)))
    expected = restored.model(inputs, training=False)
    for name in ("start_logits", "end_logits"):
        np.testing.assert_allclose(out[name].numpy(), expected[name].numpy(), atol=1e-5)
    for i, context in enumerate(contexts):
        start, end = int(out["start"][i]), int(out["end"][i])
        assert out["answer"].numpy()[i] == context[start:end]
        assert 0 <= start <= end <= len(context)
    assert len(out["answer"].numpy()[0]) > 0
    assert out["answer"].numpy()[2] == b"" and out["score"][2] == out["null_score"][2]


def test_token_classifier_labels_each_word(tiny_head_export):
    serve, restored, preprocessor = _shared_export(tiny_head_export, "token_classifier")
    texts = [b"John Smith lives in Paris.", b"", b"word " * 20000]
    out = serve(text=tf.constant(texts))
    logits = restored.model(preprocessor(tf.constant(texts)), training=False).numpy()
    np.testing.assert_allclose(out["logits"].numpy(), logits, atol=1e-5)
    words = [texts[0][s:e] for s, e, m in zip(out["word_start"][0].numpy(),
                                               out["word_end"][0].numpy(),
                                               out["word_mask"][0].numpy()) if m]
    assert words == [b"John", b"Smith", b"lives", b"in", b"Paris", b"."]
    # Every one of these words is one WordPiece, so word w's label is token w + 1's.
    expected = [TAGS[i].encode() for i in logits[0].argmax(-1)[1:1 + len(words)]]
    assert out["labels"].numpy()[0][:len(words)].tolist() == expected
    assert out["word_mask"][1].numpy().sum() == 0
    # Truncation: only seq_length - 2 words fit; the output stops there.
    assert out["word_mask"][2].numpy().sum() == HEAD_SEQ_LENGTH - 2
    assert out["labels"].shape[1] == HEAD_SEQ_LENGTH - 2


def test_multiple_choice_matches_keras(tiny_head_export):
    serve, restored, preprocessor = _shared_export(tiny_head_export, "multiple_choice")
    contexts = [b"She opened the fridge", b"The match ended"]
    choices = [[b"and took milk.", b"and flew away.", b""], [b"in a draw.", b"x", b"y"]]
    out = serve(text_a=tf.constant(contexts), text_b=tf.constant(choices))
    packed = preprocessor((tf.constant(np.repeat(contexts, 3)),
                           tf.constant(np.reshape(choices, [-1]))))
    inputs = {k: tf.reshape(v, [2, 3, -1]) for k, v in packed.items()}
    logits = restored.model(inputs, training=False).numpy()
    np.testing.assert_allclose(out["logits"].numpy(), logits, atol=1e-5)
    assert out["choice"].numpy().tolist() == logits.argmax(-1).tolist()


def test_pretrainer_fills_masks(tmp_path_factory):
    serve, restored, preprocessor = _export(tmp_path_factory, "pretrainer")
    text_a = [b"The [MASK] won the [MASK] final.", b"No masks here."]
    text_b = [b"It was in London.", b""]
    out = serve(text_a=tf.constant(text_a), text_b=tf.constant(text_b))
    inputs = preprocessor((tf.constant(text_a), tf.constant(text_b)))
    mask_id = preprocessor.tokenizer.mask_id
    positions = [np.flatnonzero(row == mask_id) for row in inputs["input_word_ids"].numpy()]
    assert out["masked_lm_positions"].numpy()[0].tolist() == positions[0].tolist()
    assert out["masked_lm_weights"].numpy().tolist() == [[1.0, 1.0], [0.0, 0.0]]
    expected = restored.model(dict(inputs, masked_lm_positions=out["masked_lm_positions"]),
                                training=False)
    np.testing.assert_array_equal(out["masked_lm_ids"].numpy()[0],
                                  expected["mlm_logits"].numpy()[0].argmax(-1))
    assert out["masked_lm_tokens"].numpy()[1].tolist() == [b"", b""]
    np.testing.assert_allclose(out["nsp_probabilities"].numpy(),
                               tf.nn.softmax(expected["nsp_logits"]).numpy(), atol=1e-5)


@pytest.mark.parametrize("head", ["classifier", "token_classifier", "span_labeler",
                                  "multiple_choice"])
def test_signatures_trace_the_model_once(tmp_path, head):
    # serving_default calls serve_tokenized's traced function (the base text_outputs and each
    # head's own), so an export traces the model once, not once per signature.
    write_tiny_model_dir(str(tmp_path / "model"), head)
    module = build_export_module(str(tmp_path / "model"), head, seq_length=TINY_SEQ_LENGTH)
    traced, tokenized_outputs = [], module.tokenized_outputs
    module.tokenized_outputs = lambda inputs: traced.append(1) or tokenized_outputs(inputs)
    signatures = module.signatures()
    assert sorted(signatures) == ["serve_tokenized", "serving_default"] and len(traced) == 1


@pytest.mark.parametrize("head, texts", [
    ("token_classifier", tf.constant([b"Arsenal beat Chelsea", b"x"])),
    ("multiple_choice", (tf.constant([b"The match ended"]), tf.constant([[b"in a draw.", b"x"]]))),
])
def test_an_export_is_called_as_the_tutorials_call_one_and_by_tfsm_layer(tiny_head_export,
                                                                         head, texts):
    """`reloaded(tf.constant(texts))` (tensorflow.org's tutorials) and `keras.layers.TFSMLayer`
    by either endpoint give `serving_default`'s outputs."""
    import keras

    _, path = tiny_head_export(head)
    reloaded = tf.saved_model.load(path)
    names = ("text",) if head == "token_classifier" else ("text_a", "text_b")
    expected = reloaded.signatures["serving_default"](**dict(zip(names, tf.nest.flatten(texts))))
    for call in (reloaded, keras.layers.TFSMLayer(path),
                 keras.layers.TFSMLayer(path, call_endpoint="serving_default")):
        got = call(texts)
        assert sorted(got) == sorted(expected)
        for name in expected:
            np.testing.assert_array_equal(got[name].numpy(), expected[name].numpy())
