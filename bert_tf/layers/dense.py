"""`keras.layers.Dense` whose `[B, S, H]` inputs in inference are one broadcast matmul."""

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="bert_tf")
class Dense(keras.layers.Dense):
    """A `keras.layers.Dense` that leaves out `tf.tensordot` at inference.

    Keras 3 multiplies a rank-3 input by the 2-D kernel with `tf.tensordot`, which wraps
    each MatMul in Shape, GatherV2, Prod, Concat and two Reshapes. In the padded `[B, S, H]`
    inference graph that is 270 of the 691 ops of the MiniLM encoder's TFLite model. Here
    such an input at inference is one `BatchMatMulV2` with the kernel broadcast, which the
    TFLite converter turns into a single FULLY_CONNECTED. The graph drops to 421 ops and
    batch-1 p50 from 4.64 to 3.65 ms (docs/design.md, "Serving:
    batch 1, TFLite, bf16").

    Training, 2-D inputs (the packed `[T, H]` layout) and quantized layers keep Keras's
    path. The kernel gradient of a broadcast BatchMatMulV2 is a batched matmul and then a
    sum over the batch, where tensordot's is one GEMM.

    Example:
    >>> Dense(4)(tf.ones([2, 3, 8])).shape
    TensorShape([2, 3, 4])
    """

    def call(self, inputs, training=None):
        if training or inputs.shape.rank in (None, 2) or self.quantization_mode is not None:
            return super().call(inputs, training=training)
        outputs = tf.matmul(inputs, tf.cast(self.kernel, inputs.dtype))
        if self.bias is not None:
            outputs = tf.nn.bias_add(outputs, tf.cast(self.bias, inputs.dtype))
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs
