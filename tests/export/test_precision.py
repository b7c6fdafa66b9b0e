"""--dtype: auto picks bfloat16 on CPUs with native bfloat16; the export records its choice."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.export import precision
from bert_tf.export.exporter import export_saved_model, read_export_metadata
from tests.export.conftest import TINY_SEQ_LENGTH

TEXTS = ["Hello, world! BBC News reports on sport in Paris.", "", "word " * 30,
         "The match ended in a draw."]


@pytest.mark.parametrize("flags, dtype", [
    ({"avx2", "avx512f", "avx512_bf16"}, "bfloat16"),   # AVX512-BF16 (e.g. Zen 4, Cooper Lake)
    ({"avx512f", "amx_bf16", "amx_tile"}, "bfloat16"),  # AMX (Sapphire Rapids)
    ({"avx2", "avx512f"}, "float32"),
    (set(), "float32"),                                 # no /proc/cpuinfo (macOS, Windows)
])
def test_auto_follows_the_cpu_flags(flags, dtype):
    chosen, reason = precision.resolve_dtype("auto", flags)
    assert chosen == dtype and reason.startswith("--dtype=auto: this CPU")
    assert precision.resolve_dtype("float32", flags) == ("float32", "asked for (--dtype=float32)")


def test_unknown_dtype_is_refused():
    with pytest.raises(ValueError, match="dtype must be one of auto, float32, bfloat16"):
        precision.resolve_dtype("float16")


def test_bfloat16_export_keeps_float32_signatures_and_close_logits(tiny_classifier, tmp_path):
    model_dir, float32_path = tiny_classifier
    path = export_saved_model(model_dir, str(tmp_path), "classifier", seq_length=TINY_SEQ_LENGTH,
                              dtype="bfloat16")
    metadata = read_export_metadata(path)
    assert (metadata["dtype"], metadata["dtype_reason"]) == ("bfloat16",
                                                             "asked for (--dtype=bfloat16)")
    assert read_export_metadata(float32_path)["dtype"] == "float32"
    outputs = {}
    for name, export in (("float32", float32_path), ("bfloat16", path)):
        serve = tf.saved_model.load(export).signatures["serving_default"]
        outputs[name] = {k: v.numpy() for k, v in serve(text=tf.constant(TEXTS)).items()}
    assert outputs["bfloat16"]["logits"].dtype == np.float32
    np.testing.assert_allclose(outputs["bfloat16"]["logits"], outputs["float32"]["logits"],
                               atol=2e-2)
    np.testing.assert_allclose(outputs["bfloat16"]["probabilities"].sum(-1), 1.0, atol=1e-6)
    # bfloat16 variables: about half the float32 checkpoint.
    weights = [v for v in tf.saved_model.load(path).serving_variables]
    assert {v.dtype for v in weights} == {tf.bfloat16, tf.float32}  # LayerNorms stay float32


def test_hub_interfaces_stay_float32(hub_exports, tmp_path):
    model_dir, paths = hub_exports
    with pytest.raises(ValueError, match="TF Hub interface\\) is exported in float32 only"):
        export_saved_model(model_dir, str(tmp_path / "hub"), "hub_encoder", dtype="bfloat16")
    # Both interfaces were exported with dtype="auto".
    for path in paths.values():
        assert read_export_metadata(path)["dtype"] == "float32"
