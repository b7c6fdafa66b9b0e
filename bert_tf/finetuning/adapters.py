"""`TaskAdapter`s of the paper's four task kinds: sentence(-pair) classification/regression,
SQuAD span extraction, token tagging and multiple choice.

Each adapter wires a task's data (already read), model head, loss and official metric into
`finetuning.run_finetuning`. Losses follow the loop's contract: per-replica sum of
per-example losses over the global batch size, metrics as (numerator, denominator) sums.
"""

import os

import tensorflow as tf

from bert_tf import metrics as metrics_lib
from bert_tf.finetuning import conll, sentence_task, squad_features, squad_postprocess, swag
from bert_tf.finetuning.glue import write_submission
from bert_tf.finetuning.task_adapter import TaskAdapter, predict_outputs
from bert_tf.models import BertClassifier, BertMultipleChoice, BertSpanLabeler, BertTokenClassifier
from bert_tf.training.accuracy import top1_correct


def _as_dict(dataset, label_key="label_ids"):
    """(inputs, targets) batches → one dict, as the train loop's `loss_fn` reads them."""
    def merge(inputs, targets):
        targets = targets if isinstance(targets, dict) else {label_key: targets}
        return {**inputs, **targets}
    return dataset.map(merge)


def _average(per_example, global_batch):
    return tf.nn.compute_average_loss(per_example, global_batch_size=global_batch)


def _accuracy_loss(global_batch):
    """Softmax cross-entropy over the last axis, with accuracy (classes or choices)."""
    def loss_fn(batch, logits):
        labels = tf.cast(batch["label_ids"], tf.int32)
        per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        correct = top1_correct(logits, labels)
        count = tf.cast(tf.size(labels), tf.float32)
        return _average(per_example, global_batch), {"accuracy": (tf.reduce_sum(correct), count)}
    return loss_fn


def _regression_loss(global_batch):
    def loss_fn(batch, logits):
        per_example = tf.square(logits[:, 0] - tf.cast(batch["label_ids"], tf.float32))
        count = tf.cast(tf.size(per_example), tf.float32)
        return _average(per_example, global_batch), {"mse": (tf.reduce_sum(per_example), count)}
    return loss_fn


def classifier_adapter(task, preprocessor, train=None, dev=None, test=None, batch_size=32,
                       seed=0):
    """GLUE / table tasks with `BertClassifier`; `train`, `dev`, `test` are `SentenceExamples`."""

    def evaluate(model):
        logits = predict_outputs(model, sentence_task.make_dataset(dev, preprocessor, batch_size))
        predictions = sentence_task.predictions_from_logits(task, logits)
        return sentence_task.compute_metrics(task, dev.labels, predictions)

    def predict(model, output_dir):
        logits = predict_outputs(model, sentence_task.make_dataset(test, preprocessor, batch_size))
        predictions = sentence_task.predictions_from_logits(task, logits)
        if task.submission_name:
            return [write_submission(task, test, predictions, output_dir)]
        path = os.path.join(output_dir, "test_results.tsv")
        with tf.io.gfile.GFile(path, "w") as f:
            f.write("index\tprediction\n")
            for index, value in zip(test.ids, predictions):
                label = value if task.regression else task.label_names[int(value)]
                f.write(f"{index}\t{label}\n")
        return [path]

    def train_batches(size, skip):
        return _as_dict(sentence_task.make_dataset(train, preprocessor, size, training=True,
                                                   seed=seed, skip_batches=skip))

    return TaskAdapter(
        info={"head": "classifier", "task_name": task.name,
              "label_names": None if task.regression else list(task.label_names)},
        build_model=lambda encoder: BertClassifier(encoder, task.num_outputs),
        loss_fn=_regression_loss if task.regression else _accuracy_loss,
        train_batches=train_batches if train is not None else None,
        num_train_examples=len(train) if train is not None else 0,
        evaluate=evaluate if dev is not None else None, main_metric=task.metrics[0],
        predict=predict if test is not None else None)


def _span_loss(global_batch):
    def loss_fn(batch, outputs):
        start = tf.nn.sparse_softmax_cross_entropy_with_logits(
            batch["start_positions"], outputs["start_logits"])
        end = tf.nn.sparse_softmax_cross_entropy_with_logits(
            batch["end_positions"], outputs["end_logits"])
        per_example = (start + end) / 2.0
        count = tf.cast(tf.size(per_example), tf.float32)
        metrics = {"span_loss": (tf.reduce_sum(per_example), count)}
        return _average(per_example, global_batch), metrics
    return loss_fn


def squad_adapter(train_features=None, eval_set=None, predict_set=None, version_2=False,
                  n_best_size=20, max_answer_length=30, null_score_diff_threshold=0.0,
                  batch_size=32, seed=0, padding="fixed"):
    """SQuAD with `BertSpanLabeler`. `eval_set`, `predict_set`: (examples, features, data).

    `padding` (fixed, longest, buckets) cuts each batch of windows (`squad_features.make_dataset`).
    """

    def answers(model, examples, features):
        logits = predict_outputs(model, squad_features.make_dataset(features, batch_size,
                                                                    padding=padding))
        return squad_postprocess.postprocess_predictions(
            examples, features, logits["start_logits"], logits["end_logits"], n_best_size,
            max_answer_length, version_2, null_score_diff_threshold)

    def evaluate(model):
        examples, features, data = eval_set
        predictions, _, null_odds = answers(model, examples, features)
        if version_2:
            return metrics_lib.evaluate_v2(data, predictions, null_odds or None)
        return metrics_lib.evaluate_v1(data, predictions)

    def predict(model, output_dir):
        examples, features, _ = predict_set
        return squad_postprocess.write_predictions(output_dir, *answers(model, examples, features))

    def train_batches(size, skip):
        return _as_dict(squad_features.make_dataset(train_features, size, training=True,
                                                    seed=seed, skip_batches=skip,
                                                    padding=padding))

    return TaskAdapter(
        info={"head": "span_labeler", "task_name": "squad_v2" if version_2 else "squad_v1.1"},
        build_model=BertSpanLabeler, loss_fn=_span_loss,
        train_batches=train_batches if train_features is not None else None,
        num_train_examples=len(train_features) if train_features is not None else 0,
        evaluate=evaluate if eval_set is not None else None, main_metric="f1",
        predict=predict if predict_set is not None else None)


def _tagging_loss(global_batch):
    """Cross-entropy on labelled positions (first pieces), averaged over the batch's labelled
    tokens.

    As the Model Garden's tagging task and Hugging Face's token classifiers: every labelled
    token weighs the same, whatever the length of its sentence. Each replica (or micro-batch)
    averages its own tokens and weighs that mean by its share of the global batch.
    """
    def loss_fn(batch, logits):
        labels = batch["label_ids"]
        weights = tf.cast(labels != conll.IGNORE, tf.float32)
        labelled = tf.maximum(labels, 0)  # IGNORE positions carry weight 0
        per_token = tf.nn.sparse_softmax_cross_entropy_with_logits(labelled, logits)
        token_mean = tf.math.divide_no_nan(tf.reduce_sum(per_token * weights),
                                           tf.reduce_sum(weights))
        share = tf.cast(tf.shape(labels)[0], tf.float32) / global_batch
        correct = top1_correct(logits, labelled)
        return token_mean * share, {
            "token_accuracy": (tf.reduce_sum(correct * weights), tf.reduce_sum(weights))}
    return loss_fn


def tagger_adapter(label_names, train=None, dev=None, test=None, batch_size=32, seed=0,
                   padding="fixed"):
    """NER with `BertTokenClassifier`; `train`, `dev`, `test` are (sentences, features).

    `padding` (fixed, longest, buckets) cuts each batch of sentences (`conll.make_dataset`).
    """

    def tags(model, sentences, features):
        logits = predict_outputs(model, conll.make_dataset(features, batch_size,
                                                           padding=padding))
        return conll.predicted_tags(sentences, features, logits, label_names)

    def evaluate(model):
        sentences, features = dev
        counts = metrics_lib.evaluate_tags(sentences.tags, tags(model, sentences, features))
        return counts.overall()

    def predict(model, output_dir):
        sentences, features = test
        path = os.path.join(output_dir, "test_predictions.txt")
        with tf.io.gfile.GFile(path, "w") as f:  # conlleval's input format
            for words, gold, guess in zip(sentences.words, sentences.tags,
                                          tags(model, sentences, features)):
                f.write("".join(f"{w} {g} {p}\n" for w, g, p in zip(words, gold, guess)))
                f.write("\n")
        return [path]

    def train_batches(size, skip):
        return _as_dict(conll.make_dataset(train[1], size, training=True, seed=seed,
                                           skip_batches=skip, padding=padding))

    return TaskAdapter(
        info={"head": "token_classifier", "label_names": list(label_names)},
        build_model=lambda encoder: BertTokenClassifier(encoder, len(label_names)),
        loss_fn=_tagging_loss,
        train_batches=train_batches if train is not None else None,
        num_train_examples=len(train[1].label_ids) if train is not None else 0,
        evaluate=evaluate if dev is not None else None, main_metric="f1",
        predict=predict if test is not None else None)


def choice_adapter(preprocessor, train=None, dev=None, test=None, batch_size=32, seed=0):
    """SWAG with `BertMultipleChoice`; `train`, `dev`, `test` are `ChoiceExamples`."""
    num_choices = len((train or dev or test).choices[0])

    def evaluate(model):
        logits = predict_outputs(model, swag.make_dataset(dev, preprocessor, batch_size))
        return {"accuracy": metrics_lib.accuracy(dev.labels, logits.argmax(-1))}

    def predict(model, output_dir):
        logits = predict_outputs(model, swag.make_dataset(test, preprocessor, batch_size))
        path = os.path.join(output_dir, "test_predictions.csv")
        with tf.io.gfile.GFile(path, "w") as f:
            f.write("id,pred\n")
            f.write("".join(f"{i},{p}\n" for i, p in zip(test.ids, logits.argmax(-1))))
        return [path]

    def train_batches(size, skip):
        return _as_dict(swag.make_dataset(train, preprocessor, size, training=True, seed=seed,
                                          skip_batches=skip))

    return TaskAdapter(
        info={"head": "multiple_choice", "num_choices": num_choices},
        build_model=lambda encoder: BertMultipleChoice(encoder, num_choices),
        loss_fn=_accuracy_loss,
        train_batches=train_batches if train is not None else None,
        num_train_examples=len(train) if train is not None else 0,
        evaluate=evaluate if dev is not None else None, main_metric="accuracy",
        predict=predict if test is not None else None)
