"""Reads a model directory: restores models from its checkpoint, or reads it into a `Pretrained`.

`restore_model_dir` fills models the caller built (trainers, exporters, fine-tuning) and
checks that every variable was found and is finite; `read` is the registry's reader: the
encoder, the pretraining heads and the fine-tuned task head its checkpoint holds.

Example:
>>> encoder = BertEncoder(read_config("/tmp/minilm"))              # doctest: +SKIP
>>> restore_model_dir("/tmp/minilm", encoder=encoder)              # doctest: +SKIP
'/tmp/minilm/model.ckpt'
>>> read("/tmp/sst2_model_dir").head                               # doctest: +SKIP
'classifier'
"""

import os

import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.huggingface.sentence_transformers import SentencePooling
from bert_tf.checkpoints.model_dir.layout import (
    CONFIG_NAME,
    HEAD_BIAS,
    MODEL_INFO_NAME,
    NAME,
    TASK_HEADS,
    checkpoint_variables,
    folder_of,
    model_checkpoint_path,
    read_config,
    read_model_info,
    resolve_lower_case,
    vocab_path,
)
from bert_tf.checkpoints.pretrained import Pretrained
from bert_tf.checkpoints.tokenizer_json import FolderVocab
from bert_tf.errors import CheckpointError, checkpoint_read_error
from bert_tf.tokenization import vocab as vocab_lib

# The `SentenceEncoder` poolings `model_info.json`'s `sentence_pooling` may name.
SENTENCE_POOLINGS = ("cls", "cls_token", "mean", "max")


def check_finite(variables, where):
    """Raises `CheckpointError` naming the first float variable holding NaN or Inf."""
    for variable in variables:
        value = tf.convert_to_tensor(variable)
        if value.dtype.is_floating and not bool(tf.reduce_all(tf.math.is_finite(value))):
            name = getattr(variable, "path", None) or variable.name
            raise CheckpointError(f"{where}: weight `{name}` holds NaN or Inf values; the "
                                  "model is unusable (retrain or convert it from a sound "
                                  "checkpoint).")


def restore_model_dir(model_dir, **objects):
    """Restores `objects` (e.g. `encoder=...`) from the model directory's checkpoint.

    Every variable of every given object must be found in the checkpoint, and be finite;
    checkpoint entries of other objects (heads not asked for, optimizer slots) are allowed.

    Returns:
      The checkpoint prefix read.

    Raises:
      FileNotFoundError: no model directory or no checkpoint in it.
      CheckpointError: the checkpoint is damaged, lacks some of `objects`, has shapes unlike
        the config or holds NaN/Inf weights.
    """
    path = model_checkpoint_path(model_dir)
    try:
        tf.train.Checkpoint(**objects).read(path).expect_partial().assert_existing_objects_matched()
    except AssertionError as error:
        raise CheckpointError(f"Checkpoint {path} does not hold {sorted(objects)} as expected: "
                              f"{error}") from None
    except (IndexError, tf.errors.OpError) as error:
        raise checkpoint_read_error(path, error) from None
    except ValueError as error:
        raise CheckpointError(f"Checkpoint {path} does not match the model built from "
                              f"{os.path.join(model_dir, CONFIG_NAME)}: {error}") from None
    check_finite([v for item in objects.values() for v in item.variables], f"Checkpoint {path}")
    return path


def _label_names(info):
    """`model_info.json`'s label names; None for the "0", "1"... of a model without names."""
    names = info.get("label_names")
    if names is None or names == [str(i) for i in range(len(names))]:
        return None
    return names


def _sentence_pooling(info, folder):
    """The `SentencePooling` `model_info.json` records (a sentence-transformers folder or a
    `SentenceEncoder` saved here), or None."""
    value = info.get("sentence_pooling")
    if value is None:
        return None
    if not (isinstance(value, dict) and value.get("pooling") in SENTENCE_POOLINGS
            and isinstance(value.get("normalize"), bool)):
        raise CheckpointError(
            f"{os.path.join(folder, MODEL_INFO_NAME)}: `sentence_pooling` must be "
            f"{{\"pooling\": one of {', '.join(SENTENCE_POOLINGS)}, \"normalize\": true or "
            f"false}}; got {value!r}.")
    return SentencePooling(value["pooling"], value["normalize"], info.get("max_seq_length"))


def _vocab(folder, info, do_lower_case):
    """`(FolderVocab or None, lower_case)`: a directory without `vocab.txt` still gives its
    encoder (`BertEncoder.from_pretrained`); only tokenizing needs the vocab."""
    if not os.path.isfile(vocab_path(folder)):
        return None, info.get("do_lower_case", do_lower_case)
    vocab_file, lower_case = resolve_lower_case(folder, do_lower_case)
    where = os.path.join(folder, MODEL_INFO_NAME)
    return (FolderVocab(vocab_lib.load_vocab(vocab_file), vocab_file,
                        info.get("do_lower_case"), where), lower_case)


def _named_weights(prefix):
    """`(reader, {our weight path: checkpoint key})` of the model weights in a TF2 checkpoint.

    The object graph names each variable's Keras path (`full_name`), so no model is built to
    read it: the encoder's and the pretraining heads' under their paths, the task head's (a
    `Dense` of any name under the checkpoint key `head`) as `head/kernel` and `head/bias`;
    optimizer slots and counters are left out.
    """
    try:
        reader = tf.train.load_checkpoint(prefix)
        graph = trackable_object_graph_pb2.TrackableObjectGraph.FromString(
            reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    except (IndexError, tf.errors.OpError, ValueError) as error:
        raise checkpoint_read_error(prefix, error) from None
    names = {}
    for node in graph.nodes:
        for attribute in node.attributes:
            root = attribute.checkpoint_key.split("/")[0]
            if root == weight_map.TASK_HEAD:
                leaf = attribute.full_name.rsplit("/", 1)[-1]
                names.setdefault(f"{weight_map.TASK_HEAD}/{leaf}", attribute.checkpoint_key)
            elif root in ("encoder",) + weight_map.HEAD_GROUPS:
                names.setdefault(attribute.full_name, attribute.checkpoint_key)
    return reader, names


def _read_weights(prefix, config, heads, num_labels, where):
    """The checkpoint's weights of the encoder, `heads` and a task head of `num_labels`
    outputs (None: none), as numpy arrays (`weight_map.translate`'s checks)."""
    reader, names = _named_weights(prefix)
    shapes = checkpoint_variables(prefix)

    def read(name):
        try:
            return reader.get_tensor(names[name])
        except (IndexError, tf.errors.OpError) as error:
            raise checkpoint_read_error(prefix, error) from None

    source = weight_map.TensorSource({name: shapes[key] for name, key in names.items()}, read,
                                     where=prefix)
    expected = weight_map.expected_shapes(config, heads, num_labels, where=where)
    rules = [weight_map.Rule(name, name, False) for name in expected]
    return weight_map.translate(source, rules, expected,
                                ignored=[name for name in names if name not in expected])


def read(path, do_lower_case=None):
    """Reads a model directory into a `Pretrained`: the encoder, the pretraining heads and
    the fine-tuned task head its checkpoint holds.

    Raises:
      FileNotFoundError: no directory, config or checkpoint.
      CheckpointError: a damaged checkpoint, one unlike the config, NaN/Inf weights, or a
        casing contradicting `model_info.json`.
    """
    folder = folder_of(path)
    prefix = model_checkpoint_path(folder)
    config = read_config(folder)
    info = read_model_info(folder)
    vocab, lower_case = _vocab(folder, info, do_lower_case)
    variables = checkpoint_variables(prefix)
    saved = {name.split("/")[0] for name in variables}
    heads = [group for group in weight_map.HEAD_GROUPS if group in saved]
    head, num_labels = "pretrainer" if heads else "encoder", None
    if info.get("head") in TASK_HEADS and HEAD_BIAS in variables:
        head, num_labels = info["head"], variables[HEAD_BIAS][0]
    weights = _read_weights(prefix, config, heads, num_labels, os.path.join(folder, CONFIG_NAME))
    return Pretrained(
        format=NAME, path=folder, config=config, weights=weights, head=head, vocab=vocab,
        lower_case=lower_case,
        label_names=_label_names(info) if head in ("classifier", "token_classifier") else None,
        problem_type=info.get("problem_type") if head == "classifier" else None,
        max_seq_length=info.get("max_seq_length"),
        architecture=info.get("huggingface_architecture"),
        sentence_pooling=_sentence_pooling(info, folder), model_info=info)
