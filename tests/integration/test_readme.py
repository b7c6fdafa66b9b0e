"""The README's Python examples are the files next to this test, verbatim, and they run."""

import pathlib
import re
import runpy

import numpy as np
import pytest

HERE = pathlib.Path(__file__).parent
README = HERE.parent.parent / "README.md"


def _python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("example", ["readme_quickstart.py", "readme_fit_example.py"])
def test_readme_shows_the_tested_example_verbatim(example):
    assert (HERE / example).read_text(encoding="utf-8") in _python_blocks()


def test_quickstart_runs_and_ranks_similar_sentences_higher(tmp_path, monkeypatch, minilm_hf_dir):
    monkeypatch.chdir(tmp_path)
    namespace = runpy.run_path(str(HERE / "readme_quickstart.py"), run_name="__main__")
    similarity = namespace["embeddings"] @ namespace["embeddings"].T
    np.testing.assert_allclose(np.diag(similarity), 1.0, atol=1e-5)
    # The guitar and the music sentence are closer to each other than to the stock market.
    assert similarity[0, 1] > similarity[0, 2] + 0.3
    assert similarity[0, 1] > similarity[1, 2] + 0.3
