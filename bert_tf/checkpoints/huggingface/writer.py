"""Writes bert_tf models as Hugging Face folders of their task's `BertFor*` architecture.

`write(pretrained, out)` (and `building.export_huggingface_checkpoint(model or model_dir,
out)`, which starts from a Keras model) writes what transformers'
`AutoModelFor*.from_pretrained(out)` and `AutoTokenizer.from_pretrained(out)` read:
`config.json` (`architectures`, `id2label` / `label2id`, `problem_type`), `model.safetensors`
(PyTorch names and layouts), and the tokenizer files (`vocab.txt`, `tokenizer.json`,
`tokenizer_config.json` with the casing: `tokenizer_files`). A checkpoint read from a
sentence-transformers folder keeps its pooling, normalization and `max_seq_length`
(`sentence_transformers.write_sentence_modules`), so `SentenceTransformer(out)` loads it as
the model it was. The architecture follows the head:

  BertEncoder, SentenceEncoder                  BertModel
  BertPretrainer with NSP                       BertForPreTraining
  BertPretrainer without NSP, MaskedLM          BertForMaskedLM
  BertClassifier, TextClassifier                BertForSequenceClassification
  BertTokenClassifier, TokenClassifier          BertForTokenClassification
  BertSpanLabeler                               BertForQuestionAnswering
  BertMultipleChoice                            BertForMultipleChoice

`write(pretrained, output_dir)` (the `Format.write` of `huggingface`) writes any
`building.PretrainedModels`, so every format bert_tf reads converts to this one; a model
directory exports by its `model_info.json` `head` (label names and problem type from there).
Architectures that transformers builds without a pooler (masked LM, tokens, spans) are
written without one, so it loads them with no unexpected keys (transformers 5 lists a kept
`bert.pooler.*` as UNEXPECTED in `BertForMaskedLM`'s load report); a pretrainer's pooler
dropped so is named in a warning. transformers computes the masked-LM head with the encoder's
`hidden_act` and `layer_norm_eps`: a head with its own (a keras-hub `BertMaskedLM`'s) is
written with a warning, its settings kept in `config.json` for bert_tf to read back.

Example:
>>> write(load_pretrained("sst2_model_dir/"), "/tmp/sst2_hf")  # doctest: +SKIP
"""

import json
import os

import tensorflow as tf
from absl import logging

from bert_tf.checkpoints import weight_map
from bert_tf.checkpoints.huggingface import safetensors_file
from bert_tf.checkpoints.huggingface.architectures import CONFIG_FILE, EXPORT_ARCHITECTURES
from bert_tf.checkpoints.huggingface.sentence_transformers import write_sentence_modules
from bert_tf.checkpoints.huggingface.tokenizer_files import write_tokenizer_files
from bert_tf.checkpoints.tokenizer_json import VOCAB_FILE, write_vocab
from bert_tf.checkpoints.weight_map import Rule
from bert_tf.errors import require_extra
from bert_tf.tokenization import vocab as vocab_lib

# The PyTorch module of each task head, and the architectures without a pooler.
HEAD_MODULES = {"classifier": "classifier", "token_classifier": "classifier",
                "span_labeler": "qa_outputs", "multiple_choice": "classifier"}
NO_POOLER = ("BertForMaskedLM", "BertForTokenClassification", "BertForQuestionAnswering")
# Our `hidden_act` names that Hugging Face spells differently.
_HF_ACTIVATIONS = {"gelu_approximate": "gelu_new"}


def export_architecture(pretrained):
    """The `BertFor*` class a `Pretrained` is written as (by its `head`)."""
    if pretrained.head == "pretrainer" and "next_sentence" not in pretrained.heads:
        return "BertForMaskedLM"
    return EXPORT_ARCHITECTURES[pretrained.head]


def _tensors(pretrained):
    """The folder's tensors, by their PyTorch names."""
    config, architecture = pretrained.config, export_architecture(pretrained)
    # A task architecture holds no pretraining heads: transformers would call them unexpected.
    heads = pretrained.heads if pretrained.head == "pretrainer" else {}
    rules = weight_map.expand(safetensors_file.TABLE, config.num_hidden_layers, list(heads))
    weights = weight_map.model_weights(pretrained.encoder, *heads.values())
    if architecture in NO_POOLER:
        rules = [rule for rule in rules if not rule.target.startswith("pooler/")]
        weights = {path: w for path, w in weights.items() if not path.startswith("pooler/")}
    if pretrained.task_head is not None:
        module = HEAD_MODULES[pretrained.head]
        path = pretrained.task_head.kernel.path.rsplit("/", 1)[0]
        rules += [Rule(f"{path}/kernel", f"{module}.weight", True),
                  Rule(f"{path}/bias", f"{module}.bias", False)]
        weights.update(weight_map.model_weights(pretrained.task_head))
    tensors = weight_map.export_to(rules, weights)
    if architecture == "BertModel":
        return tensors
    return {name if name.startswith(("cls.",) + tuple(HEAD_MODULES.values()))
            else safetensors_file.PREFIX + name: value for name, value in tensors.items()}


def _warn_dropped_pooler(pretrained):
    """Warns, naming them, where a pretrainer's pooler weights are not written: transformers'
    `BertForMaskedLM` has no pooler (and lists a kept one as UNEXPECTED when it loads)."""
    architecture = export_architecture(pretrained)
    if (pretrained.head != "pretrainer" or architecture not in NO_POOLER
            or not pretrained.has_pooler):
        return
    dropped = [safetensors_file.PREFIX + rule.source for rule in safetensors_file.TABLE
               if rule.target.startswith("pooler/")]
    logging.warning("transformers' %s has no pooler: %s's pooler weights (%s) are not written."
                    " To keep them, export the encoder alone as a BertModel "
                    "(export_huggingface_checkpoint(model.encoder, ...)).", architecture,
                    pretrained.path or "the model", ", ".join(dropped))


def _warn_head_settings(pretrained):
    """Warns where the masked-LM head's activation or LayerNorm epsilon differs from the
    encoder's (a keras-hub `BertMaskedLM`'s): transformers' head takes the encoder's."""
    head = pretrained.heads.get("masked_lm") if pretrained.head == "pretrainer" else None
    config = pretrained.config
    if head is None or (head.hidden_act, head.layer_norm_eps) == (config.hidden_act,
                                                                  config.layer_norm_eps):
        return
    logging.warning("transformers computes the masked-LM head with the encoder's hidden_act %s "
                    "and layer_norm_eps %g; %s's head computes %s and %g, so its logits in "
                    "transformers will differ slightly.", config.hidden_act,
                    config.layer_norm_eps, pretrained.path or "the model", head.hidden_act,
                    head.layer_norm_eps)


def _hf_config(pretrained):
    values = pretrained.config.to_dict()
    values["hidden_act"] = _HF_ACTIVATIONS.get(values["hidden_act"], values["hidden_act"])
    values.update(model_type="bert", position_embedding_type="absolute", pad_token_id=0,
                  tie_word_embeddings=True, architectures=[export_architecture(pretrained)])
    if pretrained.task_head is not None and pretrained.head in ("classifier", "token_classifier"):
        units = pretrained.task_head.units
        names = pretrained.label_names or [f"LABEL_{i}" for i in range(units)]
        values["id2label"] = {str(i): name for i, name in enumerate(names)}
        values["label2id"] = {name: i for i, name in enumerate(names)}
        if pretrained.head == "classifier":
            values["problem_type"] = pretrained.problem_type or (
                "regression" if units == 1 else "single_label_classification")
    return values


def _write_tokenizer(pretrained, hf_dir, vocab_file):
    """The vocab and, where the casing is known, the tokenizer files transformers reads."""
    vocab = pretrained.vocab
    vocab_file = vocab_file or (vocab.vocab_file if vocab is not None else None)
    if vocab_file is not None and os.path.exists(vocab_file):
        tokens = vocab_lib.load_vocab(vocab_file)
    elif vocab is not None and vocab.tokens is not None:
        tokens = vocab.tokens
    else:
        return
    if pretrained.lower_case is None:
        write_vocab(tokens, os.path.join(hf_dir, VOCAB_FILE))
    else:
        write_tokenizer_files(hf_dir, tokens, pretrained.lower_case, pretrained.max_seq_length)


def write(pretrained, hf_dir, vocab_file=None):
    """Writes a `PretrainedModels` as a Hugging Face folder of its head's architecture (module
    docstring); the `Format.write` of `huggingface`.

    Args:
      pretrained: what to write.
      hf_dir: destination folder, created if missing.
      vocab_file: the vocab to copy in; defaults to the `Pretrained`'s.

    Returns:
      The path of the written `model.safetensors`.
    """
    tensors = _tensors(pretrained)
    _warn_dropped_pooler(pretrained)
    _warn_head_settings(pretrained)
    tf.io.gfile.makedirs(hf_dir)
    path = os.path.join(hf_dir, safetensors_file.WEIGHTS_FILE)
    require_extra("safetensors.numpy", extra="hf").save_file(tensors, path,
                                                             metadata={"format": "pt"})
    with open(os.path.join(hf_dir, CONFIG_FILE), "w", encoding="utf-8") as f:
        json.dump(_hf_config(pretrained), f, indent=2, sort_keys=True)
        f.write("\n")
    _write_tokenizer(pretrained, hf_dir, vocab_file)
    if pretrained.sentence_pooling is not None:
        write_sentence_modules(hf_dir, pretrained.sentence_pooling, pretrained.config.hidden_size)
    logging.info("Wrote %s (%s, %d tensors).", path, export_architecture(pretrained),
                 len(tensors))
    return path

