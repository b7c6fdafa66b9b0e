"""bert_tf: BERT (Devlin et al., NAACL 2019) for TensorFlow 2 / Keras 3."""

import pathlib
import re

import setuptools

_ROOT = pathlib.Path(__file__).parent
_VERSION = re.search(
    r'__version__ = "([^"]+)"', (_ROOT / "bert_tf" / "__init__.py").read_text()
).group(1)

# Beam's DaskRunner (apache-beam 2.78's [dask] extra asks dask/distributed >= 2024.4.2; tested
# with 2026.8.0). Below 2027: the runner drives dask.bag and distributed internals.
_DASK = ["dask>=2024.4.2,<2027", "distributed>=2024.4.2,<2027"]
# The ONNX export writes with onnx and quantizes with onnxruntime; strings-in models run the
# tokenizer op of onnxruntime-extensions.
_ONNX = ["onnx>=1.16", "onnxruntime>=1.20", "onnxruntime-extensions>=0.13"]

setuptools.setup(
    name="bert_tf",
    version=_VERSION,
    description="BERT pretraining, fine-tuning and export for TensorFlow 2 / Keras 3.",
    long_description=(_ROOT / "README.md").read_text(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.11",
    packages=setuptools.find_packages(include=["bert_tf", "bert_tf.*"]),
    package_data={"bert_tf": ["data/corpus/*", "export/tf_serving_ops/*"]},
    install_requires=[
        "tensorflow==2.21.*",
        "tensorflow-text==2.21.*",
        "keras>=3.15",
        "absl-py",
        # The run's learning_curve.png (bert_tf/reporting): well kept, Agg canvas, no display.
        "matplotlib",
    ],
    extras_require={
        # safetensors reads/writes Hugging Face checkpoints without torch; pytest-xdist runs
        # `make test` on two workers (the suite is mostly one-core subprocess start-ups); ruff is
        # the linter `make check` and `make test` run first (pyproject.toml configures it);
        # hypothesis makes the damaged files of the readers' fuzz tests (tests/fuzz).
        "test": ["pytest", "pytest-xdist", "ruff", "safetensors", "apache-beam",
                 "tensorflow-datasets", "pyarrow", "hypothesis", *_DASK, *_ONNX],
        "hf": ["safetensors"],
        # GLUE/SQuAD read from a prepared TFDS directory; the demo and the TSV/JSON paths do not
        # need it, and it pulls pyarrow, array_record and more into every install.
        "tfds": ["tensorflow-datasets"],
        # The data tools (create_pretraining_data, build_vocab) run on Apache Beam. Beam pins
        # protobuf below 7 (6.33 next to TensorFlow 2.21, which works); add [gcp] for Dataflow.
        # Dask's scheduler runs them on a cluster (runner=DaskRunner).
        "beam": ["apache-beam", *_DASK],
        # Peers that benchmarks/benchmark.py (beside the package, not shipped) runs in the same
        # process, where installed.
        "bench": ["tokenizers", "keras-hub", "openvino"],
        # The ONNX export (bert_tf/export/onnx_export.py, tools/export_onnx.py).
        "onnx": _ONNX,
        # run_sentence_embeddings reads pairs from .parquet files too.
        "parquet": ["pyarrow"],
    },
)
