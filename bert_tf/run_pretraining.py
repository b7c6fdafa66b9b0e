"""Pretrains BERT with masked LM + next-sentence prediction (paper §3.1).

    python -m bert_tf.run_pretraining --flagfile=official_configs/demo.flags

Flags follow google-research/bert's run_pretraining.py. Rerunning the same command resumes
from the newest checkpoint in --output_dir; the end writes a model directory there.
"""

import time  # noqa: E402

from absl import logging  # noqa: E402

from bert_tf import cli  # First: quiets TensorFlow's C++ start-up logging.
from bert_tf.reporting.pretraining_summary import pretraining_summary  # noqa: E402
from bert_tf.training.distribution import is_chief  # noqa: E402
from bert_tf.training.options import PretrainingOptions  # noqa: E402
from bert_tf.training.pretraining_runner import prepare_pretraining, pretrain  # noqa: E402

cli.define_flags(PretrainingOptions)


def main(argv):
    del argv
    start = time.monotonic()
    cli.bare_console()  # also for what preparing logs (a continued run's new length)
    run = prepare_pretraining(cli.options_from_flags(PretrainingOptions))
    chief = is_chief(run.strategy)  # other workers of a multi-worker run write nothing
    if chief:
        cli.log_to_file(run.options.output_dir)
    result = pretrain(run, progress_fn=cli.log_progress)
    if chief:
        for line in pretraining_summary(result, run.options, time.monotonic() - start):
            logging.info("%s", line)


if __name__ == "__main__":
    cli.run(main)
