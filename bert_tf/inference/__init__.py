"""Using a trained model on text: fill-mask predictions of the masked-LM head."""

from bert_tf.inference.fill_mask import (
    FillMaskError,
    FillMaskResult,
    MaskPrediction,
    fill_mask,
    format_result,
    join_wordpieces,
)
from bert_tf.inference.masked_examples import mask_one_word

__all__ = ["FillMaskError", "FillMaskResult", "MaskPrediction", "fill_mask", "format_result",
           "join_wordpieces", "mask_one_word"]
