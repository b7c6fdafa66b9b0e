r"""Converts BERT checkpoints between the formats bert_tf reads and writes.

  # Hugging Face folder (config.json + model.safetensors + vocab.txt) -> model directory
  python tools/convert_checkpoint.py --from=huggingface --to=model_dir \
      --input=all-MiniLM-L6-v2 --output_dir=/tmp/minilm
  # google-research TF1 checkpoint -> model directory (config and vocab default to the
  # files beside the checkpoint)
  python tools/convert_checkpoint.py --from=google_research --to=model_dir \
      --input=uncased_L-12_H-768_A-12/bert_model.ckpt --output_dir=/tmp/bert_base \
      --do_lower_case
  # bert_tf model directory -> Hugging Face folder (loads with transformers' BertModel)
  python tools/convert_checkpoint.py --from=ours --to=huggingface \
      --input=/tmp/bert_base --output_dir=/tmp/bert_base_hf
  # Model Garden pretrainer, its next-sentence pooler read as the encoder's pooler
  python tools/convert_checkpoint.py --input=mg_pretrainer --output_dir=/tmp/mg \
      --copy_pooler_dense_to_encoder --do_lower_case
  # TF Hub encoder, vocab and casing checked against its preprocessing model
  python tools/convert_checkpoint.py --input=bert_en_uncased_L-12_H-768_A-12_4 \
      --preprocess_dir=bert_en_uncased_preprocess_3 --output_dir=/tmp/hub_bert
  # any encoder -> a sentence-transformers folder (modules.json, pooling, tokenizer.json) that
  # SentenceTransformer(folder) loads: mean pooling + Normalize unless the input records its own
  python tools/convert_checkpoint.py --input=/tmp/bert_base --to=sentence_transformers \
      --output_dir=/tmp/bert_base_st
  # what a folder is (format, architecture, head and labels, vocab, casing); no weights read
  python tools/convert_checkpoint.py --describe=bert-sst2

--from defaults to the format found in --input's files; --from and --to take every format
of bert_tf.checkpoints.registry (--helpshort lists them; `ours` is `model_dir`). A model
directory gets a model_info.json with the head it holds and `do_lower_case` (from
--do_lower_case, else the HF folder's tokenizer_config.json, else guessed from the vocab).
A sentence-transformers folder's max_seq_length, pooling and normalization go with it to a
model directory (model_info.json), a Hugging Face folder (its modules) and a keras-hub preset
(max_seq_length only, as preprocessor.json's sequence_length; a warning names the pooling).
A format's own flags (--bert_config_file and --vocab_file: google_research, --vocab_file: a
keras_hub preset saved without its tokenizer;
--copy_pooler_dense_to_encoder: model_garden; --preprocess_dir: tf_hub) are refused for others.
--output_dir must not exist or be empty; a checkpoint with NaN or Inf weights is refused.
"""

from absl import flags  # noqa: E402

from bert_tf import cli  # first: quiets TensorFlow's C++ start-up lines
from bert_tf.checkpoints.convert import (  # noqa: E402
    DEFAULT_TARGET,
    convert_checkpoint,
    source_names,
    target_names,
)
from bert_tf.checkpoints.registry import describe_folder  # noqa: E402
from bert_tf.errors import UserError  # noqa: E402

flags.DEFINE_enum("from", None, source_names(), "Format of --input (default: detected from "
                  "its files).")
flags.DEFINE_string("describe", None, "Print what this folder (.keras file, TF checkpoint "
                    "prefix) is and exit: format, architecture, head, labels, vocab, casing.")
flags.DEFINE_enum("to", DEFAULT_TARGET, target_names(), "Format written to --output_dir.")
flags.DEFINE_string("input", None, "The checkpoint folder (or TF1 checkpoint prefix).")
flags.DEFINE_string("bert_config_file", None, "google_research: bert_config.json "
                    "(default: beside the checkpoint).")
flags.DEFINE_string("vocab_file", None, "google_research: vocab.txt (default: beside the "
                    "checkpoint); keras_hub: the vocab of a preset saved without its "
                    "tokenizer (backbone.save_to_preset).")
flags.DEFINE_bool("copy_pooler_dense_to_encoder", None, "model_garden: read the pooler from "
                  "the next-sentence head's `next_sentence.pooler_dense` (what Model Garden's "
                  "pretraining trains) instead of the encoder's own.")
flags.DEFINE_string("preprocess_dir", None, "tf_hub: the encoder's TF Hub preprocessing "
                    "SavedModel, for its vocab and casing (checked against the encoder's).")
flags.DEFINE_bool("do_lower_case", None, "--to=model_dir: whether the model is uncased "
                  "(recorded in model_info.json; default: tokenizer_config.json's, else "
                  "guessed from the vocab).")
flags.DEFINE_string("output_dir", None, "Destination folder; must not exist or be empty.")

FLAGS = flags.FLAGS


def main(argv):
    del argv  # cli.run refuses positional arguments
    if FLAGS.describe:
        print(describe_folder(FLAGS.describe))
        return
    if not FLAGS.input or not FLAGS.output_dir:
        raise UserError("--input and --output_dir are required (or --describe=FOLDER).")
    convert_checkpoint(FLAGS["from"].value, FLAGS.input, FLAGS.to, FLAGS.output_dir,
                       do_lower_case=FLAGS.do_lower_case,
                       bert_config_file=FLAGS.bert_config_file, vocab_file=FLAGS.vocab_file,
                       copy_pooler_dense_to_encoder=FLAGS.copy_pooler_dense_to_encoder,
                       preprocess_dir=FLAGS.preprocess_dir)
    print(f"wrote {FLAGS.output_dir} ({FLAGS.to})")


if __name__ == "__main__":
    cli.run(main)
