"""Keras layers that build BERT: embeddings, attention, transformer block, heads."""

from bert_tf.layers.activations import get_activation
from bert_tf.layers.attention import MultiHeadSelfAttention
from bert_tf.layers.dense import Dense
from bert_tf.layers.embeddings import BertEmbeddings
from bert_tf.layers.masked_lm_head import MaskedLMHead
from bert_tf.layers.transformer_block import TransformerBlock

__all__ = [
    "BertEmbeddings",
    "Dense",
    "MaskedLMHead",
    "MultiHeadSelfAttention",
    "TransformerBlock",
    "get_activation",
]
