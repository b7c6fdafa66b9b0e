"""The public namespace: every exported name resolves, and `import bert_tf` stays light."""

import subprocess
import sys

import pytest

import bert_tf


def test_every_public_name_resolves():
    for name in bert_tf.__all__:
        assert getattr(bert_tf, name) is not None, name


@pytest.mark.subprocess
def test_import_bert_tf_does_not_import_tensorflow():
    # Entry points rely on it: they quiet TensorFlow's start-up before TensorFlow loads.
    code = "import sys, bert_tf; print('tensorflow' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"
