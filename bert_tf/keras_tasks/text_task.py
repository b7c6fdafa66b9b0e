"""TextTask: what every raw-text Keras task model adds to its bert_tf model class.

A task model is one of the `bert_tf.models` heads (holding a `BertEncoder` instance) plus a
`BertPreprocessor`, as keras-hub's `Task` holds a backbone and a preprocessor. `fit`,
`evaluate` and `predict` take raw text (`text_inputs`), tokenized in the `tf.data` pipeline
with batches padded to their longest sequence; with `preprocessor=None`, or a dict of ids as
`x`, they are Keras's own. The model compiles itself with fine-tuning defaults; `compile()`
overrides them. `save_model_dir` writes a model directory (what `run_*` and `tools/` read) and
`export` goes through `bert_tf.export`, the one SavedModel path.
"""

import os
import tempfile

import keras
import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf.checkpoints.building import load_pretrained
from bert_tf.checkpoints.model_dir import write_model_dir
from bert_tf.export import export_saved_model
from bert_tf.file_io import refuse_existing
from bert_tf.keras_tasks.text_inputs import TaskInputError, text_dataset
from bert_tf.layers.packing import training_attention_groups
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor
from bert_tf.training.optimization import NO_WEIGHT_DECAY, FusedAdamW

# keras-hub's fine-tuning learning rate for its BERT task models.
DEFAULT_LEARNING_RATE = 5e-5
DEFAULT_WEIGHT_DECAY = 0.01


def check_preprocessor(encoder, preprocessor):
    """Raises `TaskInputError` if the preprocessor packs longer than the encoder's positions."""
    if preprocessor is None:
        return
    if not isinstance(preprocessor, BertPreprocessor):
        raise TypeError("`preprocessor` must be a BertPreprocessor or None; received "
                        f"{type(preprocessor).__name__}.")
    check_seq_length(preprocessor.seq_length, encoder.config.max_position_embeddings)


def check_seq_length(seq_length, max_position_embeddings):
    """Raises `TaskInputError` if `seq_length` is above the model's position table."""
    if seq_length > max_position_embeddings:
        raise TaskInputError(
            f"max_seq_length={seq_length} is above the model's max_position_embeddings="
            f"{max_position_embeddings}; pass max_seq_length <= {max_position_embeddings}.")


def saved_head_classes(pretrained, head):
    """The class count of a fine-tuned `head` (`model_dir.HEADS`) in the folder, else None.

    A model directory recording that head (`save_model_dir`, `run_classifier`) has one, and a
    Hugging Face folder of the matching architecture (`BertForSequenceClassification`...).
    """
    return pretrained.num_labels if pretrained.head == head else None


def _saved_task_kwargs(pretrained, kwargs):
    """Constructor arguments the folder's own head records (label names, problem type,
    classifier dropout), where the caller gave none."""
    saved = {"label_names": pretrained.label_names, "problem_type": pretrained.problem_type,
             "dropout_rate": pretrained.dropout_rate}
    return {key: value for key, value in saved.items()
            if value is not None and kwargs.get(key) is None}


def default_optimizer():
    """AdamW at keras-hub's 5e-5, no decay on biases and LayerNorm (the paper's fine-tuning)."""
    optimizer = FusedAdamW(learning_rate=DEFAULT_LEARNING_RATE, weight_decay=DEFAULT_WEIGHT_DECAY)
    optimizer.exclude_from_weight_decay(var_names=list(NO_WEIGHT_DECAY))
    return optimizer


def packs_training(packed_training, jit_compile, strategy):
    """Whether a task model's training packs real tokens: `packed_training` if a bool, else
    ("auto") unless XLA compiles the step or TPUs run it (packing changes the shapes with
    every batch). An epoch of MiniLM on BBC News sentences took 50.9 s packed against 82.0 s
    padded, on WNUT-16 NER 61.5 against 68.4 s (6beca71, 2026-12-06).

    >>> packs_training("auto", jit_compile=False, strategy=tf.distribute.get_strategy())
    True
    """
    if isinstance(packed_training, bool):
        return packed_training
    if packed_training != "auto":
        raise TaskInputError(f"packed_training={packed_training!r}: pass True, False or "
                             "\"auto\".")
    return not jit_compile and not isinstance(strategy, tf.distribute.TPUStrategy)


class TextTask:
    """Mixin over a `BertTaskModel` subclass; the class sets the attributes below.

    Class attributes:
      model_dir_head: the `head` a model directory records (`model_dir.HEADS`).
    Instance attributes (set by the class's `__init__` before `compile()`):
      preprocessor: a `BertPreprocessor` or None; text_pair: whether `x` is text pairs.
    """

    model_dir_head = None

    @classmethod
    def pretrained_parts(cls, folder, max_seq_length=None, do_lower_case=None,
                         padding="longest"):
        """`(encoder, preprocessor, pretrained)` of a checkpoint folder (`load_pretrained`)."""
        return cls.parts_of(load_pretrained(folder, do_lower_case), max_seq_length, padding)

    @staticmethod
    def parts_of(pretrained, max_seq_length=None, padding="longest"):
        """`(encoder, preprocessor, pretrained)` of a read `Pretrained`."""
        preprocessor = pretrained.preprocessor(max_seq_length, padding)
        check_preprocessor(pretrained.encoder, preprocessor)
        return pretrained.encoder, preprocessor, pretrained

    @classmethod
    def labelled_from_pretrained(cls, folder, num_classes=None, max_seq_length=None,
                                 do_lower_case=None, padding="longest", **kwargs):
        """`from_pretrained` of a task with a class head (`num_classes`, `label_names`).

        A model directory holding this task's fine-tuned head gives it back, weights and label
        names, when `num_classes` is None or equal to its size, as Hugging Face's
        `from_pretrained` does on a fine-tuned folder; another `num_classes` gets a fresh
        head, with a logged warning (keras-hub's `from_preset(..., num_classes=...)`, Hugging
        Face's `ignore_mismatched_sizes=True`): fine-tuning a fine-tuned model for a new
        label set is a normal thing to do.

        Raises:
          TaskInputError: `num_classes` is None and the folder holds no such head.
        """
        encoder, preprocessor, pretrained = cls.pretrained_parts(
            folder, max_seq_length, do_lower_case, padding)
        saved = saved_head_classes(pretrained, cls.model_dir_head)
        if num_classes is None:
            if saved is None:
                raise TaskInputError(f"{folder} holds no fine-tuned {cls.model_dir_head} head "
                                     "to restore: pass num_classes for a new one.")
            num_classes = saved
        if saved == num_classes:
            kwargs.update(_saved_task_kwargs(pretrained, kwargs))
        model = cls(encoder, num_classes, preprocessor=preprocessor, **kwargs)
        if saved == num_classes:
            model.head.set_weights(pretrained.task_head.get_weights())
        elif saved is not None:
            logging.warning("%s holds a fine-tuned %s head of %d classes; num_classes=%d gets a "
                            "new, untrained head.", folder, cls.model_dir_head, saved,
                            num_classes)
        return model

    def text_task_config(self):
        """The preprocessor and text_pair entries of `get_config()`."""
        preprocessor = (None if self.preprocessor is None
                        else keras.saving.serialize_keras_object(self.preprocessor))
        return {"preprocessor": preprocessor, "text_pair": self.text_pair}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("preprocessor"), dict):
            config["preprocessor"] = keras.saving.deserialize_keras_object(config["preprocessor"])
        return super().from_config(config)

    def default_loss(self):
        raise NotImplementedError

    def default_metrics(self):
        raise NotImplementedError

    def compile(self, optimizer="auto", loss="auto", metrics="auto", packed_training="auto",
                **kwargs):
        """Keras `compile`; "auto" picks AdamW at 5e-5 and the task's loss and metrics.

        Batches padded to their longest come in many widths: XLA would compile each one, so
        `jit_compile` defaults to False unless the preprocessor pads to a fixed width.
        `packed_training` sets the encoder's (`BertEncoder.packed_training`: training on the
        real tokens only, the padded step's values and gradients for less work); "auto" packs
        unless the step is XLA-compiled or runs on TPUs, whose shapes must be static. The
        encoder's attention groups in training follow the preprocessor's `seq_length`
        (`layers.packing.training_attention_groups`).
        """
        fixed = self.preprocessor is not None and self.preprocessor.padding == "fixed"
        kwargs.setdefault("jit_compile", "auto" if fixed else False)
        super().compile(
            optimizer=default_optimizer() if optimizer == "auto" else optimizer,
            loss=self.default_loss() if loss == "auto" else loss,
            metrics=self.default_metrics() if metrics == "auto" else metrics, **kwargs)
        self.encoder.packed_training = packs_training(packed_training, self.jit_compile,
                                                      self.distribute_strategy)
        if self.preprocessor is not None:
            self.encoder.training_attention_groups = training_attention_groups(
                self.preprocessor.seq_length)

    def compile_from_config(self, config):
        # Keras skips `compile` on load when it is overridden; ours takes Keras's arguments, so
        # this is Keras's own `compile_from_config` (the optimizer state then loads too).
        self.compile(**keras.saving.deserialize_keras_object(config))
        if self.built:
            self.optimizer.build(self.trainable_variables)

    def check_labels(self, y):
        """Numpy labels from `y`, or `TaskInputError`; the class checks type and range."""
        raise NotImplementedError

    def check_label_spec(self, spec):
        """The same check for a dataset's label `TensorSpec`."""
        raise NotImplementedError

    def _takes_ids(self, x):
        # A dataset of ids too: Keras's `fit` calls `evaluate` on the validation batches it
        # was given, which are already tokenized.
        if isinstance(x, tf.data.Dataset):
            x = x.element_spec[0] if isinstance(x.element_spec, tuple) else x.element_spec
        return self.preprocessor is None or isinstance(x, dict)

    def text_dataset(self, x, y=None, sample_weight=None, batch_size=None, shuffle=False,
                     group_by_length=False):
        """The batched `tf.data` pipeline `fit`/`evaluate`/`predict` run on (`text_inputs`)."""
        return text_dataset(self.preprocessor, x, y, sample_weight, batch_size, shuffle,
                            self.text_pair, self.check_labels, self.check_label_spec,
                            group_by_length=group_by_length)

    def fit(self, x=None, y=None, batch_size=None, sample_weight=None, validation_data=None,
            shuffle=True, group_by_length=False, **kwargs):
        """Keras `fit` on raw texts; `group_by_length=True` batches texts of like length
        (`text_inputs.text_dataset`) for less padding, as the entry points' training does."""
        if self._takes_ids(x):
            return super().fit(x, y, batch_size=batch_size, sample_weight=sample_weight,
                               validation_data=validation_data, shuffle=shuffle, **kwargs)
        if kwargs.get("validation_split"):
            raise TaskInputError("validation_split does not apply to raw texts; pass "
                                 "validation_data=(texts, labels).")
        data = self.text_dataset(x, y, sample_weight, batch_size, shuffle, group_by_length)
        if validation_data is not None:
            if not hasattr(validation_data, "element_spec"):
                validation_data = self.text_dataset(*validation_data, batch_size=batch_size)
            else:
                validation_data = self.text_dataset(validation_data)
        return super().fit(data, validation_data=validation_data, shuffle=False, **kwargs)

    def evaluate(self, x=None, y=None, batch_size=None, sample_weight=None, **kwargs):
        if self._takes_ids(x):
            return super().evaluate(x, y, batch_size=batch_size, sample_weight=sample_weight,
                                    **kwargs)
        return super().evaluate(self.text_dataset(x, y, sample_weight, batch_size), **kwargs)

    def predict(self, x, batch_size=None, **kwargs):
        if self._takes_ids(x):
            return super().predict(x, batch_size=batch_size, **kwargs)
        return super().predict(self.text_dataset(x, batch_size=batch_size), **kwargs)

    def model_dir_extras(self):
        """Extra `model_info.json` entries (label names, ...)."""
        return {}

    def save_model_dir(self, model_dir):
        """Writes a model directory (config, vocab, checkpoint, model_info.json).

        `run_*` entry points (`--model_dir`), `tools/export_saved_model.py --head=...` and
        `from_pretrained` read it.

        Raises:
          TaskInputError: no preprocessor (its vocab and casing belong in the directory).
          OutputExistsError: `model_dir` exists and is not empty.
        """
        if self.preprocessor is None:
            raise TaskInputError("save_model_dir needs the model's preprocessor: a model "
                                 "directory records its vocab, casing and max_seq_length.")
        model_dir = os.fspath(model_dir)
        refuse_existing(model_dir, "model directory")
        info = dict(self.model_dir_extras(), head=self.model_dir_head,
                    do_lower_case=self.preprocessor.lower_case,
                    max_seq_length=self.preprocessor.seq_length, source="keras_task")
        with self.preprocessor.vocab_path() as vocab_file:
            return write_model_dir(model_dir, self.encoder.config, vocab_file=vocab_file,
                                   info=info, **self.checkpoint_items())

    def export(self, export_dir, **kwargs):
        """Exports a raw-text SavedModel for TF Serving via `bert_tf.export.export_saved_model`.

        The model is written as a model directory first, so the export is the same as
        `tools/export_saved_model.py` on `save_model_dir`'s output. `kwargs`: that
        function's (`seq_length`, `version`, `padding`, ...).

        Returns:
          The SavedModel's path, `export_dir/<version>`.
        """
        with tempfile.TemporaryDirectory() as model_dir:
            self.save_model_dir(model_dir)
            return export_saved_model(model_dir, export_dir, head=self.model_dir_head,
                                      **self.export_kwargs(), **kwargs)

    def export_kwargs(self):
        return {}


class UnlabelledTextTask(TextTask):
    """A text task without labels of its own (embeddings, masked LM): no default loss or
    metrics, and any target the user's own loss takes."""

    def default_loss(self):
        raise TaskInputError(f"{type(self).__name__} has no labels of its own and so no default "
                             "loss: pass compile(loss=...).")

    def default_metrics(self):
        return None

    def check_labels(self, y):
        return np.asarray(y)

    def check_label_spec(self, spec):
        del spec  # any target the user's loss takes
