"""dtype_policy: the policy scope, the measured matmul rate and `--dtype=auto`'s choice."""

import os
import subprocess
import sys

import keras
import pytest

from bert_tf import dtype_policy
from bert_tf.dtype_policy import fastest_dtype, measured_matmul_flops, policy_scope


def test_policy_scope_restores_the_policy_after_an_error():
    with pytest.raises(RuntimeError):
        with policy_scope("mixed_bfloat16"):
            assert keras.mixed_precision.global_policy().name == "mixed_bfloat16"
            raise RuntimeError
    assert keras.mixed_precision.global_policy().name == "float32"


def test_measured_rate_is_work_over_time():
    # 8 chained 128² products: 2·128³·8 FLOPs in well under a second but more than a nanosecond.
    rate = measured_matmul_flops("float32", size=128, repeats=2)
    assert 2 * 128 ** 3 * 8 < rate < 2 * 128 ** 3 * 8 * 1e9


@pytest.mark.parametrize("bfloat16_rate, expected", [(420e9, "mixed_bfloat16"),
                                                     (260e9, "float32"), (50e9, "float32")])
def test_auto_takes_bfloat16_only_where_its_matmuls_are_clearly_faster(
        monkeypatch, bfloat16_rate, expected):
    rates = {"float32": 215e9, "mixed_bfloat16": bfloat16_rate}
    monkeypatch.setattr(dtype_policy, "measured_matmul_flops", lambda dtype, **_: rates[dtype])
    monkeypatch.setattr(dtype_policy, "native_bfloat16", lambda: True)
    dtype, why = fastest_dtype()
    assert dtype == expected
    assert "float32 215 GFLOP/s" in why and f"({bfloat16_rate / 215e9:.2f}x" in why


@pytest.mark.subprocess
def test_auto_is_float32_where_bfloat16_is_emulated():
    # oneDNN limited to AVX2 has no bfloat16 matmul on any CPU (making one aborts the process).
    code = "from bert_tf.dtype_policy import fastest_dtype; print(fastest_dtype()[0])"
    env = {**os.environ, "ONEDNN_MAX_CPU_ISA": "AVX2", "TF_CPP_MIN_LOG_LEVEL": "3"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.split()[-1] == "float32"


def test_cpu_flags_reads_proc_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu avx2 amx_bf16\n\nflags\t: other\n")
    assert dtype_policy.cpu_flags(str(cpuinfo)) == {"fpu", "avx2", "amx_bf16"}
    assert dtype_policy.cpu_flags(str(tmp_path / "missing")) == set()


def test_onednn_isa_limit_hides_native_bfloat16(monkeypatch):
    flags = {"avx512f", "avx512_bf16", "amx_bf16"}
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    assert dtype_policy.native_bfloat16(flags) == ["avx512_bf16", "amx_bf16"]
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    assert dtype_policy.native_bfloat16(flags) == []
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_AMX")
    assert dtype_policy.native_bfloat16(flags) == ["avx512_bf16", "amx_bf16"]
