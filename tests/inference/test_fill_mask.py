"""fill_mask: Hugging Face's fill-mask predictions, joined words, and the user's mistakes."""

import json
import os

import numpy as np
import pytest

from bert_tf.checkpoints.model_dir import read_config, restore_model_dir
from bert_tf.inference.fill_mask import FillMaskError, fill_mask, format_result, join_wordpieces
from bert_tf.models import BertEncoder, BertPretrainer
from bert_tf.tokenization.vocab import load_vocab


def test_top5_ids_and_probabilities_match_hugging_face(masked_lm_model_dir, fill_mask_reference):
    # One call for all texts: batched and padded here, one text at a time in the reference.
    results = fill_mask(masked_lm_model_dir, [case["text"] for case in fill_mask_reference])
    vocab = load_vocab(os.path.join(masked_lm_model_dir, "vocab.txt"))
    for case, result in zip(fill_mask_reference, results):
        assert result.text == case["text"]
        assert len(result.masks) == len(case["ids"])
        for mask, ids, probabilities in zip(result.masks, case["ids"], case["probabilities"]):
            assert [vocab.index(piece) for piece, _ in mask.candidates] == ids, case["text"]
            np.testing.assert_allclose([p for _, p in mask.candidates], probabilities,
                                       atol=1e-5, rtol=0)


def test_adjacent_masks_form_one_word_and_separate_masks_do_not(masked_lm_model_dir):
    apart, together = fill_mask(masked_lm_model_dir, ["[MASK] God created the [MASK].",
                                                      "God saw that it was [MASK][MASK]."])
    assert len(apart.masks) == 2 and len(apart.words) == 2
    assert apart.words == tuple(mask.candidates[0][0] for mask in apart.masks)
    assert len(together.masks) == 2 and len(together.words) == 1
    assert together.masks[1].position == together.masks[0].position + 1
    assert together.words[0] == join_wordpieces([m.candidates[0][0] for m in together.masks])
    lines = format_result(together, answer="good")
    assert lines[0].endswith("(answer: good)")
    assert lines[-1] == f"  [MASK] 1-2 as one word: {together.words[0]}"


def test_join_wordpieces_glues_continuation_pieces():
    assert join_wordpieces(["light", "##s", "on", "the", "water", "##s"]) == "lights on the waters"
    assert join_wordpieces(["##ing"]) == "ing"


def test_top_k_and_a_pretrainer_in_memory(masked_lm_model_dir):
    text = "And God said, Let there be [MASK]."
    (from_dir,) = fill_mask(masked_lm_model_dir, [text], top_k=3)
    encoder = BertEncoder(read_config(masked_lm_model_dir))
    pretrainer = BertPretrainer(encoder)
    restore_model_dir(masked_lm_model_dir, **pretrainer.checkpoint_items())
    with pytest.raises(FillMaskError, match="needs `vocab_file=`"):
        fill_mask(pretrainer, [text])
    (in_memory,) = fill_mask(pretrainer, [text], top_k=3,
                             vocab_file=os.path.join(masked_lm_model_dir, "vocab.txt"))
    assert len(from_dir.masks[0].candidates) == 3
    assert in_memory == from_dir
    (everything,) = fill_mask(pretrainer, [text], top_k=10_000,
                              vocab_file=os.path.join(masked_lm_model_dir, "vocab.txt"))
    probabilities = [p for _, p in everything.masks[0].candidates]
    assert len(probabilities) == encoder.config.vocab_size  # capped at the vocab
    assert abs(sum(probabilities) - 1.0) < 1e-5


def test_refuses_what_it_cannot_use(masked_lm_model_dir, tiny_model_dir, tmp_path):
    with pytest.raises(FillMaskError, match="does not exist"):
        fill_mask(str(tmp_path / "missing"), ["a [MASK]"])
    # An encoder-only directory (like a converted sentence-transformers MiniLM).
    with pytest.raises(FillMaskError, match="has no masked-LM head .*holds encoder"):
        fill_mask(tiny_model_dir, ["a [MASK]"])
    with pytest.raises(FillMaskError, match=r"Text 1 'no mask \[mask\]' has no \[MASK\]"):
        fill_mask(masked_lm_model_dir, ["the [MASK]", "no mask [mask]"])
    too_long = " ".join(["god"] * 38) + " [MASK]"  # 39 pieces + [CLS] [SEP] > 40 positions
    with pytest.raises(FillMaskError, match="Text 0 .* 39 WordPieces.* max length 40"):
        fill_mask(masked_lm_model_dir, [too_long])
    assert len(fill_mask(masked_lm_model_dir, [too_long[4:]])[0].masks) == 1  # 38 + 2 fits
    with pytest.raises(FillMaskError, match="top_k must be at least 1"):
        fill_mask(masked_lm_model_dir, ["the [MASK]"], top_k=0)


def test_refuses_a_left_to_right_model(masked_lm_model_dir, tmp_path):
    import shutil

    ltr_dir = tmp_path / "ltr"
    shutil.copytree(masked_lm_model_dir, ltr_dir)
    (ltr_dir / "model_info.json").write_text(json.dumps({"objective": "ltr"}))
    with pytest.raises(FillMaskError, match="left-to-right"):
        fill_mask(str(ltr_dir), ["the [MASK]"])
