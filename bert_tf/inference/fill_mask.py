"""Fill-mask: the masked-LM head's most probable WordPieces for each `[MASK]` in a text.

What a user of Hugging Face's `fill-mask` pipeline judges a masked language model by first.
Each `[MASK]` token is predicted on its own in one forward pass (as that pipeline does), so
several masks per text are allowed. A word hidden behind a run of adjacent masks
(`[MASK][MASK]` for `light ##s`) is shown joined: `FillMaskResult.words` glues the most
probable piece of each mask in the run the WordPiece way (`##` pieces attach to the one before,
others are separated by a space), giving `lights`.
"""

import dataclasses
import os

import numpy as np
import tensorflow as tf

from bert_tf.checkpoints.model_dir import (
    model_checkpoint_path,
    read_config,
    read_model_info,
    restore_model_dir,
    vocab_path,
)
from bert_tf.errors import UserError
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.bert_pretrainer import BertPretrainer
from bert_tf.tokenization import vocab as vocab_lib
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor

SUFFIX = "##"
_BATCH_SIZE = 32  # Texts per forward pass.
_LEFT_TO_RIGHT = ("{} was trained left-to-right (--left_to_right): its head predicts the next "
                  "token, not a masked one, so fill-mask does not apply.")


class FillMaskError(UserError, ValueError):
    """A model directory or text that fill-mask cannot use; the message says which and why."""


@dataclasses.dataclass(frozen=True)
class MaskPrediction:
    """The top-k WordPieces for one `[MASK]`.

    Attributes:
      position: index of the `[MASK]` in the packed input (`[CLS]` is 0).
      candidates: `(wordpiece, probability)` pairs, most probable first.
    """

    position: int
    candidates: tuple


@dataclasses.dataclass(frozen=True)
class FillMaskResult:
    """Fill-mask predictions for one text.

    Attributes:
      text: the input text.
      masks: one `MaskPrediction` per `[MASK]`, in text order.
      words: one string per run of adjacent `[MASK]`s: the top-1 pieces joined into a word.

    Example:
    >>> result = fill_mask(model_dir, ["Let there be [MASK]."])[0]  # doctest: +SKIP
    >>> result.masks[0].candidates[:2]  # doctest: +SKIP
    (('light', 0.41), ('peace', 0.07))
    """

    text: str
    masks: tuple
    words: tuple


def join_wordpieces(pieces):
    """Joins WordPieces into text: `["light", "##s", "on"]` -> `"lights on"`."""
    text = ""
    for piece in pieces:
        if piece.startswith(SUFFIX):
            text += piece[len(SUFFIX):]
        else:
            text += (" " if text else "") + piece
    return text


def format_result(result, answer=None):
    """Lines a person reads: the text, then per mask its top-k `piece probability`.

    Args:
      result: a `FillMaskResult`.
      answer: the hidden word, shown beside the predictions (e.g. for held-out sentences).

    Example:
    >>> print("\\n".join(format_result(result, answer="light")))  # doctest: +SKIP
    And God said, Let there be [MASK].   (answer: light)
      [MASK] 1: light 0.4120  peace 0.0710  darkness 0.0502  water 0.0301  life 0.0210
    """
    lines = [result.text + (f"   (answer: {answer})" if answer is not None else "")]
    for number, mask in enumerate(result.masks, start=1):
        candidates = "  ".join(f"{piece} {probability:.4f}"
                               for piece, probability in mask.candidates)
        lines.append(f"  [MASK] {number}: {candidates}")
    runs = _runs([mask.position for mask in result.masks])
    for run, word in zip(runs, result.words):
        if len(run) > 1:
            lines.append(f"  [MASK] {run[0] + 1}-{run[-1] + 1} as one word: {word}")
    return lines


def _load(model_dir_or_models, vocab_file, lower_case):
    """`(pretrainer, vocab_file, lower_case)` from a model directory or a `BertPretrainer`."""
    if isinstance(model_dir_or_models, BertPretrainer):
        if vocab_file is None:
            raise FillMaskError("fill_mask on a BertPretrainer needs `vocab_file=`, the vocab "
                                "it was trained with.")
        if model_dir_or_models.encoder.causal_attention:
            raise FillMaskError(_LEFT_TO_RIGHT.format("This BertPretrainer"))
        return model_dir_or_models, vocab_file, lower_case
    if not isinstance(model_dir_or_models, (str, os.PathLike)):
        raise TypeError("fill_mask takes a model directory or a BertPretrainer; received "
                        f"{type(model_dir_or_models).__name__}.")
    model_dir = os.fspath(model_dir_or_models)
    if not os.path.isdir(model_dir):
        raise FillMaskError(f"Model directory {model_dir} does not exist.")
    path = model_checkpoint_path(model_dir)
    saved = {name.split("/")[0] for name, _ in tf.train.list_variables(path) if "/" in name}
    if "masked_lm" not in saved:
        raise FillMaskError(
            f"Model directory {model_dir} has no masked-LM head (its checkpoint holds "
            f"{', '.join(sorted(saved))}): fill-mask needs a pretrained model with one, e.g. "
            "a run_pretraining output or a converted Hugging Face BertForPreTraining.")
    info = read_model_info(model_dir)
    if info.get("objective") == "ltr":
        raise FillMaskError(_LEFT_TO_RIGHT.format(f"Model directory {model_dir}"))
    pretrainer = BertPretrainer(BertEncoder(read_config(model_dir)),
                                use_next_sentence="next_sentence" in saved)
    restore_model_dir(model_dir, **pretrainer.checkpoint_items())
    lower_case = info.get("do_lower_case") if lower_case is None else lower_case
    return pretrainer, vocab_file or vocab_path(model_dir), lower_case


def _short(text, width=60):
    return repr(text if len(text) <= width else text[:width - 3] + "...")


def _mask_positions(texts, ids, mask_id, max_length):
    """Positions of `[MASK]` in each packed row (`[CLS]` first), checking every text fits."""
    positions = []
    for index, (text, row) in enumerate(zip(texts, ids)):
        if len(row) + 2 > max_length:
            raise FillMaskError(
                f"Text {index} {_short(text)} has {len(row)} WordPieces; with [CLS] and [SEP] "
                f"that exceeds the model's max length {max_length} (max_position_embeddings). "
                "Shorten it.")
        found = np.flatnonzero(row == mask_id) + 1
        if not len(found):
            raise FillMaskError(f"Text {index} {_short(text)} has no [MASK] token; write [MASK] "
                                "(upper case) where a word should be predicted.")
        positions.append(found)
    return positions


def _runs(positions):
    """Splits sorted positions into runs of adjacent ones: [3, 4, 7] -> [[0, 1], [2]] (indices)."""
    runs = [[0]]
    for i in range(1, len(positions)):
        if positions[i] == positions[i - 1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def _predict(pretrainer, preprocessor, texts, mask_id, top_k):
    """Top-k `(ids, probabilities)` `[masks, k]` per text of one batch, and the positions."""
    pieces = preprocessor.tokenize(tf.constant(texts)).merge_dims(1, -1)
    ids = [row.numpy() for row in pieces]
    positions = _mask_positions(texts, ids, mask_id, preprocessor.seq_length)
    inputs = preprocessor.bert_pack_inputs([pieces], seq_length=max(len(r) for r in ids) + 2)
    width = max(len(p) for p in positions)
    # Rows with fewer masks repeat position 0 ([CLS]); those predictions are dropped.
    inputs["masked_lm_positions"] = tf.constant(
        [np.pad(p, (0, width - len(p))) for p in positions], tf.int32)
    logits = pretrainer(inputs, training=False)["mlm_logits"]  # [B, P, V]
    probabilities, top_ids = tf.math.top_k(tf.nn.softmax(tf.cast(logits, tf.float32)), k=top_k)
    return [(top_ids[row, :len(p)].numpy(), probabilities[row, :len(p)].numpy(), p)
            for row, p in enumerate(positions)]


def fill_mask(model_dir_or_models, texts, top_k=5, vocab_file=None, lower_case=None):
    """Predicts the top-k WordPieces, with probabilities, for each `[MASK]` in each text.

    Texts are tokenized like the model's training text (`BertTokenizer`: `[MASK]` typed in
    the text becomes the mask id, as in Hugging Face), packed as `[CLS] text [SEP]` and run
    through the encoder and masked-LM head in batches; probabilities are the softmax over
    the whole vocab.

    Args:
      model_dir_or_models: a model directory whose checkpoint has a masked-LM head (pretraining
        output, converted `BertForPreTraining`), or a `BertPretrainer` in memory.
      texts: list of str, each with at least one `[MASK]`.
      top_k: candidates per mask.
      vocab_file: the vocab; defaults to the model directory's (needed for a `BertPretrainer`).
      lower_case: uncased tokenization; defaults to `do_lower_case` in `model_info.json`, else
        to what the vocab's casing says.

    Returns:
      One `FillMaskResult` per text, in order.

    Raises:
      FillMaskError: no such model directory, no masked-LM head, a text without `[MASK]` or
        longer than the model's `max_position_embeddings`.
      FileNotFoundError: the model directory lacks its config or checkpoint.
    """
    if top_k < 1:
        raise FillMaskError(f"top_k must be at least 1; got {top_k}.")
    pretrainer, vocab_file, lower_case = _load(model_dir_or_models, vocab_file, lower_case)
    vocab = vocab_lib.load_vocab(vocab_file)
    if lower_case is None:  # Not given, not recorded: what the vocab's casing says.
        lower_case = not vocab_lib.vocab_is_cased(vocab)
    mask_id = vocab_lib.special_token_ids(vocab).mask_id
    preprocessor = BertPreprocessor(
        vocab_file, lower_case=lower_case,
        seq_length=pretrainer.encoder.config.max_position_embeddings)
    top_k = min(top_k, len(vocab))
    results = []
    for begin in range(0, len(texts), _BATCH_SIZE):
        batch = list(texts[begin:begin + _BATCH_SIZE])
        for text, (ids, probabilities, positions) in zip(
                batch, _predict(pretrainer, preprocessor, batch, mask_id, top_k)):
            masks = tuple(
                MaskPrediction(int(position), tuple(
                    (vocab[i], float(p)) for i, p in zip(ids[m], probabilities[m])))
                for m, position in enumerate(positions))
            words = tuple(join_wordpieces([masks[m].candidates[0][0] for m in run])
                          for run in _runs(positions))
            results.append(FillMaskResult(text, masks, words))
    return results
