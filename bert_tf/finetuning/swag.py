"""SWAG multiple choice (paper §4.4): a context and four endings, pick the right one.

SWAG's CSV columns are `video-id, fold-ind, startphrase, sent1, sent2, gold-source,
ending0..ending3, label`. As in the paper, each choice is the pair (sent1, sent2 + ending_i);
the four pairs are packed by `BertPreprocessor` into `[B, 4, S]` and scored by
`BertMultipleChoice`.
"""

import dataclasses

import numpy as np
import tensorflow as tf

from bert_tf.finetuning.table_reader import DataError, read_rows
from bert_tf.finetuning.text_batches import text_batches
from bert_tf.layers.traced_call import traced_call

NUM_CHOICES = 4


@dataclasses.dataclass
class ChoiceExamples:
    contexts: list    # [N] first segments
    choices: list     # [N][num_choices] second segments
    labels: np.ndarray | None   # int32 [N]
    ids: list
    source: str

    def __len__(self):
        return len(self.contexts)


def read_swag(path, with_labels=True, num_choices=NUM_CHOICES):
    """Reads a SWAG CSV (train.csv / val.csv; test.csv has no `label`).

    Raises:
      DataError: missing or empty file, missing column, or a label outside 0..num_choices-1
        (file and line named).
    """
    endings = [f"ending{i}" for i in range(num_choices)]
    columns = ["sent1", "sent2"] + endings + (["label"] if with_labels else [])
    rows = read_rows(path, columns)
    labels = []
    for number, row in rows:
        if with_labels:
            label = row["label"].strip()
            if label not in {str(i) for i in range(num_choices)}:
                raise DataError(f"{path}:{number}: label {label!r} is not one of "
                                f"0..{num_choices - 1}.")
            labels.append(int(label))
    return ChoiceExamples(
        contexts=[row["sent1"] for _, row in rows],
        choices=[[f"{row['sent2']} {row[e]}".strip() for e in endings] for _, row in rows],
        labels=np.asarray(labels, np.int32) if with_labels else None,
        ids=[row.get("fold-ind", str(i)) for i, (_, row) in enumerate(rows)],
        source=path)


def make_dataset(examples, preprocessor, batch_size, training=False, seed=0, skip_batches=0):
    """Batches of (encoder inputs `[B, C, W]`, labels `[B]`); tokenized in-graph, W as the
    preprocessor's padding gives it (training batches sorted by length unless "fixed")."""
    num_choices = len(examples.choices[0])
    contexts = np.repeat(np.asarray(examples.contexts, object)[:, None], num_choices, axis=1)
    texts = (contexts.astype(str), np.asarray(examples.choices, str))

    traced = traced_call(preprocessor)

    def pack(texts):
        first, second = texts
        inputs = traced((tf.reshape(first, [-1]), tf.reshape(second, [-1])))
        return {name: tf.reshape(value, [-1, num_choices, tf.shape(value)[-1]])
                for name, value in inputs.items()}

    return text_batches(texts, examples.labels, len(examples), pack, batch_size,
                        training, seed, skip_batches,
                        padding=preprocessor.padding)
