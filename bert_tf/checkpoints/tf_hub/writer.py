"""Our weights as a TF Hub BERT SavedModel names and shapes its variables (Model Garden's).

bert_tf writes TF Hub SavedModels from a model (`export/hub_modules.py`, which traces the
encoder's functions); this is the format's part of it: `encoder_weights.TABLE` applied the
other way, each per-head kernel split back into Model Garden's `[H, N, H/N]` shapes, so every
TF Hub reader, this package's own included, reads the export like TF Hub's BERTs.

Example:
>>> variables = saved_model_variables(weights, config, heads=["masked_lm"])  # doctest: +SKIP
>>> variables[0][:2]                                                        # doctest: +SKIP
('embeddings/word_embeddings/embeddings', 'word_embeddings/embeddings')
"""

import numpy as np

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.tf_hub import encoder_weights


def saved_model_variables(weights, config, heads=()):
    """`[(our weight path, TF Hub variable name, float32 value in its shape)]`, in table order.

    Args:
      weights: our weights by path (`weight_map.model_weights`): the encoder's, and the
        masked-LM head's where `heads` names it.
      config: the encoder's `BertConfig`.
      heads: the pretraining heads exported (`masked_lm` or none).
    """
    rules = weight_map.expand(encoder_weights.TABLE, config.num_hidden_layers, heads)
    tensors = weight_map.export_to(rules, weights)
    return [(rule.target, rule.source, np.reshape(tensors[rule.source],
                                                  encoder_weights.model_garden_shape(
                                                      rule.source, tensors[rule.source].shape,
                                                      config.num_attention_heads)))
            for rule in rules]
