"""TextClassifier: raw strings in, the same logits as ids; fit, save, load, export, bad input."""

import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints.convert import convert_checkpoint
from bert_tf.dtype_policy import policy_scope
from bert_tf.errors import CheckpointError
from bert_tf.export.restored_model import restore_model
from bert_tf.keras_tasks import TaskInputError, TextClassifier
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor
from bert_tf.training.distribution import get_strategy
from tests.entry_points import free_ports
from tests.fixtures import write_tiny_model_dir
from tests.keras_tasks.conftest import LABELS, TEXTS


def _fixed_ids(classifier, x):
    """Ids from an independent fixed-width preprocessor over the same vocab and casing."""
    preprocessor = BertPreprocessor(classifier.preprocessor.vocab_file,
                                    classifier.preprocessor.lower_case, seq_length=64)
    return preprocessor(tuple(tf.constant(t) for t in x) if isinstance(x, tuple)
                        else tf.constant(x))


@pytest.mark.parametrize("text_pair", [False, True])
def test_strings_give_the_logits_of_ids(tiny_model_dir, text_pair):
    classifier = TextClassifier.from_pretrained(tiny_model_dir, num_classes=3, text_pair=text_pair)
    x = (TEXTS[:5], TEXTS[3:]) if text_pair else TEXTS
    # Batches of 3 are each padded to their own longest; the reference is 64 wide.
    logits = classifier.predict(x, batch_size=3, verbose=0)
    assert logits.shape == (5 if text_pair else 8, 3)
    expected = classifier(_fixed_ids(classifier, x), training=False).numpy()
    np.testing.assert_allclose(logits, expected, atol=1e-5, rtol=0)
    # A batched tf.data pipeline of strings gives the same.
    columns = tuple(x) if text_pair else x
    dataset = tf.data.Dataset.from_tensor_slices(columns).batch(4)
    np.testing.assert_allclose(classifier.predict(dataset, verbose=0), logits, atol=1e-5, rtol=0)


def test_lists_read_in_order_give_the_batches_and_metrics_of_a_mapped_dataset(tiny_model_dir):
    # Lists read in order (evaluate, predict, fit without shuffle) are tokenized by a generator
    # over the traced preprocessor, a dataset of strings by `dataset.map`: the same batches.
    classifier = TextClassifier.from_pretrained(tiny_model_dir, num_classes=2)
    strings = tf.data.Dataset.from_tensor_slices((TEXTS, LABELS)).batch(3)
    listed = list(classifier.text_dataset(TEXTS, LABELS, batch_size=3))
    mapped = list(classifier.text_dataset(strings))
    assert [len(y) for _, y in listed] == [3, 3, 2]
    for (ids, labels), (mapped_ids, mapped_labels) in zip(listed, mapped, strict=True):
        assert ids.keys() == mapped_ids.keys()
        for name in ids:
            np.testing.assert_array_equal(ids[name], mapped_ids[name])
        np.testing.assert_array_equal(labels, mapped_labels)
    metrics = classifier.evaluate(TEXTS, LABELS, batch_size=3, verbose=0, return_dict=True)
    assert metrics == pytest.approx(classifier.evaluate(strings, verbose=0, return_dict=True),
                                    abs=1e-6)
    with pytest.raises(TaskInputError, match="`x` holds no texts"):
        classifier.predict([], verbose=0)


def test_fit_on_strings_learns_and_compile_overrides_the_defaults(tiny_model_dir):
    classifier = TextClassifier.from_pretrained(tiny_model_dir, num_classes=2)
    assert isinstance(classifier.loss, keras.losses.SparseCategoricalCrossentropy)
    assert float(classifier.optimizer.learning_rate) == pytest.approx(5e-5)
    classifier.compile(optimizer=keras.optimizers.Adam(3e-3))  # loss and metrics stay "auto"
    history = classifier.fit(np.array(TEXTS * 4), np.array(LABELS * 4), batch_size=8,
                             epochs=15, validation_data=(TEXTS, LABELS), validation_freq=15,
                             verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0], losses
    loss, accuracy = classifier.evaluate(TEXTS, LABELS, verbose=0)
    assert accuracy == 1.0
    assert history.history["val_loss"][-1] == pytest.approx(loss, abs=1e-6)


def test_training_packs_real_tokens_unless_xla_compiles_the_step(tiny_model_dir):
    classifier = TextClassifier.from_pretrained(tiny_model_dir, num_classes=2)
    assert classifier.encoder.packed_training  # "auto" without XLA
    classifier.compile(jit_compile=True)
    assert not classifier.encoder.packed_training  # every batch width would compile
    classifier.compile(packed_training=False)
    assert not classifier.encoder.packed_training
    with pytest.raises(TaskInputError, match="packed_training='yes'"):
        classifier.compile(packed_training="yes")


@pytest.mark.parametrize("max_seq_length,groups", [(64, 2), (128, 2), (256, 8)])
def test_training_attention_groups_follow_the_sequence_length(tmp_path, max_seq_length, groups):
    write_tiny_model_dir(tmp_path, max_position_embeddings=256)
    classifier = TextClassifier.from_pretrained(tmp_path, num_classes=2,
                                                max_seq_length=max_seq_length)
    assert classifier.encoder.training_attention_groups == groups  # from_pretrained compiles
    classifier.encoder.training_attention_groups = 5
    classifier.compile()
    assert classifier.encoder.training_attention_groups == groups


def test_regression_takes_float_labels(tiny_model_dir):
    regressor = TextClassifier.from_pretrained(tiny_model_dir, num_classes=1, text_pair=True)
    scores = np.linspace(0.0, 5.0, 4)
    history = regressor.fit((TEXTS[:4], TEXTS[4:]), scores, batch_size=2, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert regressor.predict((TEXTS[:4], TEXTS[4:]), verbose=0).shape == (4, 1)


def test_keras_file_and_model_dir_give_back_the_fine_tuned_model(tiny_model_dir, tmp_path, caplog):
    classifier = TextClassifier.from_pretrained(tiny_model_dir, num_classes=2,
                                                label_names=["a", "b"])
    classifier.fit(TEXTS, LABELS, batch_size=4, verbose=0)
    expected = classifier.predict(TEXTS, verbose=0)
    path = str(tmp_path / "clf.keras")
    classifier.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded, TextClassifier) and loaded.label_names == ["a", "b"]
    np.testing.assert_allclose(loaded.predict(TEXTS, verbose=0), expected, atol=1e-6, rtol=0)
    assert int(loaded.optimizer.iterations) == int(classifier.optimizer.iterations) == 2
    loaded.fit(TEXTS, LABELS, batch_size=4, verbose=0)  # compiled on load: trains on

    # from_pretrained on the fine-tuned model directory restores the head, as HF's does.
    classifier.save_model_dir(str(tmp_path / "fine_tuned"))
    again = TextClassifier.from_pretrained(str(tmp_path / "fine_tuned"), num_classes=2)
    assert again.label_names == ["a", "b"]
    np.testing.assert_allclose(again.predict(TEXTS, verbose=0), expected, atol=1e-6, rtol=0)
    taken = TextClassifier.from_pretrained(str(tmp_path / "fine_tuned"))  # its num_classes
    assert taken.num_classes == 2 and all(
        np.array_equal(a, b) for a, b in zip(taken.get_weights(), classifier.get_weights()))
    with caplog.at_level("WARNING"):
        other = TextClassifier.from_pretrained(str(tmp_path / "fine_tuned"), num_classes=3)
    assert "head of 2 classes; num_classes=3 gets a new, untrained head" in caplog.text
    assert other.label_names is None and other.head.units == 3
    with pytest.raises(TaskInputError, match="no fine-tuned classifier head to restore"):
        TextClassifier.from_pretrained(tiny_model_dir)


def test_model_dir_and_export_serve_the_same_logits(tiny_model_dir, tmp_path):
    classifier = TextClassifier.from_pretrained(tiny_model_dir, num_classes=2)
    expected = classifier.predict(TEXTS[:3], verbose=0)
    classifier.save_model_dir(str(tmp_path / "clf"))
    restored = restore_model(str(tmp_path / "clf"), "classifier")
    assert restored.label_names == ["0", "1"] and restored.lower_case
    ids = _fixed_ids(classifier, TEXTS[:3])
    np.testing.assert_allclose(restored.model(ids, training=False).numpy(), expected,
                               atol=1e-5, rtol=0)
    # from_pretrained on the written directory reads it back as a model directory.
    again = TextClassifier.from_pretrained(str(tmp_path / "clf"), num_classes=2)
    assert again.preprocessor.seq_length == classifier.preprocessor.seq_length
    export_path = classifier.export(str(tmp_path / "serving"))
    served = tf.saved_model.load(export_path).signatures["serving_default"](
        text=tf.constant(TEXTS[:3]))
    np.testing.assert_allclose(served["logits"].numpy(), expected, atol=1e-5, rtol=0)


def _copy_head(source, target):
    target.head.set_weights(source.head.get_weights())


def test_from_pretrained_reads_hf_and_google_research_folders_as_converted(
        tiny_hf_dir, tmp_path):
    from safetensors.numpy import load_file

    from tests.checkpoints.test_google_research import (
        _google_research_config,
        tf1_names,
        write_tf1_checkpoint,
    )

    model_dir = str(tmp_path / "converted")
    convert_checkpoint("huggingface", tiny_hf_dir, "model_dir", model_dir, do_lower_case=True)
    gr_dir = tmp_path / "gr"
    write_tf1_checkpoint(tf1_names(load_file(os.path.join(tiny_hf_dir, "model.safetensors"))),
                         str(gr_dir / "bert_model.ckpt"))
    _google_research_config(tiny_hf_dir, gr_dir / "bert_config.json")
    os.link(os.path.join(tiny_hf_dir, "vocab.txt"), gr_dir / "vocab.txt")
    reference = TextClassifier.from_pretrained(model_dir, num_classes=2, max_seq_length=16)
    texts = ["the cat sat", "a dog ran far away"]
    expected = reference.predict(texts, verbose=0)
    for folder in (tiny_hf_dir, str(gr_dir), str(gr_dir / "bert_model.ckpt")):
        classifier = TextClassifier.from_pretrained(folder, num_classes=2, max_seq_length=16,
                                                    do_lower_case=True)
        _copy_head(reference, classifier)
        np.testing.assert_allclose(classifier.predict(texts, verbose=0), expected,
                                   atol=1e-6, rtol=0)


def test_minilm_hf_folder_equals_convert_then_load(minilm_hf_dir, minilm_model_dir):
    converted = TextClassifier.from_pretrained(minilm_model_dir, num_classes=2)
    direct = TextClassifier.from_pretrained(minilm_hf_dir, num_classes=2)
    assert direct.preprocessor.lower_case == converted.preprocessor.lower_case is True
    _copy_head(converted, direct)
    np.testing.assert_allclose(direct.predict(TEXTS, verbose=0),
                               converted.predict(TEXTS, verbose=0), atol=1e-5, rtol=0)


def test_a_bfloat16_fit_step(tiny_model_dir):
    with policy_scope("mixed_bfloat16"):
        classifier = TextClassifier.from_pretrained(tiny_model_dir, num_classes=2)
        history = classifier.fit(TEXTS, LABELS, batch_size=4, verbose=0)
        logits = classifier.predict(TEXTS[:2], verbose=0)
    assert np.isfinite(history.history["loss"][0]) and logits.dtype == np.float32


def test_a_mirrored_fit_step(tiny_model_dir):
    strategy = get_strategy("mirrored")  # the two logical CPUs, reduced on one device
    with strategy.scope():
        classifier = TextClassifier.from_pretrained(tiny_model_dir, num_classes=2)
    history = classifier.fit(TEXTS, LABELS, batch_size=4, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert classifier.optimizer.iterations.numpy() == 2  # two global batches of 4, 2 per replica
    # A list read in order (a generator dataset) split over the replicas: every row its text's.
    logits = classifier.predict(TEXTS, batch_size=3, verbose=0)
    expected = classifier(_fixed_ids(classifier, TEXTS), training=False).numpy()
    np.testing.assert_allclose(logits, expected, atol=1e-5, rtol=0)


# Each worker of a two-worker MultiWorkerMirroredStrategy: predict, then fit and evaluate.
_WORKER = """
import json, os, sys
os.environ["TF_CONFIG"] = json.dumps({"cluster": {"worker": sys.argv[2].split(",")},
                                      "task": {"type": "worker", "index": int(sys.argv[3])}})
import tensorflow as tf
from bert_tf.keras_tasks import TextClassifier
strategy = tf.distribute.MultiWorkerMirroredStrategy()
with strategy.scope():
    classifier = TextClassifier.from_pretrained(sys.argv[1], num_classes=2)
texts = ["a few words", "more words here"]
print(classifier.predict(texts, verbose=0).shape)
for call in (lambda: classifier.fit(texts, [0, 1], verbose=0),
             lambda: classifier.evaluate(texts, [0, 1], verbose=0)):
    try:
        call()
    except ValueError as error:
        print(type(error).__name__, error)
"""


@pytest.mark.subprocess
def test_fit_and_evaluate_on_two_workers_are_one_line_naming_the_entry_points(tiny_model_dir):
    cluster = ",".join(f"127.0.0.1:{port}" for port in free_ports(2))
    workers = [subprocess.Popen([sys.executable, "-c", _WORKER, tiny_model_dir, cluster,
                                 str(index)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"})
               for index in range(2)]
    for worker in workers:
        stdout, stderr = worker.communicate(timeout=300)
        assert worker.returncode == 0, stderr[-3000:]
        shape, *refusals = stdout.splitlines()
        assert shape == "(2, 2)"  # predict builds from no batch and runs
        assert [line.split(" of a bert_tf")[0] for line in refusals] == [
            "UnsupportedStrategyError Keras `fit`", "UnsupportedStrategyError Keras `evaluate`"]
        assert all("--distribution_strategy=multi_worker_mirrored" in line
                   for line in refusals)


@pytest.mark.parametrize("x, y, match", [
    (TEXTS, ["music"] * 8, r"integer class ids 0\.\.1.*Map names to ids"),
    (TEXTS, [0, 1, 2, 0, 1, 0, 1, 0], r"y\[2\]=2 is outside 0\.\.1"),
    (TEXTS, [0.0, 1.0] * 4, r"integer class ids"),
    (TEXTS[:3] + [" "] + TEXTS[4:], LABELS, r"x\[3\] is an empty text"),
    ((TEXTS, TEXTS), LABELS, r"pair of text lists, but this model takes single texts"),
    ("one text", [0], r"one text; pass a list"),
    (TEXTS, LABELS[:5], r"`y` has 5 entries for 8 texts"),
    (tf.data.Dataset.from_tensor_slices((TEXTS, [0.5] * 8)).batch(4), None,
     r"labels must be integer class ids; they are float32"),
    (tf.data.Dataset.from_tensor_slices((TEXTS, LABELS)), None, r"Batch the dataset first"),
])
def test_bad_input_is_one_clear_error_before_any_step(tiny_model_dir, x, y, match):
    classifier = TextClassifier.from_pretrained(tiny_model_dir, num_classes=2)
    with pytest.raises(TaskInputError, match=match):
        classifier.fit(x, y, verbose=0)
    assert classifier.optimizer.iterations.numpy() == 0


def test_bad_construction_is_refused(tiny_model_dir):
    with pytest.raises(TaskInputError, match="max_seq_length=65 is above the model's "
                                             "max_position_embeddings=64"):
        TextClassifier.from_pretrained(tiny_model_dir, num_classes=2, max_seq_length=65)
    pair_model = TextClassifier.from_pretrained(tiny_model_dir, num_classes=2, text_pair=True)
    with pytest.raises(TaskInputError, match="takes text pairs"):
        pair_model.predict(TEXTS)
    with pytest.raises(CheckpointError, match="do_lower_case=False contradicts .*model_info"):
        TextClassifier.from_pretrained(tiny_model_dir, num_classes=2, do_lower_case=False)


def test_group_by_length_changes_the_batches_not_the_examples(tiny_model_dir):
    classifier = TextClassifier.from_pretrained(tiny_model_dir, num_classes=8)
    lengths = [1, 9, 2, 8, 3, 7, 4, 6]  # WordPieces of text i; label i names text i
    texts = [" ".join(["word"] * n) for n in lengths]

    def batches(**kwargs):
        data = classifier.text_dataset(texts, list(range(8)), batch_size=2, **kwargs)
        return [sorted(lengths[i] for i in y.numpy()) for _, y in data]

    assert batches(shuffle=False) == [[1, 9], [2, 8], [3, 7], [4, 6]]
    grouped = batches(shuffle=True, group_by_length=True)
    assert sorted(grouped) == [[1, 2], [3, 4], [6, 7], [8, 9]]  # each text once, alike paired
    history = classifier.fit(texts, list(range(8)), batch_size=2, group_by_length=True,
                             verbose=0)
    assert np.isfinite(history.history["loss"][0]) and int(classifier.optimizer.iterations) == 4
    with pytest.raises(TaskInputError, match="group_by_length applies to lists and arrays"):
        classifier.fit(tf.data.Dataset.from_tensor_slices((texts, list(range(8)))).batch(2),
                       group_by_length=True)


@pytest.mark.parametrize("group_by_length", [False, True])
def test_fit_datasets_run_without_the_autotune_thread(tiny_model_dir, group_by_length):
    # tf.data's autotuning thread makes deleting a used iterator wait out its sleep (16.6 s
    # measured), which Keras `fit` does at each epoch's start: the task datasets turn it off.
    classifier = TextClassifier.from_pretrained(tiny_model_dir, num_classes=2)
    texts = ["a few words", "more words here", "one", "two words"]
    for data in (classifier.text_dataset(texts, [0, 1, 0, 1], batch_size=2, shuffle=True,
                                         group_by_length=group_by_length),
                 classifier.text_dataset(tf.data.Dataset.from_tensor_slices(texts).batch(2))):
        assert data.options().autotune.enabled is False
        assert len(list(data)) == 2  # and still yields every batch
