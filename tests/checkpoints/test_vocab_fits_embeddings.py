"""A vocab longer than the embedding table is refused by every format before anything is built
(it converted with exit 0 and failed at the first request that met a late id)."""

import os
import shutil

import pytest

from bert_tf.checkpoints import registry
from bert_tf.errors import CheckpointError

TESTDATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "testdata")


@pytest.mark.parametrize("folder, vocab", [
    ("model_garden/encoder", "vocab.txt"),
    ("tf_hub/bert_uncased_tiny", "assets/vocab.txt"),
    ("tiny_hf_pretraining", "vocab.txt"),
])
def test_a_vocab_longer_than_the_embedding_table_is_refused(tmp_path, folder, vocab):
    copy = str(tmp_path / "folder")
    shutil.copytree(os.path.join(TESTDATA, folder), copy)
    rows = registry.read_pretrained(copy, do_lower_case=True).config.vocab_size
    with open(os.path.join(copy, vocab), "a", encoding="utf-8") as f:
        f.write("".join(f"extra{i}\n" for i in range(rows)))
    with pytest.raises(CheckpointError, match=rf"{2 * rows} tokens, but the checkpoint's "
                                              rf"word-embedding table has {rows} rows"):
        registry.read_pretrained(copy, do_lower_case=True)
