"""`TaskAdapter`: what one task gives the fine-tuning driver; `predict_outputs`, which adapters
share."""

import dataclasses

import numpy as np
import tensorflow as tf

from bert_tf.finetuning.table_reader import DataError
from bert_tf.layers.traced_call import traced_call


@dataclasses.dataclass
class TaskAdapter:
    """What one task gives the driver (`bert_tf.finetuning.driver.run_finetuning`).

    Attributes:
      info: JSON extras for the model directory, e.g. `{"head": "classifier",
        "task_name": "mrpc", "label_names": [...]}`.
      build_model: `encoder -> BertTaskModel`.
      loss_fn: `global_batch_size -> loss_fn(batch, outputs) -> (loss, metrics)` for the loop.
      train_batches: `(batch_size, skip_batches) -> repeating dataset of dict batches` (model
        inputs plus targets), or None when there is no training data.
      num_train_examples: examples (windows, sentences) per epoch.
      evaluate: `model -> {metric: value}` on the dev set with the official metric, or None.
      main_metric: the key of `evaluate`'s result that picks the best epoch (higher is better).
      predict: `(model, output_dir) -> list of written files`, or None.

    Example:
    >>> adapter = TaskAdapter(info={"head": "classifier"}, build_model=build, loss_fn=loss)
    """

    info: dict
    build_model: object
    loss_fn: object
    train_batches: object = None
    num_train_examples: int = 0
    evaluate: object = None
    main_metric: str | None = None
    predict: object = None


def predict_outputs(model, dataset):
    """Runs `model` in inference mode over `dataset` (inputs, or (inputs, targets)) → numpy.

    Batches packed to their own longest sequence give sequence outputs of different widths:
    each is padded with zeros to the widest before they are joined, so row i is example i and
    its real positions hold the model's outputs (the zeros past a batch's width are no output).

    Raises:
      DataError: the dataset has no batch.
    """
    forward = traced_call(model, training=False)
    inputs_spec = dataset.element_spec
    inputs_spec = inputs_spec[0] if isinstance(inputs_spec, tuple) else inputs_spec
    # Traced once for the dataset's batch shapes (the batch size is None there), so the last,
    # partial batch and the next evaluation of this model call the same graph.
    forward.get_concrete_function(inputs_spec)
    outputs = []
    for batch in dataset:
        inputs = batch[0] if isinstance(batch, tuple) else batch
        outputs.append(tf.nest.map_structure(lambda t: t.numpy(), forward(inputs)))
    if not outputs:
        raise DataError("No batches to predict on: the dataset is empty.")
    return tf.nest.map_structure(_concatenate_padded, *outputs)


def _concatenate_padded(*parts):
    """Joins `[B_i, ...]` arrays on axis 0, zero-padding every other axis to the largest."""
    widest = np.max([part.shape for part in parts], axis=0)[1:]
    return np.concatenate([np.pad(part, [(0, 0)] + [(0, w - n) for w, n in
                                                     zip(widest, part.shape[1:])])
                           for part in parts])
