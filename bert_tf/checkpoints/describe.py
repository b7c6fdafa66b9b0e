"""What a checkpoint folder is, from its small files only: one entry for every reader.

`detect_format(path)` tells the layouts apart by their file names:

  model_dir             bert_tf model directory: `bert_config.json` + `model.ckpt.*`
  keras                 a Keras `.keras` file (a zip whose `config.json` names the model)
  huggingface           Hugging Face folder: `config.json` + `model.safetensors`
  huggingface_sharded   ... + `model.safetensors.index.json` and its shards
  huggingface_h5        ... + `tf_model.h5` (transformers' `TFBertFor*`)
  google_research       TF1 checkpoint: `bert_model.ckpt.*` + `bert_config.json` (a folder,
                        or the checkpoint prefix itself)

`describe_folder(path)` adds the architecture, the head with its size and label names, the
vocab and the casing, reading `config.json`, `model_info.json`, tokenizer files, the
safetensors header, the h5 file's metadata or the TF checkpoint's index: no tensor values,
never a pickle. `load_pretrained` and `tools/convert_checkpoint.py --describe` use it.

Example:
>>> print(describe_folder("bert-sst2/"))   # doctest: +SKIP
bert-sst2/: Hugging Face safetensors (model.safetensors)
  architecture: BertForSequenceClassification (bert_tf head: classifier)
  head: 2 outputs, labels negative, positive (single_label_classification)
  vocab: bert-sst2/vocab.txt (30522 tokens), lower case
"""

import dataclasses
import json
import os
import zipfile

from bert_tf import model_dir as model_dir_lib
from bert_tf.checkpoints import huggingface, huggingface_h5
from bert_tf.model_dir import CheckpointError, read_json_object

GOOGLE_RESEARCH_CHECKPOINT = "bert_model.ckpt"
PICKLE_FILE = "pytorch_model.bin"

FORMAT_NAMES = {
    "model_dir": "bert_tf model directory",
    "keras": "Keras .keras file",
    "huggingface": "Hugging Face safetensors",
    "huggingface_sharded": "Hugging Face safetensors, sharded",
    "huggingface_h5": "Hugging Face TF h5",
    "google_research": "google-research TF1 checkpoint",
}
VOCAB_ASSET_HINT = "vocab.txt (an asset inside the file)"
HUGGINGFACE_FORMATS = ("huggingface", "huggingface_sharded", "huggingface_h5")


@dataclasses.dataclass
class FolderDescription:
    """What `describe_folder` found.

    Attributes:
      path: the folder (or file, or checkpoint prefix) described.
      format: a key of `FORMAT_NAMES`.
      weights: the weights file(s), relative to the folder.
      architecture: the Hugging Face class, the Keras class, or None.
      head: the bert_tf head (`model_dir.HEADS`) it becomes, or None when unknown.
      num_labels: the task head's output count, or None without a task head.
      label_names: the outputs' names (`id2label`, `model_info.json`), or None.
      problem_type: a sequence classifier's problem type, or None.
      pretraining_heads: the pretraining heads held (`masked_lm`, `next_sentence`).
      vocab: the vocab file (`vocab.txt` or `tokenizer.json`), or None.
      vocab_size: tokens in it, or None.
      lower_case: the recorded casing, or None when the folder records none.
    """

    path: str
    format: str
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

    @property
    def format_name(self):
        return FORMAT_NAMES[self.format]

    def lines(self):
        """A few readable lines."""
        lines = [f"{self.path}: {self.format_name}"
                 + (f" ({', '.join(self.weights)})" if self.weights else "")]
        if self.architecture or self.head:
            lines.append(f"  architecture: {self.architecture or '-'}"
                         + (f" (bert_tf head: {self.head})" if self.head else ""))
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


def _exists(folder, name):
    return os.path.isfile(os.path.join(folder, name))


def _not_a_checkpoint(folder):
    return CheckpointError(
        f"{folder} is not a checkpoint folder bert_tf reads: expected a model directory "
        f"(bert_config.json + model.ckpt), a Hugging Face folder (config.json + "
        f"model.safetensors or tf_model.h5 + vocab.txt or tokenizer.json) or a "
        f"google-research one (bert_config.json + "
        f"bert_model.ckpt + vocab.txt); it holds {sorted(os.listdir(folder))[:10]}.")


def detect_format(path):
    """`(format, folder, checkpoint prefix or None)` of `path`, from file names alone.

    Raises:
      FileNotFoundError: no such path.
      CheckpointError: a pickle-only Hugging Face folder (how to convert it is said), or no
        layout bert_tf reads (what the folder holds is listed).
    """
    path = os.fspath(path).rstrip(os.sep) or os.sep
    if os.path.isfile(path + ".index"):  # a TF checkpoint prefix
        folder = os.path.dirname(path)
        if _exists(folder, model_dir_lib.CONFIG_NAME):
            if os.path.basename(path) == model_dir_lib.CHECKPOINT_PREFIX:
                return "model_dir", folder, path
            return "google_research", folder, path
    if os.path.isfile(path) and path.endswith(".keras"):
        return "keras", os.path.dirname(path), None
    if os.path.isfile(path):
        raise CheckpointError(f"{path} is a file; pass its folder (or a `.keras` file or a "
                              "TF checkpoint prefix).")
    if not os.path.isdir(path):
        raise FileNotFoundError(f"No such checkpoint folder: {path}")
    if _exists(path, model_dir_lib.CONFIG_NAME) and _exists(
            path, model_dir_lib.CHECKPOINT_PREFIX + ".index"):
        return "model_dir", path, os.path.join(path, model_dir_lib.CHECKPOINT_PREFIX)
    if _exists(path, huggingface.CONFIG_FILE):
        for name, fmt in ((huggingface.WEIGHTS_FILE, "huggingface"),
                          (huggingface.WEIGHTS_FILE + ".index.json", "huggingface_sharded"),
                          (huggingface_h5.WEIGHTS_FILE, "huggingface_h5")):
            if _exists(path, name):
                return fmt, path, None
    if _exists(path, PICKLE_FILE):
        huggingface._weights_files(path)  # raises the pickle-only error
    if _exists(path, GOOGLE_RESEARCH_CHECKPOINT + ".index"):
        return "google_research", path, os.path.join(path, GOOGLE_RESEARCH_CHECKPOINT)
    raise _not_a_checkpoint(path)


def _checkpoint_variables(prefix):
    """{variable name: shape} of a TF checkpoint's index (no values read)."""
    import tensorflow as tf

    try:
        return dict(tf.train.list_variables(prefix))
    except (tf.errors.OpError, ValueError) as error:
        raise model_dir_lib.checkpoint_read_error(prefix, error) from None


def _describe_model_dir(description, folder, prefix):
    info = model_dir_lib.read_model_info(folder)
    description.weights = [os.path.basename(prefix) + ".*"]
    description.head = info.get("head")
    description.architecture = info.get("huggingface_architecture")
    description.label_names = info.get("label_names")
    description.problem_type = info.get("problem_type")
    description.lower_case = info.get("do_lower_case")
    variables = _checkpoint_variables(prefix)
    description.pretraining_heads = sorted(
        {name.split("/")[0] for name in variables} & {"masked_lm", "next_sentence"})
    for name, shape in variables.items():
        if name.startswith("head/") and "kernel" in name and len(shape) == 2:
            description.num_labels = shape[-1]
    if description.num_labels is None and description.label_names:
        description.num_labels = len(description.label_names)
    vocab_file = model_dir_lib.vocab_path(folder)
    if os.path.isfile(vocab_file):
        description.vocab = vocab_file


def _describe_google_research(description, folder, prefix):
    description.weights = [os.path.basename(prefix) + ".*"]
    variables = _checkpoint_variables(prefix)
    description.pretraining_heads = [
        head for head, name in (("masked_lm", "cls/predictions/output_bias"),
                                ("next_sentence", "cls/seq_relationship/output_weights"))
        if name in variables]
    description.head = "pretrainer" if description.pretraining_heads else "encoder"
    if _exists(folder, model_dir_lib.VOCAB_NAME):
        description.vocab = os.path.join(folder, model_dir_lib.VOCAB_NAME)


def _describe_keras(description, path):
    try:
        with zipfile.ZipFile(path) as archive:
            config = json.loads(archive.read("config.json").decode("utf-8"))
            description.vocab = (VOCAB_ASSET_HINT if any(
                name.endswith("/vocab.txt") for name in archive.namelist()) else None)
    except (zipfile.BadZipFile, KeyError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"{path}: not a Keras .keras file ({error}).") from None
    if isinstance(config, dict):
        description.architecture = config.get("class_name")
    description.weights = [os.path.basename(path)]


def _describe_huggingface(description, folder):
    from bert_tf.checkpoints import huggingface_tasks
    from bert_tf.checkpoints.tokenizer_json import read_folder_vocab

    config_path = os.path.join(folder, huggingface.CONFIG_FILE)
    values = read_json_object(config_path)
    huggingface_tasks.check_model_type(values, config_path)
    weights = huggingface_tasks.weights_file(folder)
    if description.format == "huggingface_sharded":
        description.weights = [os.path.basename(weights)] + [
            os.path.basename(p) for p in huggingface._weights_files(folder)]
    else:
        description.weights = [os.path.basename(weights)]
    source, names = huggingface_tasks.read_tensors(folder)  # headers / metadata only
    head = huggingface_tasks.describe_head(values, source, names, config_path)
    description.architecture = head["architecture"]
    description.head = head["head"]
    description.num_labels = head["num_labels"]
    description.label_names = head["label_names"]
    description.problem_type = head["problem_type"]
    description.pretraining_heads = head["pretraining_heads"]
    vocab = read_folder_vocab(folder)
    description.vocab = vocab.vocab_file or os.path.join(folder, "tokenizer.json")
    description.vocab_size = len(vocab.tokens)
    description.lower_case = vocab.lower_case


def describe_folder(path):
    """A `FolderDescription` of a checkpoint folder, `.keras` file or TF checkpoint prefix.

    Raises:
      FileNotFoundError: no such path, or a file the layout needs.
      CheckpointError: not a layout bert_tf reads, or small files that contradict each other
        (one line, naming the file).
    """
    fmt, folder, prefix = detect_format(path)
    description = FolderDescription(os.fspath(path), fmt)
    if fmt == "model_dir":
        _describe_model_dir(description, folder, prefix)
    elif fmt == "google_research":
        _describe_google_research(description, folder, prefix)
    elif fmt == "keras":
        _describe_keras(description, os.fspath(path))
    else:
        _describe_huggingface(description, folder)
    if description.vocab_size is None and description.vocab and os.path.isfile(
            description.vocab):
        with open(description.vocab, encoding="utf-8") as f:
            description.vocab_size = sum(1 for line in f if line.strip())
    return description
