r"""Scores a sentence-embedding model: STS correlation and retrieval, as sentence-transformers.

  # STS: Spearman (and Pearson) of cosine similarity against gold scores
  python tools/evaluate_embeddings.py --model=all-MiniLM-L6-v2 --sts_file=sts_test.jsonl
  # retrieval: nDCG@10, MRR@10, Recall@100 of queries against a corpus (BEIR files)
  python tools/evaluate_embeddings.py --model=/tmp/tuned --queries=queries.jsonl \
      --corpus=corpus.jsonl --qrels=qrels.tsv --output_file=/tmp/tuned_scores.json

--model is any folder `SentenceEncoder.from_pretrained` reads (a sentence-transformers folder
keeps its pooling, normalization and max_seq_length). The STS file is TSV, CSV or JSONL with
`sentence1`, `sentence2` and `score` columns (--*_column to rename); retrieval takes BEIR's
queries (`_id`, `text`), corpus (`_id`, `title`, `text`) and qrels (`query-id`, `corpus-id`,
`score`). The scores equal sentence-transformers' EmbeddingSimilarityEvaluator and
InformationRetrievalEvaluator on the same embeddings (bert_tf/evaluation/); --output_file
keeps every metric as JSON. docs/embeddings.md has the whole recipe.
"""

import json

from absl import flags  # noqa: E402

from bert_tf import cli  # First: quiets TensorFlow's C++ start-up logging.
from bert_tf.errors import UserError  # noqa: E402
from bert_tf.evaluation import RetrievalEvaluator, STSEvaluator  # noqa: E402
from bert_tf.evaluation.data_files import read_retrieval_files, read_sts_file  # noqa: E402
from bert_tf.evaluation.evaluators import headline  # noqa: E402
from bert_tf.file_io import refuse_existing  # noqa: E402

flags.DEFINE_string("model", None, "The model: any checkpoint folder bert_tf reads.")
flags.DEFINE_string("sts_file", None, "Sentence pairs with gold scores (.tsv, .csv, .jsonl).")
flags.DEFINE_string("sentence1_column", "sentence1", "--sts_file's first sentence column.")
flags.DEFINE_string("sentence2_column", "sentence2", "--sts_file's second sentence column.")
flags.DEFINE_string("score_column", "score", "--sts_file's gold score column.")
flags.DEFINE_string("queries", None, "Retrieval queries: `_id`, `text` (.jsonl, .tsv, .csv).")
flags.DEFINE_string("corpus", None, "Retrieval passages: `_id`, optional `title`, `text`.")
flags.DEFINE_string("qrels", None, "Relevance judgments: `query-id`, `corpus-id`, `score`.")
flags.DEFINE_integer("batch_size", 64, "Texts embedded per batch.", lower_bound=1)
flags.DEFINE_integer("max_seq_length", None, "Tokens per text (default: the model's).",
                     lower_bound=3)
flags.DEFINE_string("output_file", None, "Write every score here as JSON (must not exist).")
flags.mark_flags_as_required(["model"])
FLAGS = flags.FLAGS
RETRIEVAL_FLAGS = ("queries", "corpus", "qrels")


def _evaluators():
    """The evaluators the flags ask for, their data read (bad data fails before the model
    loads)."""
    evaluators = []
    if FLAGS.sts_file:
        first, second, gold = read_sts_file(FLAGS.sts_file, FLAGS.sentence1_column,
                                            FLAGS.sentence2_column, FLAGS.score_column)
        evaluators.append(STSEvaluator(first, second, gold, name="sts",
                                       batch_size=FLAGS.batch_size))
    given = [name for name in RETRIEVAL_FLAGS if FLAGS[name].value]
    if given and len(given) < len(RETRIEVAL_FLAGS):
        missing = [f"--{name}" for name in RETRIEVAL_FLAGS if name not in given]
        raise UserError(f"retrieval needs --queries, --corpus and --qrels; {', '.join(missing)} "
                        "missing.")
    if given:
        data = read_retrieval_files(FLAGS.queries, FLAGS.corpus, FLAGS.qrels)
        evaluators.append(RetrievalEvaluator(data, name="retrieval", batch_size=FLAGS.batch_size))
    if not evaluators:
        raise UserError("nothing to evaluate: give --sts_file, or --queries, --corpus and "
                        "--qrels.")
    return evaluators


def main(argv):
    del argv  # cli.run refuses positional arguments
    evaluators = _evaluators()
    if FLAGS.output_file:
        refuse_existing(FLAGS.output_file, "output file", flag="output_file")
    from bert_tf.keras_tasks import SentenceEncoder

    model = SentenceEncoder.from_pretrained(FLAGS.model, max_seq_length=FLAGS.max_seq_length)
    scores = {}
    for evaluator in evaluators:
        scores.update(evaluator(model))
        print(headline(evaluator, scores))
    if FLAGS.output_file:
        with open(FLAGS.output_file, "w", encoding="utf-8") as f:
            json.dump(scores, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    cli.run(main)
