"""Writes BERT's per-token layer activations as google-research JSONL (paper §5.3).

    python tools/extract_features.py --model_dir=/tmp/minilm --input_file=input.txt \
        --output_file=features.jsonl --layers=-1,-2,-3,-4 --max_seq_length=128

--input_file has one example a line: `text` or `text_a ||| text_b`; `linex_index` is the
0-based input line. Casing and the default --max_seq_length come from the model directory's
model_info.json; a contradicting --do_lower_case is an error. --output_file must not exist; it
appears only when complete.
"""

import os
import tempfile

from absl import flags  # noqa: E402

from bert_tf import cli  # first: quiets TensorFlow's C++ start-up lines
from bert_tf.checkpoints import model_dir as model_dir_lib  # noqa: E402
from bert_tf.errors import UserError  # noqa: E402
from bert_tf.file_io import refuse_existing  # noqa: E402
from bert_tf.finetuning.feature_extraction import extract_features, read_input_lines  # noqa: E402

DEFAULT_SEQ_LENGTH = 128

flags.DEFINE_string("model_dir", None, "Model directory (bert_config.json, vocab.txt, checkpoint).")
flags.DEFINE_string("input_file", None, "Text, one example a line ('a ||| b' for pairs).")
flags.DEFINE_string("output_file", None, "Where the JSONL goes; must not exist.")
flags.DEFINE_list("layers", ["-1", "-2", "-3", "-4"], "Encoder layers to write (-1: last).")
flags.DEFINE_integer("max_seq_length", None, "Tokens per example, [CLS] and [SEP] included "
                     f"(default: model_info.json's, else {DEFAULT_SEQ_LENGTH}).", lower_bound=3)
flags.DEFINE_integer("batch_size", 8, "Examples per forward pass.", lower_bound=1)
flags.DEFINE_bool("do_lower_case", None, "Lower-case the text (uncased models); default: "
                  "model_info.json's, else guessed from the vocab.")
flags.mark_flags_as_required(["model_dir", "input_file", "output_file"])
FLAGS = flags.FLAGS


def _layers(num_layers):
    """--layers as ints, each an index into the encoder's `num_layers` layer outputs."""
    try:
        layers = [int(i) for i in FLAGS.layers]
    except ValueError:
        raise UserError(f"--layers={','.join(FLAGS.layers)}: expected integers such as "
                        "-1,-2,-3,-4.") from None
    bad = [i for i in layers if not -num_layers <= i < num_layers]
    if not layers or bad:
        raise UserError(f"--layers={','.join(FLAGS.layers)}: this {num_layers}-layer model has "
                        f"layers -{num_layers}..{num_layers - 1}.")
    return layers


def _max_seq_length(model_dir, config):
    saved = model_dir_lib.read_model_info(model_dir).get("max_seq_length")
    length = FLAGS.max_seq_length or saved or DEFAULT_SEQ_LENGTH
    if length > config.max_position_embeddings:
        raise UserError(f"--max_seq_length={length}: longer than the model's "
                        f"max_position_embeddings ({config.max_position_embeddings}).")
    return length


def main(argv):
    del argv  # cli.run refuses positional arguments
    refuse_existing(FLAGS.output_file, "output file", flag="output_file")
    folder = os.path.dirname(os.path.abspath(FLAGS.output_file))
    if not os.path.isdir(folder):
        raise UserError(f"--output_file={FLAGS.output_file}: folder {folder} does not exist.")
    examples = read_input_lines(FLAGS.input_file)
    config = model_dir_lib.read_config(FLAGS.model_dir)
    layers = _layers(config.num_hidden_layers)
    max_seq_length = _max_seq_length(FLAGS.model_dir, config)
    _, lower_case = model_dir_lib.resolve_lower_case(FLAGS.model_dir, FLAGS.do_lower_case)
    handle, partial = tempfile.mkstemp(dir=folder, prefix=".extract_features-", suffix=".jsonl")
    os.close(handle)
    try:
        count = extract_features(FLAGS.model_dir, examples, partial, layers=layers,
                                 max_seq_length=max_seq_length, batch_size=FLAGS.batch_size,
                                 do_lower_case=lower_case)
        os.replace(partial, FLAGS.output_file)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    print(f"wrote {count} examples to {FLAGS.output_file}")


if __name__ == "__main__":
    cli.run(main)
