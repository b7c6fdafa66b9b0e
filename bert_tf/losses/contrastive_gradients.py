"""One replica's contrastive training step on rows of texts: the loss and its gradients.

A batch is a dict of token ids `[b, C, S]`: row i holds its anchor, positive and hard
negatives (C columns), so splitting it across replicas keeps rows whole. The C·b texts are
embedded as one flat batch (one encoder call, `encode`), split back into columns, gathered
across replicas (`ranking.gather_across_replicas`) and ranked. A loss with `mini_batch_size`
(the cached one) embeds in mini-batches instead (GradCache, below). Both return this replica's
share of the global batch's mean loss (its anchors' summed losses over the global batch's
rows), the convention of `training.train_step` and of Keras's gradient all-reduce (a sum).
"""

import tensorflow as tf

from bert_tf.losses.ranking import gather_across_replicas

# The variable a Keras `SeedGenerator` keeps its state in (dropout's random stream).
_SEED_STATE = "seed_generator_state"


def random_state(model):
    """The model's random-stream variables (dropout seeds), for the cached step to replay."""
    return [v for v in model.non_trainable_variables if v.name == _SEED_STATE]


def columns_of(embeddings, num_columns):
    """Flat `[b·C, D]` embeddings (rows in order) -> C columns of `[b, D]`."""
    rows = tf.reshape(embeddings, [-1, num_columns, tf.shape(embeddings)[-1]])
    return tf.unstack(rows, num=num_columns, axis=1)


def replica_loss(loss, columns):
    """This replica's share of the global batch's mean loss (see the module docstring)."""
    gathered, offset, total = gather_across_replicas(columns)
    losses = loss.ranking_losses(columns, gathered, offset)
    return tf.reduce_sum(losses) / tf.cast(total, tf.float32)


def contrastive_loss_and_gradients(loss, encode, ids, variables, scale_loss=None, replay=()):
    """`(loss share, gradients of variables)` of one replica's batch of text rows.

    Args:
      loss: a ranking loss of `bert_tf.losses` (`ranking_losses`, `mini_batch_size`).
      encode: `ids dict [n, S] -> embeddings [n, D]`, the model in training mode.
      ids: dict of int32 `[b, C, S]` (C static: anchor, positive[, negatives]).
      variables: the trainable variables to differentiate.
      scale_loss: `loss -> scaled loss` before differentiation (a loss-scale optimizer's).
      replay: variables of the model's random streams (`random_state`), restored before
        the cached loss's second pass so that its dropout masks are the first pass's.

    Returns:
      The unscaled loss share and one gradient (or None) per variable.
    """
    scale_loss = scale_loss or (lambda value: value)
    num_columns = ids["input_word_ids"].shape[1]
    flat = {name: tf.reshape(t, [-1, tf.shape(t)[-1]]) for name, t in ids.items()}  # [b·C, S]
    if loss.mini_batch_size is None:
        with tf.GradientTape() as tape:
            value = replica_loss(loss, columns_of(encode(flat), num_columns))
            scaled = scale_loss(value)
        return value, tape.gradient(scaled, variables)
    return _cached(loss, encode, flat, num_columns, variables, scale_loss, replay)


def _dense(gradient):
    # Embedding-table gradients come as IndexedSlices; a loop sum wants one tensor shape.
    return None if gradient is None else tf.convert_to_tensor(gradient)


def _cached(loss, encode, flat, num_columns, variables, scale_loss, replay):
    """GradCache (`cached_ranking.py`): embed without gradients, cache d loss / d embeddings,
    then re-embed each mini-batch with gradients and back-propagate its cached slice."""
    size = loss.mini_batch_size
    count = tf.shape(flat["input_word_ids"])[0]
    chunks = (count + size - 1) // size

    def chunk(index):
        return tf.nest.map_structure(lambda t: t[index * size:(index + 1) * size], flat)

    saved = [tf.identity(tf.convert_to_tensor(v)) for v in replay]

    def embed(index, array):  # no tape is recording: no activations are kept
        embeddings = tf.stop_gradient(tf.cast(encode(chunk(index)), tf.float32))
        return index + 1, array.write(index, embeddings)

    # One mini-batch at a time: while_loop runs up to 10 independent iterations at once by
    # default, which holds as many mini-batches' activations as the plain loss would.
    _, array = tf.while_loop(
        lambda index, _: index < chunks, embed,
        (tf.constant(0), tf.TensorArray(tf.float32, size=chunks, infer_shape=False)),
        parallel_iterations=1)
    embeddings = array.concat()
    with tf.GradientTape() as tape:
        tape.watch(embeddings)
        value = replica_loss(loss, columns_of(embeddings, num_columns))
        scaled = scale_loss(value)
    cached = tape.gradient(scaled, embeddings)  # [b·C, D]
    for variable, state in zip(replay, saved):
        variable.assign(state)

    def chunk_gradients(index):
        with tf.GradientTape() as chunk_tape:
            embedded = tf.cast(encode(chunk(index)), tf.float32)
            surrogate = tf.reduce_sum(embedded * cached[index * size:(index + 1) * size])
        return [_dense(g) for g in chunk_tape.gradient(surrogate, variables)]

    first = chunk_gradients(tf.constant(0))
    present = [i for i, g in enumerate(first) if g is not None]

    def accumulate(index, *sums):
        more = chunk_gradients(index)
        return (index + 1, *[total + more[i] for total, i in zip(sums, present)])

    _, *sums = tf.while_loop(lambda index, *_: index < chunks, accumulate,
                             (tf.constant(1), *[first[i] for i in present]),
                             parallel_iterations=1)
    gradients = [None] * len(variables)
    for i, total in zip(present, sums):
        gradients[i] = total
    return value, gradients
