"""One conversion over the registry: any format bert_tf reads into any format it writes.

`convert_checkpoint(source, input, target, output_dir)` reads `input` with the source
format's `read` (detected from its files when `source` is None) into a `Pretrained` and hands
it, its models built (`building.with_models`), to the target format's `write`; every pair
of `registry.FORMATS` works, the names the converter took before (`ours`, `model_dir`)
included as aliases.

Example:
>>> convert_checkpoint("google_research", "uncased_L-2_H-128_A-2/bert_model.ckpt",
...                    "huggingface", "/tmp/bert_tiny_hf")  # doctest: +SKIP
"""

from bert_tf.checkpoints import model_dir, registry
from bert_tf.checkpoints.building import with_models
from bert_tf.errors import CheckpointError
from bert_tf.file_io import refuse_existing

# What the converter writes unless told otherwise; the one target that records the casing
# (`--do_lower_case`, in `model_info.json`).
DEFAULT_TARGET = model_dir.NAME


def source_names():
    """Every name `--from` accepts (every format, with its aliases)."""
    return [name for entry in registry.FORMATS for name in entry.names]


def target_names():
    """Every name `--to` accepts (formats bert_tf writes, with their aliases)."""
    return [name for entry in registry.FORMATS + registry.TARGETS if entry.write is not None
            for name in entry.names]


def convert_checkpoint(source, input_path, target, output_dir, do_lower_case=None, **options):
    """Converts `input_path` in format `source` into `output_dir` in format `target`.

    Args:
      source: a format name or alias of `registry.FORMATS` (`huggingface`, `google_research`,
        `model_dir` / `ours`, ...); None: the format `registry.detect_format` finds.
      input_path: the folder (or TF checkpoint prefix) to read.
      target: a format that bert_tf writes (`model_dir`, `huggingface`, `keras_hub`,
        `sentence_transformers`).
      output_dir: destination folder; must not exist or be empty.
      do_lower_case: the model's casing, recorded in `model_info.json` (None: the source's
        record, else a guess from the vocab); model_dir targets only.
      **options: the source format's own read options (`Format.options`: google_research's
        `bert_config_file`, `vocab_file`; model_garden's `copy_pooler_dense_to_encoder`;
        tf_hub's `preprocess_dir`); None values are dropped.

    Raises:
      CheckpointError: an unknown or pointless pair of formats, options the source does not
        take, or a checkpoint that is damaged, holds NaN/Inf or does not fit its config;
      FileNotFoundError: missing inputs; OutputExistsError: `output_dir` exists and is not
        empty (nothing is written).
    """
    options = {key: value for key, value in options.items() if value is not None}
    if (source is not None and source not in source_names()) or target not in target_names():
        raise CheckpointError(f"Cannot convert from {source!r} to {target!r}: sources are "
                              f"{source_names()}, targets {target_names()}.")
    reader = registry.find_format(source) if source else registry.detect_format(input_path)
    writer = registry.find_format(target)
    if reader is writer:
        raise CheckpointError(f"Converting {source or reader.name} to {target} is a copy: "
                              "nothing to do.")
    unknown = sorted(set(options) - set(reader.options))
    if unknown:
        flags = " and ".join(f"--{name}" for name in unknown)
        owners = [entry.name for entry in registry.FORMATS if set(unknown) <= set(entry.options)]
        verb = "apply" if len(unknown) > 1 else "applies"
        raise CheckpointError(f"{flags} {verb} to {' and '.join(owners)} checkpoints only, "
                              f"not to {input_path} (a {reader.title}).")
    if writer.name != DEFAULT_TARGET and do_lower_case is not None:
        raise CheckpointError("--do_lower_case is recorded in a model directory's "
                              f"model_info.json; it does not apply to --to={target}.")
    refuse_existing(output_dir, "output directory")
    pretrained = reader.read(input_path, do_lower_case=do_lower_case, **options)
    return writer.write(with_models(pretrained), output_dir)

