"""Trains sentence embeddings from a pairs file, as sentence-transformers trains them.

    python -m bert_tf.run_sentence_embeddings --init_checkpoint=all-MiniLM-L6-v2/ \
        --train_file=pairs.jsonl --anchor_column=question --positive_column=answer \
        --train_batch_size=64 --num_train_epochs=1 --output_dir=/tmp/retrieval

Each anchor is ranked against every positive of its global batch (in-batch negatives, the
embeddings gathered across replicas; --negative_column adds a hard negative per anchor) with
sentence-transformers' MultipleNegativesRankingLoss; --loss=cached_* trains batches too large
to embed at once (GradCache), --matryoshka_dims the loss on embedding prefixes. No batch
holds a text twice. A rerun of the same command resumes from the newest checkpoint in
--output_dir. At the end --output_dir is a sentence-transformers folder of the trained model
(`SentenceTransformer(output_dir)` loads it; so does every bert_tf tool), beside the run's
checkpoints.
"""

from absl import flags, logging  # noqa: E402

from bert_tf import cli  # first: it quiets TensorFlow before TensorFlow loads
from bert_tf.dtype_policy import policy_scope  # noqa: E402
from bert_tf.keras_tasks.sentence_embeddings_runner import (  # noqa: E402
    SentenceEmbeddingOptions,
    build_model,
    check_sentence_options,
    claim_output_dir,
    read_pairs,
    train_sentence_embeddings,
    training_schedule,
)
from bert_tf.training.distribution import (  # noqa: E402
    get_strategy,
    is_chief,
    lost_worker_is_a_user_error,
)
from bert_tf.training.run_directory import release_output_dir  # noqa: E402

cli.define_flags(SentenceEmbeddingOptions)
FLAGS = flags.FLAGS


def main(argv):
    del argv  # cli.run refuses positional arguments
    options = cli.options_from_flags(SentenceEmbeddingOptions)
    # Before any other op: a multi-worker strategy must exist when TensorFlow starts.
    strategy = get_strategy(options.distribution_strategy,
                            collective_timeout_seconds=options.collective_timeout_seconds)
    check_sentence_options(options, strategy.num_replicas_in_sync)
    logging.set_verbosity(logging.INFO)
    cli.bare_console()
    rows, skipped = read_pairs(options)
    logging.info("%s: %d pairs; skipped %d with an empty anchor or positive.",
                 options.train_file, len(rows), skipped)
    chief = is_chief(strategy)
    with policy_scope(options.dtype):
        model, loss = build_model(options, strategy)
        if chief:
            claim_output_dir(options, len(training_schedule(rows, options)))
            cli.log_to_file(options.output_dir)
        try:
            with lost_worker_is_a_user_error(strategy, options.collective_timeout_seconds):
                result = train_sentence_embeddings(options, strategy, model, loss, rows,
                                                   progress_fn=cli.log_progress)
        finally:
            release_output_dir(options.output_dir)
    loss_text = "" if result["loss"] is None else f", last loss {result['loss']:.4f}"
    print(f"trained {result['step']} steps{loss_text}; model: {result['model']}")


if __name__ == "__main__":
    cli.run(main)
