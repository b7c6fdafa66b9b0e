"""Temporary adapter until bert_tf.tokenization lands (same API as its BertTokenizer)."""

import tensorflow as tf
import tensorflow_text as tf_text


class _Adapter:
    def __init__(self, vocab_file, lower_case):
        with tf.io.gfile.GFile(vocab_file) as f:
            vocab = [line.rstrip("\n") for line in f]
        self.vocab_file = vocab_file
        self.vocab_size = len(vocab)
        ids = {t: i for i, t in enumerate(vocab)}
        self.pad_id, self.unk_id = ids["[PAD]"], ids["[UNK]"]
        self.cls_id, self.sep_id, self.mask_id = ids["[CLS]"], ids["[SEP]"], ids["[MASK]"]
        self._tokenizer = tf_text.BertTokenizer(vocab_file, lower_case=lower_case, token_out_type=tf.int32)

    def tokenize(self, strings):
        return self._tokenizer.tokenize(strings)


def load_tokenizer(vocab_file, lower_case):
    return _Adapter(vocab_file, lower_case)
