"""run_sentence_embeddings' pairs: the same rows from .jsonl, .tsv, .csv and .parquet files;
its schedule: full batches without a repeated text, epochs cut to the run's length."""

import csv
import json
import re

import pyarrow
import pyarrow.parquet
import pytest

from bert_tf.finetuning.table_reader import DataError
from bert_tf.keras_tasks.sentence_embeddings_runner import (
    SentenceEmbeddingOptions,
    read_pairs,
    training_schedule,
)
from tests.keras_tasks.conftest import TEXTS

COLUMNS = {"question": TEXTS + [""], "answer": [t.upper() for t in TEXTS] + ["empty anchor"]}


def _write(path):
    names = list(COLUMNS)
    rows = [dict(zip(names, values)) for values in zip(*COLUMNS.values())]
    if path.suffix == ".parquet":
        pyarrow.parquet.write_table(pyarrow.table(COLUMNS), str(path))
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    else:
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, names, delimiter="\t" if path.suffix == ".tsv" else ",")
            writer.writeheader()
            writer.writerows(rows)
    return SentenceEmbeddingOptions(init_checkpoint="unused", train_file=str(path),
                                    output_dir="unused", anchor_column="question",
                                    positive_column="answer", train_batch_size=4)


@pytest.mark.parametrize("suffix", [".jsonl", ".tsv", ".csv", ".parquet"])
def test_every_table_format_gives_the_same_pairs(tmp_path, suffix):
    rows, skipped = read_pairs(_write(tmp_path / f"pairs{suffix}"))
    assert rows == list(zip(TEXTS, [t.upper() for t in TEXTS])) and skipped == 1


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_a_missing_column_names_the_ones_there(tmp_path, suffix):
    options = _write(tmp_path / f"pairs{suffix}")
    options.negative_column = "hard_negative"
    has = "the row has ['answer', 'question']" if suffix == ".jsonl" else \
        "the file has ['question', 'answer']"
    with pytest.raises(DataError, match=re.escape(f"missing column(s) ['hard_negative']; {has}")):
        read_pairs(options)


def test_the_schedule_takes_full_batches_and_cuts_the_last_epoch(tmp_path):
    options = _write(tmp_path / "pairs.jsonl")
    rows, _ = read_pairs(options)
    options.num_train_epochs = 1.5
    schedule = training_schedule(rows, options)
    assert len(schedule) == 3 and all(len(batch) == 4 for batch in schedule)
    assert sorted(schedule[0] + schedule[1]) == list(range(8))  # the first epoch, whole
