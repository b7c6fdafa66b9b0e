"""Evaluation data from files: STS pairs with gold scores, and a BEIR-style retrieval set.

STS: one pair a row of a TSV, CSV or JSONL file with a header (`sentence1`, `sentence2`,
`score` unless named otherwise). Retrieval, as BEIR lays it out: queries (`_id`, `text`),
a corpus (`_id`, optional `title`, `text`; the title goes before the text, as BEIR and MTEB
embed it) and relevance judgments, qrels (`query-id`, `corpus-id`, `score`; a score above 0
is relevant). Each file may be TSV, CSV or JSONL (`finetuning.table_reader`); an `id` column
may stand for `_id`. Bad rows stop the read with the file, line and what was wrong.

Example:
>>> first, second, gold = read_sts_file("sts_test.jsonl")                  # doctest: +SKIP
>>> data = read_retrieval_files("queries.jsonl", "corpus.jsonl", "qrels.tsv")  # doctest: +SKIP
"""

from bert_tf.evaluation.retrieval import RetrievalData
from bert_tf.finetuning.table_reader import DataError, read_rows

QRELS_COLUMNS = ("query-id", "corpus-id", "score")


def _number(row, column, path, line):
    try:
        return float(row[column])
    except (TypeError, ValueError):
        raise DataError(f"{path}:{line}: `{column}` is {row[column]!r}, not a number.") from None


def read_sts_file(path, sentence1="sentence1", sentence2="sentence2", score="score"):
    """`(first sentences, second sentences, gold scores)` of an STS file.

    Raises:
      DataError: a missing file or column (the row's columns named), a score that is not a
        number, or an empty sentence.
    """
    first, second, gold = [], [], []
    for line, row in read_rows(path, columns=(sentence1, sentence2, score)):
        texts = [str(row[sentence1]).strip(), str(row[sentence2]).strip()]
        if not all(texts):
            raise DataError(f"{path}:{line}: an empty sentence.")
        first.append(texts[0])
        second.append(texts[1])
        gold.append(_number(row, score, path, line))
    return first, second, gold


def _id_column(rows, path):
    columns = set(rows[0][1])
    for name in ("_id", "id"):
        if name in columns:
            return name
    raise DataError(f"{path}:{rows[0][0]}: no `_id` (or `id`) column; the row has "
                    f"{sorted(columns)}.")


def _texts(path, with_title):
    """{id: text} of a queries or corpus file."""
    rows = read_rows(path)
    id_column = _id_column(rows, path)
    texts = {}
    for line, row in rows:
        if row.get(id_column) is None or row.get("text") is None:
            raise DataError(f"{path}:{line}: missing column `{id_column}` or `text`; the row "
                            f"has {sorted(row)}.")
        key = str(row[id_column])
        if key in texts:
            raise DataError(f"{path}:{line}: the id {key!r} appears twice.")
        text = str(row["text"]).strip()
        title = str(row.get("title") or "").strip() if with_title else ""
        texts[key] = f"{title} {text}".strip()
        if not texts[key]:
            raise DataError(f"{path}:{line}: an empty text (id {key!r}).")
    return texts


def read_retrieval_files(queries_path, corpus_path, qrels_path):
    """A `RetrievalData` of BEIR-style files (module docstring).

    Raises:
      DataError: a missing file or column, a repeated id, an empty text, a qrels score that
        is not a number, or a qrels row naming a query the queries file lacks.
      EvaluationError: no query has a relevant passage.
    """
    queries = _texts(queries_path, with_title=False)
    corpus = _texts(corpus_path, with_title=True)
    relevant = {}
    for line, row in read_rows(qrels_path, columns=QRELS_COLUMNS):
        query, passage = str(row["query-id"]), str(row["corpus-id"])
        if query not in queries:
            raise DataError(f"{qrels_path}:{line}: query {query!r} is not in {queries_path}.")
        if _number(row, "score", qrels_path, line) > 0:
            relevant.setdefault(query, set()).add(passage)
    return RetrievalData(queries, corpus, relevant)
