"""One traced graph per Keras layer or model, shared by every dataset and evaluation that calls
it."""

import weakref

import tensorflow as tf

# layer -> {call kwargs: tf.function}; weak keys, so a cached graph never keeps its layer alive.
_TRACED = weakref.WeakKeyDictionary()


def traced_call(layer, **call_kwargs):
    """`layer(inputs, **call_kwargs)` as a `tf.function`, one per (layer, call kwargs).

    A fresh `tf.function` or `Dataset.map` over the layer itself traces its graph anew each
    time: a `BertPreprocessor`'s ragged tokenizer graph ~1.4 s on 2 cores for every dataset
    built on it (a 2-epoch fine-tuning run builds 8; a Keras task model one per `fit`,
    `evaluate` and `predict`), a MiniLM forward pass ~4 s at every epoch's dev evaluation.
    Callers that reuse this function trace once per input signature (`reduce_retracing`).

    Example:
    >>> pack = traced_call(preprocessor)  # doctest: +SKIP
    >>> dataset.map(lambda texts, labels: (pack(texts), labels))  # doctest: +SKIP
    >>> logits = traced_call(model, training=False)(batch)  # doctest: +SKIP
    """
    functions = _TRACED.setdefault(layer, {})
    key = tuple(sorted(call_kwargs.items()))
    if key not in functions:
        held = weakref.ref(layer)  # the cached function must not keep its key alive
        functions[key] = tf.function(lambda inputs: held()(inputs, **call_kwargs),
                                     reduce_retracing=True)
    return functions[key]
