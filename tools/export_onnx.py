r"""Writes an ONNX model of any bert_tf model, for ONNX Runtime and OpenVINO.

  # A sentence-transformers folder, strings in, pooling and Normalize inside: embedding out
  python tools/export_onnx.py --model=/tmp/all-MiniLM-L6-v2 --output_dir=/tmp/minilm_onnx \
      --text_input
  # A fine-tuned classifier, ids in, int8 weights: logits, probabilities
  python tools/export_onnx.py --model=/tmp/bbc --output_dir=/tmp/bbc_onnx --quantize=int8

--model is any folder `from_pretrained` reads; --head=auto exports what it holds. The graph
is fused as ONNX Runtime's transformer optimizer fuses BERT (docs/serving.md, "ONNX").
"""

import dataclasses

from bert_tf import cli  # first: quiets TensorFlow's C++ start-up lines
from bert_tf.export.onnx_export import OnnxExportOptions, export_onnx  # noqa: E402
from bert_tf.options import check_options  # noqa: E402

cli.define_flags(OnnxExportOptions)


def load_snippet(export):
    """The Python lines that load and run what `export_onnx` wrote."""
    lines = ["import numpy as np, onnxruntime"]
    if export.text_input:
        lines += ["import onnxruntime_extensions",
                  "options = onnxruntime.SessionOptions()",
                  "options.register_custom_ops_library(onnxruntime_extensions.get_library_path())",
                  f"session = onnxruntime.InferenceSession({export.path!r}, options)",
                  'outputs = session.run(None, {"text": np.array(["Hello world"], dtype=object)})']
    else:
        lines += [f"session = onnxruntime.InferenceSession({export.path!r})",
                  "outputs = session.run(None, {name: ids_of_that_name for name in "
                  f"{export.inputs}}})"]
    return "\n".join("  " + line for line in lines)


def main(argv):
    del argv  # cli.run refuses positional arguments
    options = cli.options_from_flags(OnnxExportOptions)
    check_options(options)
    export = export_onnx(**dataclasses.asdict(options))
    labels = f"; labels: {', '.join(export.label_names)}" if export.label_names else ""
    print(f"wrote {export.path} (--head={export.head}, --quantize={export.quantize}; inputs: "
          f"{', '.join(export.inputs)}; outputs: {', '.join(export.outputs)}{labels})")
    print(f"load it with:\n{load_snippet(export)}")


if __name__ == "__main__":
    cli.run(main)
