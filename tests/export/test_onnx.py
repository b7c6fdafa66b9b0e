"""The ONNX export: every head equals bert_tf's outputs, the graph is fused, bad input refused."""

import collections
import json
import os

import keras
import numpy as np
import pytest

from bert_tf.export.onnx_export import export_onnx
from bert_tf.export.restored_model import restore_model
from bert_tf.export.serving_module import ExportError
from bert_tf.keras_tasks import SentenceEncoder, TextClassifier
from tests.fixtures import LABELS, TINY_CONFIG, write_tiny_model_dir

ort = pytest.importorskip("onnxruntime", reason="the onnx extra (pip install bert_tf[onnx])")
onnx = pytest.importorskip("onnx", reason="the onnx extra (pip install bert_tf[onnx])")

TASK_HEADS = ("encoder", "classifier", "token_classifier", "span_labeler")


@pytest.fixture(scope="module")
def model_dirs(tmp_path_factory):
    """`{head: tiny model directory}`, random weights (a 0.3 spread, so heads differ)."""
    root = tmp_path_factory.mktemp("onnx_heads")
    dirs = {}
    for head in TASK_HEADS:
        keras.utils.set_random_seed(3)
        dirs[head] = str(root / head)
        write_tiny_model_dir(dirs[head], head, initializer_range=0.3)
    return dirs


def encoder_inputs(dtype=np.int32, seed=0):
    """Three rows of real ids, two of them padded; two segments."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, TINY_CONFIG.vocab_size, (3, 11))
    mask = np.ones_like(ids)
    mask[1, 7:] = mask[2, 3:] = 0
    types = np.where(np.arange(11) >= 5, 1, 0) * mask
    return {"input_word_ids": (ids * mask).astype(dtype), "input_mask": mask.astype(dtype),
            "input_type_ids": types.astype(dtype)}


def run(path, inputs):
    session = ort.InferenceSession(path)
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, inputs)))


def op_counts(path):
    return collections.Counter(node.op_type for node in onnx.load(path).graph.node)


@pytest.mark.parametrize("head", TASK_HEADS)
def test_every_task_head_equals_bert_tf(model_dirs, head, tmp_path):
    inputs = encoder_inputs()
    export = export_onnx(model_dirs[head], str(tmp_path / head))
    assert export.head == head  # "auto": what the folder holds
    outputs = run(export.path, inputs)
    expected = restore_model(model_dirs[head], head).model(inputs, training=False)
    if head in ("classifier", "token_classifier"):
        expected = {"logits": expected}
        assert export.label_names == json.loads(onnx.load(export.path).metadata_props[0].value)
    for name, value in expected.items():
        if name in outputs:
            np.testing.assert_allclose(outputs[name], np.asarray(value), atol=1e-4)
    if head == "classifier":
        assert export.outputs == ["logits", "probabilities"] and export.label_names == LABELS
        np.testing.assert_allclose(outputs["probabilities"].sum(-1), 1.0, atol=1e-6)
    if head == "token_classifier":
        np.testing.assert_array_equal(outputs["label_ids"], outputs["logits"].argmax(-1))
    if head == "encoder":
        assert sorted(outputs) == ["pooled_output", "sequence_output"]
        assert np.all(outputs["sequence_output"][inputs["input_mask"] == 0] == 0)


@pytest.mark.parametrize("pooling", ["mean", "max", "cls", "cls_token"])
def test_sentence_encoder_poolings_equal_bert_tf_and_take_int64(model_dirs, pooling, tmp_path):
    model = SentenceEncoder.from_pretrained(model_dirs["encoder"], pooling=pooling)
    export = export_onnx(model, str(tmp_path / pooling), ids_dtype="int64")
    assert (export.head, export.outputs) == ("sentence_encoder", ["embedding"])
    embedding = run(export.path, encoder_inputs(np.int64))["embedding"]
    np.testing.assert_allclose(embedding, model(encoder_inputs()), atol=1e-4)
    np.testing.assert_allclose(np.linalg.norm(embedding, axis=-1), 1.0, atol=1e-5)


@pytest.mark.parametrize("hidden_act, gelu", [("gelu", "BiasGelu"), ("gelu_new", "FastGelu")])
def test_the_graph_is_fused_as_onnx_runtime_fuses_bert(hidden_act, gelu, tmp_path):
    """One EmbedLayerNormalization, per layer one Attention, two SkipLayerNormalizations and a
    bias-fused GELU (erf GELU: BiasGelu; the tanh approximation: FastGelu); nothing unfused."""
    layers = 3
    keras.utils.set_random_seed(0)
    model_dir = str(tmp_path / "model")
    write_tiny_model_dir(model_dir, num_hidden_layers=layers, hidden_act=hidden_act)
    export = export_onnx(model_dir, str(tmp_path / "onnx"), head="sentence_encoder")
    counts = op_counts(export.path)
    assert counts["EmbedLayerNormalization"] == 1
    assert counts["Attention"] == counts[gelu] == layers
    assert counts["SkipLayerNormalization"] == 2 * layers
    # Q, K, V are one MatMul inside Attention: three MatMuls a layer remain.
    assert counts["MatMul"] == 3 * layers
    assert not {"LayerNormalization", "Softmax", "Erf", "Tanh", "Transpose"} & set(counts)
    expected = SentenceEncoder.from_pretrained(model_dir)(encoder_inputs())
    np.testing.assert_allclose(run(export.path, encoder_inputs())["embedding"], expected,
                               atol=1e-4)


def test_a_text_classifier_in_memory_takes_strings(model_dirs, tmp_path):
    model = TextClassifier.from_pretrained(model_dirs["classifier"], max_seq_length=16)
    export = export_onnx(model, str(tmp_path / "onnx"), text_input=True)
    assert export.inputs == ["text"] and export.label_names == LABELS
    texts = ["Paris is a city in France.", "sport " * 40, "BBC News: the markets fell."]
    options = ort.SessionOptions()
    options.register_custom_ops_library(pytest.importorskip(
        "onnxruntime_extensions").get_library_path())
    session = ort.InferenceSession(export.path, options)
    logits, probabilities = session.run(None, {"text": np.array(texts, dtype=object)})
    np.testing.assert_allclose(logits, model.predict(texts, verbose=0), atol=1e-4)
    metadata = json.loads((tmp_path / "onnx" / "export_metadata.json").read_text())
    assert metadata["seq_length"] == 16 and metadata["text_input"] is True


def test_bad_input_is_refused_and_nothing_is_written(model_dirs, tmp_path):
    out = str(tmp_path / "out")
    for kwargs, message in (
            (dict(model=model_dirs["encoder"], head="classifier"),
             f"--head=classifier: {model_dirs['encoder']} holds no classifier head"),
            (dict(model=model_dirs["classifier"], head="span"), "--head=span is not an ONNX "
             "head; choose one of auto, encoder, classifier, token_classifier, span_labeler"),
            (dict(model=model_dirs["encoder"], quantize="int4"),
             "--quantize=int4 is not a quantization of the ONNX export; choose one of none, "
             "int8"),
            (dict(model=model_dirs["encoder"], opset=13),
             "--opset=13 cannot hold this graph: it needs opset 18 or newer"),
            (dict(model=model_dirs["encoder"], text_input=True, seq_length=65),
             "--seq_length must be in 3..64")):
        with pytest.raises(ExportError, match=message.replace("(", r"\(")):
            export_onnx(output_dir=out, **kwargs)
    assert not os.path.exists(out)
    first = export_onnx(model_dirs["encoder"], out)
    before = os.path.getmtime(first.path)
    with pytest.raises(ExportError, match=f"{out} already holds a model"):
        export_onnx(model_dirs["classifier"], out)
    assert os.path.getmtime(first.path) == before and sorted(os.listdir(out)) == [
        "export_metadata.json", "model.onnx"]
    pairs = TextClassifier.from_pretrained(model_dirs["classifier"], text_pair=True)
    with pytest.raises(ExportError, match="TextClassifier takes text pairs"):
        export_onnx(pairs, str(tmp_path / "pairs"), text_input=True)


@pytest.mark.parametrize("head", TASK_HEADS)
def test_openvino_runs_the_same_file(model_dirs, head, tmp_path):
    openvino = pytest.importorskip(
        "openvino", reason="OpenVINO is in the bench extra (pip install bert_tf[bench])")
    export = export_onnx(model_dirs[head], str(tmp_path / head))
    inputs = encoder_inputs()
    # float32 kernels: on a CPU with bfloat16, OpenVINO's default precision is bfloat16.
    compiled = openvino.Core().compile_model(export.path, "CPU",
                                             {"INFERENCE_PRECISION_HINT": "f32"})
    outputs = compiled(inputs)
    for name, value in run(export.path, inputs).items():
        np.testing.assert_allclose(outputs[name], value, atol=1e-4)
