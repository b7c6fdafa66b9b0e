r"""Writes a TFLite model that takes raw strings (tf-text's FastBertTokenizer in the graph).

  # Encoder, float32: serving_default(text) -> pooled_output, sequence_output, input_mask
  python tools/export_tflite.py --model_dir=/tmp/minilm --head=encoder --output=/tmp/minilm.tflite
  # Fine-tuned classifier, int8 weights (dynamic range): logits, probabilities, label
  python tools/export_tflite.py --model_dir=/tmp/bbc --head=classifier \
      --output=/tmp/bbc_int8.tflite --quantization=dynamic_int8

Run it with tf-text's ops registered (`bert_tf.export.tflite.tflite_interpreter`, or
`InterpreterWithCustomOps(..., custom_op_registerers=tensorflow_text.tflite_registrar.
SELECT_TFTEXT_OPS)`). Casing and the default --seq_length come from model_info.json.
"""

import dataclasses

from bert_tf import cli  # first: quiets TensorFlow's C++ start-up lines
from bert_tf.export.options import TfliteExportOptions  # noqa: E402
from bert_tf.export.tflite import export_tflite  # noqa: E402
from bert_tf.options import check_options  # noqa: E402

cli.define_flags(TfliteExportOptions)


def main(argv):
    del argv  # cli.run refuses positional arguments
    options = cli.options_from_flags(TfliteExportOptions)
    check_options(options)
    ops = export_tflite(**dataclasses.asdict(options))
    custom = [op for op in ops if not op.isupper()]
    print(f"wrote {options.output} (--head={options.head}, --quantization="
          f"{options.quantization}; custom ops: {', '.join(custom)})")


if __name__ == "__main__":
    cli.run(main)
