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
def _seed_and_float32_policy():
    """Every test starts seeded and in float32, whatever the previous test set."""
    keras.utils.set_random_seed(0)
    keras.mixed_precision.set_global_policy("float32")
    yield
    keras.mixed_precision.set_global_policy("float32")
