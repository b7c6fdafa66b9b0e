"""google-research `extract_features.py` output: per-token values of chosen layers, as JSONL.

Input: one example a line, `text_a` or `text_a ||| text_b`. Output: one JSON object a line,
`{"linex_index": i, "features": [{"token": "[CLS]", "layers": [{"index": -1, "values":
[...]}, ...]}, ...]}` over the packed tokens (the [CLS]/[SEP] included, padding excluded),
values rounded to 6 decimals as google-research writes them.
"""

import json

import numpy as np
import tensorflow as tf

from bert_tf.checkpoints.model_dir import vocab_path
from bert_tf.finetuning.table_reader import DataError, read_text, split_lines
from bert_tf.models.bert_encoder import BertEncoder
from bert_tf.models.frozen_bert_features import FrozenBertFeatures
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor
from bert_tf.tokenization.vocab import load_vocab

SEPARATOR = " ||| "


def read_input_lines(path):
    r"""`{line index: (text_a, text_b or None)}` of the non-blank lines of `path`.

    The key is the 0-based line number (lines end at "\n" only), written as `linex_index`, so
    an output line points at its input line even when blank lines are skipped.

    Raises:
      DataError: the file is missing, not UTF-8 (line named) or has no text.
    """
    lines = split_lines(read_text(path))
    examples = {index: tuple(line.strip().split(SEPARATOR, 1)) if SEPARATOR in line
                else (line.strip(), None)
                for index, line in enumerate(lines) if line.strip()}
    if not examples:
        raise DataError(f"{path} has no text lines.")
    return examples


def _packed(preprocessor, examples, indices):
    texts_a = tf.constant([examples[i][0] for i in indices])
    if examples[indices[0]][1] is None:
        return preprocessor(texts_a)
    return preprocessor((texts_a, tf.constant([examples[i][1] for i in indices])))


def extract_features(model_dir, examples, output_file, layers=(-1, -2, -3, -4),
                     max_seq_length=128, batch_size=8, do_lower_case=True):
    """Writes the JSONL for `examples` (`{linex_index: (text_a, text_b)}` from
    `read_input_lines`), in input order, each batch packed to its own longest sequence (the
    values at real tokens do not depend on the padding); returns the number of lines written."""
    vocab = load_vocab(vocab_path(model_dir))
    preprocessor = BertPreprocessor(vocab_path(model_dir), lower_case=do_lower_case,
                                    seq_length=max_seq_length, padding="longest")
    encoder = BertEncoder.from_pretrained(model_dir)
    # One layer per requested index, kept apart: concat of single-layer features.
    features = FrozenBertFeatures(encoder, layers=layers, combine="concat")
    forward = tf.function(features, reduce_retracing=True)  # one width per batch
    width = encoder.config.hidden_size
    with tf.io.gfile.GFile(output_file, "w") as f:
        order = sorted(examples)
        for begin in range(0, len(order), batch_size):
            batch = order[begin:begin + batch_size]
            # Single sentences and pairs pack differently: run each kind on its own.
            results = {}
            for kind in (False, True):
                indices = [i for i in batch if (examples[i][1] is not None) == kind]
                if indices:
                    inputs = _packed(preprocessor, examples, indices)
                    values = forward(inputs).numpy()
                    for row, index in enumerate(indices):
                        results[index] = (inputs["input_word_ids"][row].numpy(),
                                          inputs["input_mask"][row].numpy(), values[row])
            for index in batch:
                ids, mask, values = results[index]
                tokens = []
                for position in np.flatnonzero(mask):
                    per_layer = values[position].reshape(len(layers), width)
                    tokens.append({"token": vocab[ids[position]], "layers": [
                        {"index": int(layer), "values": [round(float(x), 6) for x in vector]}
                        for layer, vector in zip(layers, per_layer)]})
                f.write(json.dumps({"linex_index": index, "features": tokens}) + "\n")
    return len(examples)
