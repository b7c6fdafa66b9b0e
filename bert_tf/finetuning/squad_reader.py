"""SQuAD v1.1 / v2.0 examples from the official JSON files or TFDS `squad/v1.1`, `squad/v2.0`."""

import dataclasses
import json

from absl import logging

from bert_tf.errors import require_extra
from bert_tf.finetuning.table_reader import DataError, read_text


@dataclasses.dataclass
class SquadExample:
    """One question on one context; character offsets index `context`.

    `answer_start`/`answer_text` are the training target (the first gold answer), None for a
    question without an answer or when reading for evaluation; `answers` keeps every gold text.
    """

    qas_id: str
    question: str
    context: str
    answers: list
    is_impossible: bool = False
    answer_start: int | None = None
    answer_text: str | None = None


def load_squad_json(path):
    """The `data` list of a SQuAD JSON file (the part the official evaluation scripts read)."""
    text = read_text(path)
    if not text.strip():
        raise DataError(f"{path} is empty.")
    try:
        data = json.loads(text)["data"]
    except json.JSONDecodeError as error:
        raise DataError(f"{path}: not valid JSON ({error.msg}, line {error.lineno}).") from None
    except (KeyError, TypeError):
        data = None
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a SQuAD object with a top-level \"data\" "
                        "list.")
    return data


def _field(mapping, key, where, kind=None):
    """`mapping[key]`, which must be of type `kind` when given."""
    if not isinstance(mapping, dict) or key not in mapping:
        raise DataError(f"{where}: missing key {key!r}.")
    value = mapping[key]
    if kind is not None and not isinstance(value, kind):
        raise DataError(f"{where}: {key!r} must be of type {kind.__name__}, found "
                        f"{type(value).__name__}.")
    return value


def _answer_matches(context, start, text):
    """google-research's check: the whitespace words covering the span contain the answer."""
    end = start + len(text)  # exclusive
    if not text.strip() or start < 0 or end > len(context):
        return False
    left, right = start, end
    while left > 0 and not context[left - 1].isspace():
        left -= 1
    while right < len(context) and not context[right].isspace():
        right += 1
    return " ".join(text.split()) in " ".join(context[left:right].split())


def parse_squad_examples(data, is_training, version_2_with_negative=False, source="SQuAD data"):
    """Examples from a SQuAD `data` list.

    For training, a question whose first answer's `answer_start` does not point at its text is
    skipped and counted, as google-research's reader does (it logs "Could not find answer").

    Returns:
      (examples, number of skipped questions).

    Raises:
      DataError: a missing key (the article, paragraph and question are named), or no examples.
    """
    examples, skipped = [], 0
    for a, article in enumerate(data):
        for p, paragraph in enumerate(_field(article, "paragraphs", f"{source}: data[{a}]", list)):
            where = f"{source}: data[{a}].paragraphs[{p}]"
            context = _field(paragraph, "context", where, str)
            for q, qa in enumerate(_field(paragraph, "qas", where, list)):
                qa_where = f"{where}.qas[{q}]"
                qas_id = str(_field(qa, "id", qa_where))
                question = _field(qa, "question", f"{qa_where} (id {qas_id})", str)
                answers = qa.get("answers", [])
                if not isinstance(answers, list):
                    raise DataError(f"{qa_where} (id {qas_id}): 'answers' must be a list.")
                impossible = bool(qa.get("is_impossible", False)) if version_2_with_negative \
                    else False
                example = SquadExample(qas_id, question, context, answers, impossible)
                if is_training and not impossible:
                    if not answers:
                        raise DataError(f"{qa_where} (id {qas_id}): a training question needs an "
                                        "answer (or is_impossible with --version_2_with_negative).")
                    first = answers[0]
                    text = _field(first, "text", f"{qa_where}.answers[0]", str)
                    start = _field(first, "answer_start", f"{qa_where}.answers[0]", int)
                    if not _answer_matches(context, start, text):
                        logging.warning("Could not find answer %r at answer_start %d (id %s); "
                                        "skipping it.", text, start, qas_id)
                        skipped += 1
                        continue
                    example.answer_start, example.answer_text = start, text
                examples.append(example)
    if not examples:
        raise DataError(f"{source}: no questions to read.")
    if skipped:
        logging.warning("Skipped %d of %d training questions whose answer_start does not match "
                        "the answer text.", skipped, skipped + len(examples))
    return examples, skipped


def read_squad_examples(path, is_training, version_2_with_negative=False):
    """`parse_squad_examples` of a SQuAD JSON file; returns (examples, skipped, data)."""
    data = load_squad_json(path)
    examples, skipped = parse_squad_examples(data, is_training, version_2_with_negative, path)
    return examples, skipped, data


def tfds_squad_data(split, data_dir, version_2_with_negative=False):
    """A SQuAD `data` list rebuilt from a prepared TFDS `squad/v1.1` or `squad/v2.0` (no download).

    Raises:
      FileNotFoundError: the dataset is not prepared under `data_dir`.
    """
    name = "squad/v2.0" if version_2_with_negative else "squad/v1.1"
    tfds = require_extra("tensorflow_datasets", extra="tfds")
    builder = tfds.builder(name, data_dir=data_dir)
    if not builder.is_prepared():
        raise FileNotFoundError(f"TFDS dataset {name} is not prepared under {data_dir}; run "
                                f"`tfds build {name} --data_dir={data_dir}` where there is "
                                "internet, or pass the official JSON files.")
    paragraphs = {}
    for example in builder.as_dataset(split=split).as_numpy_iterator():
        context = example["context"].decode("utf-8")
        texts = [t.decode("utf-8") for t in example["answers"]["text"]]
        starts = [int(s) for s in example["answers"]["answer_start"]]
        qa = {"id": example["id"].decode("utf-8"), "question": example["question"].decode("utf-8"),
              "answers": [{"text": t, "answer_start": s} for t, s in zip(texts, starts)],
              "is_impossible": bool(example.get("is_impossible", not texts))}
        paragraphs.setdefault(context, []).append(qa)
    return [{"title": name, "paragraphs": [{"context": c, "qas": qas}
                                           for c, qas in paragraphs.items()]}]
