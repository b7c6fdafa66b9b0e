"""Online tf.data input for pretraining: batches from TFRecords, or from text masked in-graph."""
