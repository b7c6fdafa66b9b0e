"""Writes bert_tf checkpoints as keras-hub BERT presets, with h5py and json only.

`write(pretrained, output_dir)` writes what `keras_hub.models.BertBackbone.from_preset` and
the task's `from_preset` load: `config.json` (`BertBackbone`), `metadata.json`,
`model.weights.h5`, `tokenizer.json` + `assets/tokenizer/vocabulary.txt`, and for a head
keras-hub has, `task.json` + `task.weights.h5` + `preprocessor.json` (a backbone with a
recorded `max_seq_length` gets a `preprocessor.json` of that `sequence_length`; a
sentence-transformers pooling has no place in a preset and is named in a warning):

  encoder                      backbone only
  classifier                   BertTextClassifier (num_classes, dropout)
  pretrainer (masked-LM head)  BertMaskedLM (a next-sentence head is dropped: keras-hub has none)

keras-hub's `BertBackbone` fixes the tanh GELU and LayerNorm epsilon 1e-12: a model with the
exact GELU (Hugging Face's `gelu`) is written with a warning (keras-hub's own converter of
Hugging Face BERT does the same), another activation or epsilon is refused; so are heads
keras-hub has no BERT task for (tokens, spans, choices). The tokenizer strips accents when it
lower-cases, as bert_tf does.

Example:
>>> write(load_pretrained("sst2_model_dir/"), "/tmp/sst2_preset")  # doctest: +SKIP
"""

import json
import os

import keras
from absl import logging

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.keras_hub import preset as preset_lib
from bert_tf.checkpoints.keras_hub import weights_file
from bert_tf.errors import CheckpointError
from bert_tf.file_io import refuse_existing

_EXACT_GELU = "gelu"
_APPROXIMATE_GELU = ("gelu_approximate", "gelu_new", "gelu_pytorch_tanh")
_TASK_MODULES = {preset_lib.CLASSIFIER: "bert_text_classifier",
                 preset_lib.MASKED_LM: "bert_masked_lm"}
_PREPROCESSOR_MODULES = {preset_lib.CLASSIFIER: "bert_text_classifier_preprocessor",
                         preset_lib.MASKED_LM: "bert_masked_lm_preprocessor"}


def _serialized(class_name, module, config):
    """A Keras-serialized keras-hub object, as `save_to_preset` writes it."""
    return {"module": f"keras_hub.src.models.bert.{module}", "class_name": class_name,
            "config": config, "registered_name": f"keras_hub>{class_name}"}


def _float32():
    return {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"},
            "registered_name": None}


def _backbone(config):
    return _serialized(preset_lib.BACKBONE, "bert_backbone", {
        "name": "bert_backbone", "trainable": True, "dtype": _float32(),
        "vocabulary_size": config.vocab_size, "num_layers": config.num_hidden_layers,
        "num_heads": config.num_attention_heads, "hidden_dim": config.hidden_size,
        "intermediate_dim": config.intermediate_size, "dropout": config.hidden_dropout_prob,
        "max_sequence_length": config.max_position_embeddings,
        "num_segments": config.type_vocab_size})


def _tokenizer(lower_case):
    return _serialized(preset_lib.TOKENIZER, "bert_tokenizer", {
        "name": "bert_tokenizer", "trainable": True, "config_file": preset_lib.TOKENIZER_FILE,
        "vocabulary": None, "lowercase": lower_case, "strip_accents": lower_case,
        "split": True, "suffix_indicator": "##", "oov_token": "[UNK]"})


def _preprocessor(task, lower_case, sequence_length):
    return _serialized(preset_lib.PREPROCESSORS[task], _PREPROCESSOR_MODULES[task], {
        "name": "bert_preprocessor", "trainable": True, "tokenizer": _tokenizer(lower_case),
        "config_file": preset_lib.PREPROCESSOR_FILE, "sequence_length": sequence_length,
        "truncate": "round_robin"})


def _task(pretrained):
    """keras-hub's task class for the checkpoint's head (None: backbone only)."""
    if pretrained.head == "classifier":
        if pretrained.label_names:
            logging.warning("keras-hub's BertTextClassifier keeps no label names; %s's (%s) "
                            "are not written.", pretrained.path, ", ".join(pretrained.label_names))
        return preset_lib.CLASSIFIER
    if pretrained.head == "pretrainer":
        if "next_sentence" in pretrained.heads:
            logging.warning("keras-hub's BertMaskedLM has no next-sentence head; %s's is not "
                            "written.", pretrained.path)
        head = pretrained.heads["masked_lm"]
        if (head.hidden_act, head.layer_norm_eps) != (preset_lib.MASKED_LM_ACT,
                                                      preset_lib.MASKED_LM_LAYER_NORM_EPS):
            logging.warning("keras-hub's BertMaskedLM head computes the exact GELU and "
                            "LayerNorm epsilon %g; %s's computes %s and %g, so its logits will "
                            "differ slightly.", preset_lib.MASKED_LM_LAYER_NORM_EPS,
                            pretrained.path, head.hidden_act, head.layer_norm_eps)
        return preset_lib.MASKED_LM
    if pretrained.head == "encoder":
        return None
    raise CheckpointError(f"{pretrained.path}: a {pretrained.head} head, for which keras-hub "
                          "has no BERT task (it has BertTextClassifier and BertMaskedLM); "
                          "convert the encoder alone (a model directory's encoder).")


def _check_config(pretrained):
    config = pretrained.config
    if config.hidden_act == _EXACT_GELU:
        logging.warning("%s computes the exact GELU; keras-hub's BertBackbone computes the tanh "
                        "approximation, so its outputs will differ slightly.", pretrained.path)
    elif config.hidden_act not in _APPROXIMATE_GELU:
        raise CheckpointError(f"{pretrained.path}: hidden_act {config.hidden_act!r}; keras-hub's "
                              "BertBackbone computes GELU only.")
    if config.layer_norm_eps != preset_lib.LAYER_NORM_EPS:
        raise CheckpointError(f"{pretrained.path}: layer_norm_eps {config.layer_norm_eps}; "
                              f"keras-hub's BertBackbone fixes {preset_lib.LAYER_NORM_EPS}.")


def _tensors(pretrained, task):
    """`{weights file: {dataset path: array}}`, our layouts (split when written)."""
    heads = ["masked_lm"] if task == preset_lib.MASKED_LM else []
    rules = weights_file.expand(pretrained.config, heads)
    layers = [pretrained.encoder] + [pretrained.heads[key] for key in heads]
    weights = weight_map.model_weights(*layers)
    if task == preset_lib.CLASSIFIER:
        path = pretrained.task_head.kernel.path.rsplit("/", 1)[0]
        rules += weights_file.classifier_rules(path)
        weights.update(weight_map.model_weights(pretrained.task_head))
    files = {weights_file.MODEL_WEIGHTS_FILE: {}, weights_file.TASK_WEIGHTS_FILE: {}}
    for name, value in weight_map.export_to(rules, weights).items():
        if name.startswith(weights_file.TASK):
            files[weights_file.TASK_WEIGHTS_FILE][name[len(weights_file.TASK):]] = value
        else:
            files[weights_file.MODEL_WEIGHTS_FILE][name] = value
    return files


def _write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=4)
        f.write("\n")


def write(pretrained, output_dir):
    """Writes a `PretrainedModels` as a keras-hub preset into a new or empty `output_dir`.

    Raises:
      CheckpointError: a head, activation or LayerNorm epsilon keras-hub's BERT cannot hold
        (nothing is written).
      OutputExistsError: `output_dir` exists and is not empty.
    """
    refuse_existing(output_dir, "output directory")
    task = _task(pretrained)
    _check_config(pretrained)
    files = _tensors(pretrained, task)
    config, lower_case = pretrained.config, pretrained.lower_case
    os.makedirs(os.path.join(output_dir, os.path.dirname(preset_lib.VOCAB_FILE)), exist_ok=True)
    for name, tensors in files.items():
        if tensors:
            weights_file.write_weights(os.path.join(output_dir, name), tensors, config)
    backbone = _backbone(config)
    _write_json(os.path.join(output_dir, preset_lib.CONFIG_FILE), backbone)
    _write_json(os.path.join(output_dir, preset_lib.METADATA_FILE), {
        "keras_version": keras.version(), "written_by": "bert_tf",
        "parameter_count": sum(int(v.size) for v in files[weights_file.MODEL_WEIGHTS_FILE]
                               .values()),
        "tasks": ["MaskedLM", "TextClassifier", "TextEmbedder"]})
    _write_json(os.path.join(output_dir, preset_lib.TOKENIZER_FILE), _tokenizer(lower_case))
    with open(os.path.join(output_dir, preset_lib.VOCAB_FILE), "w", encoding="utf-8") as f:
        f.write("\n".join(pretrained.vocab.tokens) + "\n")
    if task is not None:
        preprocessor = _preprocessor(task, lower_case, pretrained.sequence_length())
        task_config = {"backbone": backbone, "preprocessor": preprocessor, "name": task.lower()}
        if task == preset_lib.CLASSIFIER:
            task_config.update(num_classes=pretrained.num_labels, activation="linear",
                               dropout=config.hidden_dropout_prob if pretrained.dropout_rate is None
                               else pretrained.dropout_rate)
        _write_json(os.path.join(output_dir, preset_lib.TASK_FILE),
                    _serialized(task, _TASK_MODULES[task], task_config))
        _write_json(os.path.join(output_dir, preset_lib.PREPROCESSOR_FILE), preprocessor)
    elif pretrained.max_seq_length is not None:
        # A backbone keeps the length it was trained with (a sentence-transformers folder's
        # max_seq_length) in the preprocessor keras-hub builds beside it.
        _write_json(os.path.join(output_dir, preset_lib.PREPROCESSOR_FILE), _preprocessor(
            preset_lib.CLASSIFIER, lower_case, pretrained.max_seq_length))
    if pretrained.sentence_pooling is not None:
        logging.warning("A keras-hub preset holds no sentence pooling: %s's %s pooling%s is not "
                        "written; pass it to SentenceEncoder.from_pretrained(preset, pooling=..., "
                        "normalize=...).", pretrained.path, pretrained.sentence_pooling.pooling,
                        " and normalization" if pretrained.sentence_pooling.normalize else "")
    logging.info("Wrote keras-hub preset %s (%s).", output_dir, task or preset_lib.BACKBONE)

