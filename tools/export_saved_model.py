r"""Exports a model directory as a SavedModel for TF Serving, taking raw text.

  # Encoder: serving_default(text) -> pooled_output, sequence_output, input_mask
  python tools/export_saved_model.py --model_dir=/tmp/minilm --export_dir=/tmp/serving/minilm \
      --task=encoder
  # Fine-tuned classifier, version 2, checked against TF Serving 2.12's ops
  python tools/export_saved_model.py --model_dir=/tmp/mrpc --export_dir=/tmp/serving/mrpc \
      --task=classifier --text_pair --version=2 --tf_serving_version=2.12
  # TF Hub-style preprocessor / encoder (hub.KerasLayer, keras.layers.TFSMLayer)
  python tools/export_saved_model.py --model_dir=/tmp/minilm --export_dir=/tmp/hub/preprocess \
      --task=preprocessor

The SavedModel goes to --export_dir/<version>/ and its ops are audited before it is moved there.
"""

from absl import app
from absl import flags
from absl import logging

from bert_tf.export import op_audit
from bert_tf.export.exporter import EXPORT_TASKS, export_saved_model

flags.DEFINE_string("model_dir", None, "Model directory (bert_config.json, vocab.txt, "
                    "checkpoint; model_info.json with label_names for classifiers).")
flags.DEFINE_string("export_dir", None, "TF Serving model base path; the export goes to "
                    "<export_dir>/<version>/.")
flags.DEFINE_enum("task", None, list(EXPORT_TASKS), "What to export.")
flags.DEFINE_integer("seq_length", None, "Packed sequence length of serving_default "
                     "(default 128; 384 for span).")
flags.DEFINE_integer("version", None, "Version folder (default: one above the highest).")
flags.DEFINE_string("tf_serving_version", op_audit.DEFAULT_TF_SERVING_VERSION,
                    "Fail unless TF Serving of this release has every op of the export.")
flags.DEFINE_bool("text_pair", False, "encoder/classifier: serving_default takes text_a and "
                  "text_b instead of text.")
flags.mark_flags_as_required(["model_dir", "export_dir", "task"])
FLAGS = flags.FLAGS


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"Unexpected arguments: {argv[1:]}")
    try:
        path = export_saved_model(FLAGS.model_dir, FLAGS.export_dir, FLAGS.task,
                                  seq_length=FLAGS.seq_length, version=FLAGS.version,
                                  tf_serving_version=FLAGS.tf_serving_version,
                                  text_pair=FLAGS.text_pair)
    except (ValueError, FileNotFoundError, FileExistsError) as error:
        # A user mistake (missing head, existing version, op audit): the message, no stack trace.
        raise SystemExit(f"export_saved_model: {error}") from None
    logging.info("Wrote %s", path)


if __name__ == "__main__":
    app.run(main)
