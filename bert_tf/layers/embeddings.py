"""Word + learned position + token type embeddings, then LayerNorm and dropout."""

import keras
import tensorflow as tf

from bert_tf.layers.dropout import Dropout
from bert_tf.layers.initializers import truncated_normal


class RowReadEmbedding(keras.layers.Embedding):
    """Keras's `Embedding`, reading only the rows it looks up from its table.

    Keras's `call` reads the whole table, then gathers. Once rows of a variable have been
    read or written sparsely (`FusedAdamW` steps an embedding table's rows with
    `scatter_update`), TensorFlow copies it on every whole read: 47 MB a training step for
    MiniLM's word table (~7 ms, docs/design.md "Packed training"). `tf.gather` on the
    variable itself is a `ResourceGather` of the rows, with the same sparse gradient. A
    layer whose table another layer reads whole (the masked-LM head's tied decoder) reads
    whole too (`reads_rows = False`): its first row read would make every whole read a copy.

    Example:
    >>> layer = RowReadEmbedding(10, 4)
    >>> layer(tf.constant([[1, 2]])).shape
    TensorShape([1, 2, 4])
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.reads_rows = True

    def call(self, inputs):
        if not self.reads_rows:
            return super().call(inputs)
        # `Embedding` turns autocast off, so `.value` is the variable, not a cast copy.
        rows = tf.gather(self.embeddings.value, tf.cast(inputs, tf.int32))
        return tf.cast(rows, self.compute_dtype)


@keras.saving.register_keras_serializable(package="bert_tf")
class BertEmbeddings(keras.layers.Layer):
    """BERT's input embeddings (paper Figure 2): token + segment + position.

    Args:
      vocab_size: number of WordPiece ids.
      hidden_size: embedding width H.
      max_position_embeddings: longest sequence the position table covers.
      type_vocab_size: number of segment ids.
      dropout_rate: dropout after LayerNorm.
      layer_norm_eps: LayerNorm epsilon.
      initializer_range: stddev of the truncated normal initializer.

    Call with int `[B, S]` word and type ids (positions are the columns, or `position_ids`
    `[B, S]` for rows of several sequences, each from 0); with the batch's
    `packing` (`layers.packing.TokenPacking`) the result is packed: `[T, H]` for the real
    tokens only, each at its own position.

    Example:
    >>> layer = BertEmbeddings(vocab_size=100, hidden_size=8, max_position_embeddings=16)
    >>> layer(tf.ones([2, 5], tf.int32), tf.zeros([2, 5], tf.int32)).shape
    TensorShape([2, 5, 8])
    """

    def __init__(self, vocab_size, hidden_size, max_position_embeddings, type_vocab_size=2,
                 dropout_rate=0.1, layer_norm_eps=1e-12, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.dropout_rate = dropout_rate
        self.layer_norm_eps = layer_norm_eps
        self.initializer_range = initializer_range
        initializer = truncated_normal(initializer_range)
        self.word_embeddings = RowReadEmbedding(
            vocab_size, hidden_size, embeddings_initializer=initializer, name="word_embeddings")
        self.token_type_embeddings = RowReadEmbedding(
            type_vocab_size, hidden_size, embeddings_initializer=initializer,
            name="token_type_embeddings")
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_eps, dtype="float32", name="layer_norm")
        self.dropout = Dropout(dropout_rate)

    def build(self, input_shape=None):
        self.word_embeddings.build((None, None))
        self.token_type_embeddings.build((None, None))
        self.position_embeddings = self.add_weight(
            name="position_embeddings",
            shape=(self.max_position_embeddings, self.hidden_size),
            initializer=truncated_normal(self.initializer_range),
        )
        self.layer_norm.build((None, None, self.hidden_size))
        self.built = True

    def call(self, input_word_ids, input_type_ids, training=None, packing=None, position_ids=None):
        if packing is not None and position_ids is not None:
            raise ValueError("BertEmbeddings: `packing` (real tokens only) and `position_ids` "
                             "(rows of several sequences) do not combine.")
        if packing is not None:  # [T] ids of the real tokens
            input_word_ids = packing.pack(input_word_ids)
            input_type_ids = packing.pack(input_type_ids)
        # Embed tokens, segments and positions; sum, normalize, drop out.
        embeddings = self.word_embeddings(input_word_ids)
        embeddings += self.token_type_embeddings(input_type_ids)
        if position_ids is not None:
            positions = tf.gather(self.position_embeddings, tf.cast(position_ids, tf.int32))
        elif packing is None:
            seq_length = tf.shape(input_word_ids)[1]
            positions = self.position_embeddings[tf.newaxis, :seq_length]
        else:
            positions = tf.gather(self.position_embeddings, packing.positions)
        embeddings += tf.cast(positions, embeddings.dtype)
        embeddings = tf.cast(self.layer_norm(embeddings), self.compute_dtype)
        return self.dropout(embeddings, training=training)

    def compute_output_shape(self, input_word_ids_shape, *args, **kwargs):
        return tuple(input_word_ids_shape) + (self.hidden_size,)

    def get_config(self):
        config = super().get_config()
        config.update(
            vocab_size=self.vocab_size,
            hidden_size=self.hidden_size,
            max_position_embeddings=self.max_position_embeddings,
            type_vocab_size=self.type_vocab_size,
            dropout_rate=self.dropout_rate,
            layer_norm_eps=self.layer_norm_eps,
            initializer_range=self.initializer_range,
        )
        return config
