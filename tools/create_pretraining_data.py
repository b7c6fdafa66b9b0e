r"""Creates BERT pretraining TFRecords (google-research/bert flags and format), on Apache Beam.

Input: text files, one sentence per line, blank lines between documents
(tools/prepare_corpus.py makes them from paragraphs). Output: TFRecords with
google-research's features; see bert_tf/data/records/create_pretraining_data.py for how
NotNext buckets, shuffling and shards differ from google-research. The records
are a function of the input, the flags and --random_seed: any runner and any
worker count write the same bytes. Needs `pip install 'bert_tf[beam]'`.

  python tools/create_pretraining_data.py \
      --input_file=bert_tf/data/corpus/train.txt.gz \
      --output_file=/tmp/pretrain/train.tfrecord --num_output_shards=4 \
      --vocab_file=bert_tf/data/corpus/vocab.txt --do_lower_case \
      --max_seq_length=128 --max_predictions_per_seq=20 --masked_lm_prob=0.15 \
      --random_seed=12345 --dupe_factor=5 \
      --beam_pipeline_options=direct_num_workers=2,direct_running_mode=multi_processing
"""

from absl import flags  # noqa: E402

from bert_tf import (
    cli,  # First: quiets TensorFlow's C++ start-up logging.
    errors,  # noqa: E402
)
from bert_tf.data.records import create_pretraining_data as lib  # noqa: E402
from bert_tf.data.records.record_options import Options  # noqa: E402

_DEFAULTS = Options(vocab_file="")

flags.DEFINE_string("input_file", None,
                    "Input text files: comma-separated globs (.gz ok, gs:// ok).")
flags.DEFINE_string("output_file", None,
                    "Output TFRecord file, or comma-separated files; must not exist.")
flags.DEFINE_string("vocab_file", None, "WordPiece vocab the model is trained with.")
flags.DEFINE_bool("do_lower_case", _DEFAULTS.do_lower_case, "Lower-case the text (uncased models).")
flags.DEFINE_bool("do_whole_word_mask", _DEFAULTS.do_whole_word_mask,
                  "Mask all pieces of a word together.")
flags.DEFINE_integer("max_seq_length", _DEFAULTS.max_seq_length, "Maximum sequence length.")
flags.DEFINE_integer("max_predictions_per_seq", _DEFAULTS.max_predictions_per_seq,
                     "Maximum masked tokens.")
flags.DEFINE_integer("random_seed", _DEFAULTS.random_seed,
                     "Seed; same seed + inputs + flags = same bytes.")
flags.DEFINE_integer("dupe_factor", _DEFAULTS.dupe_factor,
                     "Copies of each document, with different masks.")
flags.DEFINE_float("masked_lm_prob", _DEFAULTS.masked_lm_prob, "Fraction of tokens to mask.")
flags.DEFINE_float("short_seq_prob", _DEFAULTS.short_seq_prob,
                   "Probability of a shorter target length.")
flags.DEFINE_integer("num_output_shards", 1, "Shards of --output_file (named "
                     "<output_file>-0000i-of-0000n); each is merged from sorted runs as a stream, "
                     "so its size does not bound memory.")
flags.DEFINE_integer("documents_per_bucket", _DEFAULTS.documents_per_bucket, "Mean size of the "
                     "random document buckets that NotNext segments are drawn from.")
flags.DEFINE_integer("max_document_sentences", _DEFAULTS.max_document_sentences,
                     "Longer documents (e.g. files without blank lines) are cut into pieces.")
flags.DEFINE_integer("max_sequences_per_pack", _DEFAULTS.max_sequences_per_pack, "Pack up to this "
                     "many sequences into one record of --max_seq_length tokens (Krell et al. "
                     "2021; block-diagonal attention, per-sequence positions and NSP: see "
                     "bert_tf/data/records/sequence_packing.py). 1: one sequence per record, "
                     "google-research's format.")
cli.define_beam_pipeline_options()
FLAGS = flags.FLAGS


def main(argv):
    del argv
    options = Options(vocab_file=FLAGS.vocab_file, do_lower_case=FLAGS.do_lower_case,
                      do_whole_word_mask=FLAGS.do_whole_word_mask,
                      max_seq_length=FLAGS.max_seq_length,
                      max_predictions_per_seq=FLAGS.max_predictions_per_seq,
                      random_seed=FLAGS.random_seed, dupe_factor=FLAGS.dupe_factor,
                      masked_lm_prob=FLAGS.masked_lm_prob, short_seq_prob=FLAGS.short_seq_prob,
                      documents_per_bucket=FLAGS.documents_per_bucket,
                      max_document_sentences=FLAGS.max_document_sentences,
                      max_sequences_per_pack=FLAGS.max_sequences_per_pack)
    try:
        with cli.quiet_beam(FLAGS.beam_pipeline_options):
            lib.create_pretraining_data(FLAGS.input_file, FLAGS.output_file, options,
                                        num_output_shards=FLAGS.num_output_shards,
                                        beam_pipeline_options=FLAGS.beam_pipeline_options)
    # Option checks, and a runner that lost data: the user can only fix the flags or rerun, so
    # one line says which, as for a UserError; a trace would point into Beam, not at the cause.
    except (ValueError, lib.DataLossError) as error:
        raise errors.UserError(str(error)) from None


if __name__ == "__main__":
    flags.mark_flags_as_required(["input_file", "output_file", "vocab_file"])
    cli.run(main)
