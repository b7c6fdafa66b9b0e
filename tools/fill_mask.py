r"""Prints the masked-LM head's top-k WordPieces, with probabilities, for each [MASK].

  python tools/fill_mask.py --model_dir=/tmp/pretrained "And God said, Let there be [MASK]."
  python tools/fill_mask.py --model_dir=DIR --top_k=10 "The [MASK] sat on the [MASK]."

--model_dir is a model directory with a masked-LM head: a run_pretraining --output_dir, or a
converted BertForPreTraining (tools/convert_checkpoint.py). Several texts and several masks per
text are allowed; a run of adjacent masks (`[MASK][MASK]`) is also shown as one joined word.
"""

from absl import app, flags  # noqa: E402

from bert_tf import cli  # First: quiets TensorFlow's C++ start-up logging.
from bert_tf.inference.fill_mask import fill_mask, format_result  # noqa: E402

flags.DEFINE_string("model_dir", None, "Model directory with a masked-LM head.")
flags.DEFINE_integer("top_k", 5, "WordPieces shown per [MASK].", lower_bound=1)
flags.mark_flags_as_required(["model_dir"])
FLAGS = flags.FLAGS


def main(argv):
    texts = argv[1:]
    if not texts:
        raise app.UsageError('Give one or more texts with [MASK], e.g. "Let there be [MASK]."')
    for result in fill_mask(FLAGS.model_dir, texts, top_k=FLAGS.top_k):
        print("\n".join(format_result(result)))


if __name__ == "__main__":
    cli.run(main, takes_arguments=True)
