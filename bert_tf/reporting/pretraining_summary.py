"""The end of a pretraining run, for a person: held-out numbers, fill-mask, where things are.

`pretraining_summary` returns the lines; the entry point prints them. It also writes the
learning curve (`learning_curve.png`) from the scalars the run logged to TensorBoard.

Example:
>>> for line in pretraining_summary(result, options):  # doctest: +SKIP
...     print(line)
"""

import itertools
import os

from bert_tf.data.document_reader import expand_input_patterns, read_documents
from bert_tf.inference import fill_mask, format_result, mask_one_word
from bert_tf.reporting.learning_curve import read_history, write_learning_curve
from bert_tf.reporting.machine_speed import speed_line

LEARNING_CURVE_FILE = "learning_curve.png"
_SENTENCES_READ = 2000  # the first documents of the held-out file, enough to pick from


def _held_out_sentences(options, count):
    """`count` sentences spread over the first held-out documents (text input only)."""
    files = expand_input_patterns(options.eval_input_file or options.input_file)
    sentences = list(itertools.islice(
        (sentence for document in read_documents(files) for sentence in document.sentences),
        _SENTENCES_READ))
    step = max(1, len(sentences) // (4 * count))
    return [s for s in sentences[::step] if 8 <= len(s.split()) <= 30]


def _metric_lines(eval_metrics):
    baseline = eval_metrics.get("unigram_baseline")
    lines = [f"  masked-LM accuracy {eval_metrics['mlm_accuracy']:.4f}"
             + (f"   (unigram baseline {baseline:.4f})" if baseline is not None else ""),
             f"  masked-LM loss     {eval_metrics['mlm_loss']:.4f}"]
    if "nsp_accuracy" in eval_metrics:
        majority = eval_metrics.get("nsp_majority_baseline")
        lines.append(f"  NSP accuracy       {eval_metrics['nsp_accuracy']:.4f}"
                     + (f"   (majority-label guess {majority:.4f})" if majority is not None
                        else ""))
    return lines


def _fill_mask_lines(options, count):
    examples = mask_one_word(_held_out_sentences(options, count), options.vocab_file,
                             options.do_lower_case, seed=options.seed)[:count]
    if not examples:
        return []
    results = fill_mask(options.output_dir, [masked for masked, _ in examples], top_k=5,
                        vocab_file=options.vocab_file, lower_case=options.do_lower_case)
    lines = ["Fill-mask on held-out sentences (top 5, the hidden word beside):"]
    for (_, word), result in zip(examples, results):
        lines += format_result(result, answer=word)
    return lines


def _real_tokens_share(result, history):
    """The share of training batch slots that held a token: over the whole run where its
    TensorBoard scalars say (each logged value weighted by the steps it covers), else the last
    train metrics; None when nothing was trained."""
    steps, weighted, previous = 0, 0.0, 0
    for entry in history:
        if "train/real_tokens" in entry:
            covered = entry["step"] - previous
            steps, previous = steps + covered, entry["step"]
            weighted += covered * entry["train/real_tokens"]
    if steps > 0:
        return weighted / steps
    return result.get("train", {}).get("real_tokens")


def real_tokens_line(share, options):
    """`This run's training batches were N% real tokens ...`, and what --packed_training did."""
    done = "computed real tokens only" if options.packs_training else "computed every slot"
    line = (f"This run's training batches were {100 * share:.0f}% real tokens (the rest padding); "
            f"--packed_training={options.packed_training} {done}")
    if (not options.packs_training and share < 0.8 and not options.enable_xla
            and options.distribution_strategy != "tpu"):
        line += " (--packed_training=true would skip the padding)"
    return line + "."


def pretraining_summary(result, options, seconds, fill_mask_examples=5):
    """Lines that close a run, and `learning_curve.png` written into `options.output_dir`.

    Args:
      result: what `run_pretraining` returned (`step`, `train`, `eval`, `model_dir`).
      options: the run's `PretrainingOptions`.
      seconds: the run's wall time so far, quoted beside the machine's matmul rate.
      fill_mask_examples: held-out sentences to show (text input with a masked-LM objective).
    """
    output_dir = options.output_dir
    lines = []
    if result["eval"]:
        lines += [f"Held-out evaluation at step {result['step']}:"] + _metric_lines(result["eval"])
    if (fill_mask_examples and options.input_format == "text" and not options.left_to_right
            and (options.eval_input_file or options.input_file)):
        lines += _fill_mask_lines(options, fill_mask_examples)
    history = read_history(output_dir)
    share = _real_tokens_share(result, history)
    if share is not None:
        lines.append(real_tokens_line(share, options))
    if any(key.endswith("mlm_accuracy") for entry in history for key in entry):
        curve = os.path.join(output_dir, LEARNING_CURVE_FILE)
        write_learning_curve(history, curve, baseline=result["eval"].get("unigram_baseline"))
        lines.append(f"Learning curve:   {curve}")
    lines += [f"Model directory:  {result['model_dir']}",
              f"Full log:         {os.path.join(output_dir, 'log.txt')}",
              f"TensorBoard logs: {os.path.join(output_dir, 'train')} and "
              f"{os.path.join(output_dir, 'eval')}; view them with",
              f"  tensorboard --logdir {output_dir}",
              speed_line(seconds, options.dtype)]
    return lines
