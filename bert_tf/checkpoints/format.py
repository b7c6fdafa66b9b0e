"""The entry type of the format registry (`registry.FORMATS`) and what `describe` returns.

A checkpoint format is one module under `bert_tf/checkpoints/` that defines `FORMAT = Format(
...)`: how to recognise a folder of that format from its file names and small files, how to
describe it without reading weights, how to read it into the one format-neutral result
(`pretrained.Pretrained`), and, where bert_tf can write the format, how to write one.
`checkpoints/ADDING_A_FORMAT.md` says how to add one.

Example:
>>> FORMAT = Format(  # doctest: +SKIP
...     name="huggingface", title="Hugging Face folder",
...     layout="config.json + model.safetensors or tf_model.h5 + vocab.txt",
...     recognise=recognise, describe=describe, read=read, write=write)
"""

import dataclasses
from collections.abc import Callable

from bert_tf.checkpoints import model_size


@dataclasses.dataclass(frozen=True)
class Format:
    """One checkpoint format bert_tf knows.

    Attributes:
      name: the converter's flag value (`--from=`, `--to=`) and `FolderDescription.format`.
      title: what users call it, for messages and `describe` ("Hugging Face folder").
      layout: the files that make it, for the message that no format fits a folder
        ("config.json + model.safetensors or tf_model.h5 + vocab.txt or tokenizer.json").
      recognise: `recognise(path) -> bool`: whether `path` (a folder, a file or a TF
        checkpoint prefix, as the user gave it) is of this format, from file names and small
        files only (no weights). It may raise `CheckpointError` for a path that is plainly of
        this format but one bert_tf refuses to read (a pickle-only Hugging Face folder).
      describe: `describe(path) -> FolderDescription` (format, architecture, head, labels,
        vocab, casing) from small files and weight headers only.
      read: `read(path, do_lower_case=None, **options) -> Pretrained`: the config and
        numpy weights, no model built. `do_lower_case` is the caller's casing, checked
        against the folder's record; `options` are those named in `options`.
      write: `write(pretrained, output_dir)`: writes a `building.PretrainedModels` in this
        format into a new or empty `output_dir`; None where bert_tf does not write the format.
      aliases: other names the converter's flags accept (`ours` for `model_dir`).
      options: keyword arguments `read` takes beyond `do_lower_case` (google_research:
        `bert_config_file`, `vocab_file`); the converter refuses them for other formats.
    """

    name: str
    title: str
    layout: str
    recognise: Callable
    describe: Callable
    read: Callable
    write: Callable = None
    aliases: tuple = ()
    options: tuple = ()

    @property
    def names(self):
        """Every name the format goes by: its `name`, then its `aliases`."""
        return (self.name,) + tuple(self.aliases)


@dataclasses.dataclass
class FolderDescription:
    """What `describe` found in a folder, without reading weights.

    Attributes:
      path: the folder (or file, or checkpoint prefix) described.
      format: the `Format.name`.
      title: the `Format.title`, with the layout where a format has several ("Hugging Face
        folder, TF h5").
      weights: the weights file(s), relative to the folder.
      architecture: the Hugging Face class (held or exported as), the Keras class, or None.
      head: the bert_tf head (`model_dir.HEADS`) it becomes, or None when unknown.
      num_labels: the task head's output count, or None without a task head.
      label_names: the outputs' names (`id2label`, `model_info.json`), or None.
      problem_type: a sequence classifier's problem type, or None.
      pretraining_heads: the pretraining heads held (`masked_lm`, `next_sentence`).
      vocab: the vocab file (`vocab.txt` or `tokenizer.json`), or None.
      vocab_size: tokens in it, or None.
      lower_case: the recorded casing, or None when the folder records none.
      max_position_embeddings: the longest input its position table takes, where its small
        files or variable shapes tell (None elsewhere).
      config: the `BertConfig` its small files or variable shapes give (the sizes), or None
        (a preprocessing model, a checkpoint without its config beside it).
    """

    path: str
    format: str
    title: str
    weights: list = dataclasses.field(default_factory=list)
    architecture: str = None
    head: str = None
    num_labels: int = None
    label_names: list = None
    problem_type: str = None
    pretraining_heads: list = dataclasses.field(default_factory=list)
    vocab: str = None
    vocab_size: int = None
    lower_case: bool = None
    max_position_embeddings: int = None
    config: object = None

    def lines(self):
        """A few readable lines."""
        lines = [f"{self.path}: {self.title}"
                 + (f" ({', '.join(self.weights)})" if self.weights else "")]
        if self.architecture or self.head:
            lines.append(f"  architecture: {self.architecture or '-'}"
                         + (f" (bert_tf head: {self.head})" if self.head else ""))
        if self.config is not None:
            lines.append(f"  sizes: {sizes(self.config)}")
        if self.num_labels is not None:
            head = f"  head: {self.num_labels} output{'s' * (self.num_labels != 1)}"
            if self.label_names:
                head += f", labels {', '.join(self.label_names)}"
            if self.problem_type:
                head += f" ({self.problem_type})"
            lines.append(head)
        if self.pretraining_heads:
            lines.append(f"  pretraining heads: {', '.join(self.pretraining_heads)}")
        if self.vocab or self.lower_case is not None:
            casing = {True: "lower case", False: "cased", None: "casing not recorded"}
            size = f" ({self.vocab_size} tokens)" if self.vocab_size else ""
            lines.append(f"  vocab: {self.vocab or '-'}{size}, {casing[self.lower_case]}")
        return lines

    def __str__(self):
        return "\n".join(self.lines())


def sizes(config):
    """A config's sizes and its encoder's weight count, in a line.

    Example:
    >>> sizes(BertConfig(vocab_size=30522))  # doctest: +SKIP
    '12 layers, H=768, 12 heads, FFN 3072, vocab 30522, 512 positions, 109,482,240 weights'
    """
    return (f"{config.num_hidden_layers} layers, H={config.hidden_size}, "
            f"{config.num_attention_heads} heads, FFN {config.intermediate_size}, "
            f"vocab {config.vocab_size}, {config.max_position_embeddings} positions, "
            f"{model_size.count_parameters(config):,} weights")
