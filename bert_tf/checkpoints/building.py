"""Checkpoints as bert_tf models: the part of `checkpoints/` that sits above `models/`.

Every reader (`registry.read_pretrained`, each `Format.read`) returns a `Pretrained`, a config
and numpy weights with no model, so the readers sit below `models/` and
`BertEncoder.from_pretrained` reads through them. The models come in here: `PretrainedModels`
builds them from a `Pretrained` on first use; `load_pretrained` reads any folder into one;
`from_model` makes one of an in-memory model. Every `Format.write` takes a `PretrainedModels`
(`with_models`), and the writers that start from a Keras model live here.

Example:
>>> pretrained = load_pretrained("bert-sst2/")          # doctest: +SKIP
>>> classifier = pretrained.build_model()                # doctest: +SKIP
>>> export_huggingface_checkpoint(classifier, "/tmp/sst2_hf")  # doctest: +SKIP
"""

import dataclasses
import functools
import os

import keras

from bert_tf.checkpoints import model_dir, registry, weight_map
from bert_tf.checkpoints.huggingface import sentence_transformers_folder, writer
from bert_tf.checkpoints.pretrained import Pretrained
from bert_tf.checkpoints.tokenizer_json import FolderVocab
from bert_tf.errors import UserError
from bert_tf.file_io import refuse_existing
from bert_tf.models import (
    BertClassifier,
    BertEncoder,
    BertMultipleChoice,
    BertPretrainer,
    BertSpanLabeler,
    BertTokenClassifier,
)
from bert_tf.models.bert_pretrainer import pretraining_heads
from bert_tf.models.named_weights import build_task_head
from bert_tf.tokenization import vocab as vocab_lib

# The bert_tf model class of each task head (`model_dir.HEADS`) that takes a class count.
_LABELLED_MODELS = {"classifier": BertClassifier, "token_classifier": BertTokenClassifier}


class PretrainedModels(Pretrained):
    """A `Pretrained` whose models are built from its weights on first use.

    Example:
    >>> pretrained = load_pretrained("bert-sst2/")      # doctest: +SKIP
    >>> logits = pretrained.build_model()(inputs)        # doctest: +SKIP
    """

    @functools.cached_property
    def encoder(self):
        """The `BertEncoder` of `config` with the encoder's `weights`."""
        return BertEncoder.from_weights(self.config, self.weights, where=self.path or "weights")

    @functools.cached_property
    def heads(self):
        """The pretraining heads held on `encoder`, keyed as `BertPretrainer.checkpoint_items()`."""
        return pretraining_heads(self.encoder, self.weights, where=self.path or "weights")

    @functools.cached_property
    def task_head(self):
        """The fine-tuned task head as a built float32 `Dense` named `head`, or None."""
        return build_task_head(self.weights, where=self.path or "weights")

    def build_model(self, num_choices=None):
        """The bert_tf model of `head` on `encoder`, head weights copied in.

        `encoder` gives the `BertEncoder`; `pretrainer` a `BertPretrainer`; the task heads
        `BertClassifier`, `BertTokenClassifier`, `BertSpanLabeler` and `BertMultipleChoice`
        (which needs `num_choices`, the choices per example).
        """
        if self.head == "encoder":
            return self.encoder
        if self.head == "pretrainer":
            model = BertPretrainer(self.encoder,
                                   use_next_sentence="next_sentence" in self.heads)
            for key, layer in self.heads.items():
                getattr(model, key).set_weights(layer.get_weights())
            return model
        if self.head == "multiple_choice":
            if num_choices is None:
                raise ValueError("A multiple-choice checkpoint builds a BertMultipleChoice: "
                                 "pass num_choices (choices per example).")
            model = BertMultipleChoice(self.encoder, num_choices, dropout_rate=self.dropout_rate)
        elif self.head == "span_labeler":
            model = BertSpanLabeler(self.encoder)
        else:
            model = _LABELLED_MODELS[self.head](self.encoder, self.num_labels,
                                                dropout_rate=self.dropout_rate)
        model.head.set_weights(self.task_head.get_weights())
        return model


def with_models(pretrained):
    """`pretrained` as a `PretrainedModels` (itself when it is one already)."""
    if isinstance(pretrained, PretrainedModels):
        return pretrained
    return PretrainedModels(**{field.name: getattr(pretrained, field.name)
                               for field in dataclasses.fields(pretrained)})


def load_pretrained(path, do_lower_case=None, **options):
    """`registry.read_pretrained(path, ...)` as a `PretrainedModels` (same arguments and
    errors): any checkpoint folder, its models built on first use."""
    return with_models(registry.read_pretrained(path, do_lower_case=do_lower_case, **options))


def _model_vocab(preprocessor):
    """`(FolderVocab, lower_case)` of a Keras task model's preprocessor, or Nones."""
    if preprocessor is None:
        return None, None
    with preprocessor.vocab_path() as path:
        tokens = vocab_lib.load_vocab(path)
    return FolderVocab(tokens, None, preprocessor.lower_case), preprocessor.lower_case


def _arrays(*layers, task_head=None):
    """{our weight path: numpy array} of `layers`, and of `task_head` as `head/...`."""
    weights = {path: variable.numpy()
               for path, variable in weight_map.model_weights(*layers).items()}
    if task_head is not None:
        weights.update({f"{weight_map.TASK_HEAD}/{variable.path.rsplit('/', 1)[-1]}":
                        variable.numpy() for variable in task_head.weights})
    return weights


_TYPE_ERROR = ("export_huggingface_checkpoint takes a model directory, a BertEncoder or a "
               "BertPretrainer, or a bert_tf task model (BertClassifier, BertTokenClassifier, "
               "BertSpanLabeler, BertMultipleChoice, or a keras_tasks model holding one);")


def from_model(model):
    """A `PretrainedModels` of an in-memory bert_tf model (its weights as arrays)."""
    if isinstance(model, BertEncoder):
        return PretrainedModels(None, None, model.config, _arrays(model), "encoder", None, None)
    encoder = getattr(model, "encoder", None)
    if not isinstance(encoder, BertEncoder):
        raise TypeError(_TYPE_ERROR + f" received {type(model).__name__}.")
    vocab, lower_case = _model_vocab(getattr(model, "preprocessor", None))
    common = dict(format=None, path=None, config=encoder.config, vocab=vocab,
                  lower_case=lower_case)
    if isinstance(model, BertPretrainer):
        items = dict(model.checkpoint_items())
        items.pop("encoder")
        return PretrainedModels(head="pretrainer", weights=_arrays(encoder, *items.values()),
                                **common)
    for model_class, head in ((BertTokenClassifier, "token_classifier"),
                              (BertClassifier, "classifier"),
                              (BertSpanLabeler, "span_labeler"),
                              (BertMultipleChoice, "multiple_choice")):
        if isinstance(model, model_class):
            problem_type = getattr(model, "problem_type", None)
            return PretrainedModels(head=head, weights=_arrays(encoder, task_head=model.head),
                                    label_names=getattr(model, "label_names", None),
                                    problem_type=problem_type if head == "classifier" else None,
                                    **common)
    # SentenceEncoder and other encoder holders.
    return PretrainedModels(head="encoder", weights=_arrays(encoder), **common)


def export_huggingface_checkpoint(model_dir_or_model, hf_dir, vocab_file=None):
    """Writes a model as a Hugging Face folder of its task's architecture
    (`huggingface/writer.py`'s docstring).

    Args:
      model_dir_or_model: a model directory, or a `BertEncoder`, `BertPretrainer`, bert_tf
        task model or Keras task model.
      hf_dir: destination folder, created if missing.
      vocab_file: the vocab to copy in; defaults to the model directory's `vocab.txt` or the
        task model's preprocessor's.

    Returns:
      The path of the written `model.safetensors`.
    """
    if isinstance(model_dir_or_model, (str, os.PathLike)):
        pretrained = with_models(model_dir.read(os.fspath(model_dir_or_model)))
    elif isinstance(model_dir_or_model, keras.Model):
        pretrained = from_model(model_dir_or_model)
    else:
        raise TypeError(_TYPE_ERROR + f" received {type(model_dir_or_model).__name__}.")
    return writer.write(pretrained, hf_dir, vocab_file)


def _sentence_source(model):
    """`(PretrainedModels, its pooling, its normalize)` of what
    `write_sentence_transformers_folder` takes."""
    if isinstance(model, Pretrained):
        return with_models(model), None, None
    if isinstance(model, keras.Model):
        pretrained = from_model(model)
        preprocessor = getattr(model, "preprocessor", None)
        if preprocessor is not None:
            pretrained.max_seq_length = preprocessor.seq_length
        return pretrained, getattr(model, "pooling", None), getattr(model, "normalize", None)
    raise TypeError("write_sentence_transformers_folder takes a SentenceEncoder (or another "
                    "bert_tf model holding an encoder and a preprocessor) or a Pretrained "
                    f"(`load_pretrained(folder)`); received {type(model).__name__}.")


def write_sentence_transformers_folder(model, folder, *, pooling=None, normalize=None,
                                       max_seq_length=None, exist_ok=False):
    """Writes `model` as a sentence-transformers folder that `SentenceTransformer(folder)`
    loads with the embeddings bert_tf computes (`huggingface/sentence_transformers_folder.py`).

    Args:
      model: a `SentenceEncoder` (its pooling, normalization, vocab, casing and
        `preprocessor.seq_length` are written), another Keras model holding a `BertEncoder`
        and a `BertPreprocessor`, or a `Pretrained` (`load_pretrained(folder)` of any
        checkpoint folder; a sentence-transformers folder keeps its own modules).
      folder: the destination; must not exist or be empty, unless `exist_ok`.
      pooling: "mean", "cls_token" or "max" (sentence-transformers' "mean", "cls", "max");
        None: the model's, else "mean".
      normalize: whether a `Normalize` module follows the pooling; None: the model's, else
        True.
      max_seq_length: the tokens sentence-transformers truncates to; None: the model's
        (a `SentenceEncoder`'s preprocessor, the folder's record), else 128.
        A `SentenceEncoder`'s `truncate_dim` goes into `config_sentence_transformers.json`.
      exist_ok: write into a folder that holds other files (a training run's `output_dir`,
        beside its checkpoints); files of the same names are replaced.

    Returns:
      `folder`.

    Raises:
      CheckpointError: pooling "cls" (BERT's tanh pooler, which sentence-transformers does
        not compute), or a checkpoint bert_tf cannot read.
      UserError: a model without a vocab or casing (a bare `BertEncoder`: pass a
        `SentenceEncoder`).
      OutputExistsError: `folder` exists and is not empty, without `exist_ok` (nothing is
        written).
    """
    folder = os.fspath(folder)
    if not exist_ok:
        refuse_existing(folder, "output directory")
    pretrained, own_pooling, own_normalize = _sentence_source(model)
    if pretrained.vocab is None or pretrained.lower_case is None:
        raise UserError("A sentence-transformers folder needs the model's vocab and casing: "
                        "pass a SentenceEncoder (with its preprocessor) or a checkpoint folder.")
    pretrained = sentence_transformers_folder.sentence_pretrained(
        pretrained, pooling or own_pooling,
        own_normalize if normalize is None else normalize, max_seq_length,
        getattr(model, "truncate_dim", None))
    writer.write(pretrained, folder)
    return folder
