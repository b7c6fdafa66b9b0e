"""Pretraining data: corpus preparation, TFRecord creation and tf.data pipelines."""
