"""A `.keras` file carries its vocab: loading works after the vocab.txt it was built from moved."""

import os
import shutil
import tempfile

import keras
import numpy as np

from bert_tf.keras_tasks import TextClassifier, TokenClassifier
from tests.keras_tasks.conftest import TEXTS


def test_keras_file_loads_after_the_vocab_moved_and_leaves_no_files(tiny_model_dir, tmp_path,
                                                                    monkeypatch):
    folder = str(tmp_path / "model")
    shutil.copytree(tiny_model_dir, folder)
    classifier = TextClassifier.from_pretrained(folder, num_classes=2)
    # Weights unlike the folder's (as fine-tuning leaves them): the loaded outputs must come
    # from the .keras file.
    rng = np.random.default_rng(0)
    classifier.set_weights([w + rng.normal(0, 0.02, w.shape) for w in classifier.get_weights()])
    tagger = TokenClassifier.from_pretrained(folder, num_classes=2)
    words = [text.split() for text in TEXTS]
    paths = {name: str(tmp_path / f"{name}.keras") for name in ("clf", "tagger")}
    classifier.save(paths["clf"])
    tagger.save(paths["tagger"])
    vocab = os.path.join(folder, "vocab.txt")
    with open(vocab, "rb") as f:
        vocab_bytes = f.read()
    os.rename(vocab, vocab + ".moved")
    # Every temporary file or folder (Keras's asset folder, any vocab copy) goes here.
    temp_dir = tmp_path / "temp"
    temp_dir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp_dir))

    loaded = keras.models.load_model(paths["clf"])
    np.testing.assert_allclose(loaded.predict(TEXTS, verbose=0),
                               classifier.predict(TEXTS, verbose=0), atol=1e-6, rtol=0)
    assert keras.models.load_model(paths["tagger"]).predict(words) == tagger.predict(words)
    # The loaded model saves again with its stored vocab (to .keras and a model directory).
    loaded.save(str(tmp_path / "again.keras"))
    loaded.save_model_dir(str(tmp_path / "again"))
    with open(os.path.join(str(tmp_path / "again"), "vocab.txt"), "rb") as f:
        assert f.read() == vocab_bytes
    again = keras.models.load_model(str(tmp_path / "again.keras"))
    with again.preprocessor.vocab_path() as path, open(path, "rb") as f:
        assert f.read() == vocab_bytes
    # TensorFlow's autograph writes the code it generates there too (removed at exit).
    assert [name for name in os.listdir(temp_dir)
            if not name.startswith("__autograph_generated_file")] == []
