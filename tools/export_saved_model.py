r"""Exports a model directory as a SavedModel for TF Serving, taking raw text.

  # Encoder: serving_default(text) -> pooled_output, sequence_output, input_mask
  python tools/export_saved_model.py --model_dir=/tmp/minilm --export_dir=/tmp/serving/minilm \
      --head=encoder
  # Fine-tuned classifier, version 2, checked against TF Serving 2.12's ops
  python tools/export_saved_model.py --model_dir=/tmp/mrpc --export_dir=/tmp/serving/mrpc \
      --head=classifier --text_pair --version=2 --tf_serving_version=2.12
  # bfloat16 where this CPU has native bfloat16 (avx512_bf16 / AMX), else float32
  python tools/export_saved_model.py --model_dir=/tmp/mrpc --export_dir=/tmp/serving/mrpc \
      --head=classifier --dtype=auto
  # TF Hub-style preprocessor / encoder (hub.KerasLayer, keras.layers.TFSMLayer)
  python tools/export_saved_model.py --model_dir=/tmp/minilm --export_dir=/tmp/hub/preprocess \
      --head=preprocessor

The SavedModel goes to --export_dir/<version>/ and its ops are audited before it is moved there;
batching_parameters.txt (for tensorflow_model_server --enable_batching) and export_metadata.json
(head, dtype and why, seq_length) are written beside it.
Casing and the default --seq_length come from the model directory's model_info.json.
`--task` is the old name of `--head`.
"""

import dataclasses

from absl import flags  # noqa: E402

from bert_tf import cli  # first: quiets TensorFlow's C++ start-up lines
from bert_tf.export.exporter import export_saved_model  # noqa: E402
from bert_tf.export.options import ExportOptions  # noqa: E402
from bert_tf.options import check_options  # noqa: E402

cli.define_flags(ExportOptions)
flags.DEFINE_alias("task", "head")


def main(argv):
    del argv  # cli.run refuses positional arguments
    options = cli.options_from_flags(ExportOptions)
    check_options(options)
    path = export_saved_model(**dataclasses.asdict(options))
    print(f"exported {options.model_dir} (--head={options.head}) to {path}")


if __name__ == "__main__":
    cli.run(main)
