"""MaskedLM: `BertPretrainer`'s masked-LM head on raw text; `predict` is `fill_mask`."""

import keras

from bert_tf.errors import CheckpointError
from bert_tf.inference.fill_mask import fill_mask
from bert_tf.keras_tasks.text_inputs import TaskInputError, text_columns
from bert_tf.keras_tasks.text_task import UnlabelledTextTask, check_preprocessor
from bert_tf.models import BertPretrainer


@keras.saving.register_keras_serializable(package="bert_tf")
class MaskedLM(UnlabelledTextTask, BertPretrainer):
    """Fills `[MASK]` in raw texts: `predict(texts)` returns `bert_tf.inference.fill_mask`'s
    `FillMaskResult`s (top-k WordPieces and probabilities per mask, joined words).

    A `BertPretrainer` without the next-sentence head; with ids (a dict holding
    `masked_lm_positions`) `predict` is Keras's and returns `mlm_logits`. Pretraining from raw
    text needs masking, which `run_pretraining.py` and `bert_tf.data` do; here `fit` takes
    those ids after `compile(loss=...)`.

    Args:
      encoder: a `BertEncoder`.
      preprocessor: a `BertPreprocessor` (its vocab and casing tokenize `predict`'s texts),
        or None to take ids.
      top_k: candidates per mask `predict` returns.

    Example:
    >>> mlm = MaskedLM.from_pretrained("bert-base-uncased/")  # doctest: +SKIP
    >>> mlm.predict(["Let there be [MASK]."])[0].words        # doctest: +SKIP
    ('light',)
    """

    model_dir_head = "pretrainer"

    def __init__(self, encoder, preprocessor=None, top_k=5, **kwargs):
        check_preprocessor(encoder, preprocessor)
        super().__init__(encoder, use_next_sentence=False, **kwargs)
        self.preprocessor = preprocessor
        self.text_pair = False
        self.top_k = top_k

    @classmethod
    def from_pretrained(cls, folder, max_seq_length=None, do_lower_case=None, **kwargs):
        """A masked LM on a checkpoint folder with a masked-LM head (pretraining output,
        Hugging Face `BertForPreTraining` / `BertForMaskedLM`, google-research checkpoint).

        Raises:
          CheckpointError: the folder's checkpoint has no masked-LM head (or see
            `TextClassifier.from_pretrained`).
        """
        encoder, preprocessor, pretrained = cls.pretrained_parts(folder, max_seq_length,
                                                                 do_lower_case)
        if "masked_lm" not in pretrained.heads:
            raise CheckpointError(
                f"{folder} has no masked-LM head: MaskedLM needs a pretrained checkpoint with "
                "one (run_pretraining output, Hugging Face BertForPreTraining).")
        model = cls(encoder, preprocessor=preprocessor, **kwargs)
        model.masked_lm.set_weights(pretrained.heads["masked_lm"].get_weights())
        return model

    def task_config(self):
        return {"preprocessor": self.text_task_config()["preprocessor"], "top_k": self.top_k}

    def predict(self, x, batch_size=None, top_k=None, **kwargs):
        """`fill_mask`'s results for raw texts (`top_k` defaults to the model's); Keras's
        `mlm_logits` for ids."""
        if self._takes_ids(x):
            return super().predict(x, batch_size=batch_size, **kwargs)
        texts = list(text_columns(x, text_pair=False)[0])
        with self.preprocessor.vocab_path() as vocab_file:
            return fill_mask(self, texts, top_k=top_k or self.top_k, vocab_file=vocab_file,
                             lower_case=self.preprocessor.lower_case)

    def fit(self, x=None, y=None, **kwargs):
        if not self._takes_ids(x):
            raise TaskInputError("MaskedLM.fit takes masked ids (a dict with "
                                 "masked_lm_positions, as bert_tf.data writes), not raw texts.")
        return super().fit(x, y, **kwargs)
