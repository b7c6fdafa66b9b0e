r"""Prepares raw text into the one-sentence-per-line pretraining format.

Output: one sentence per line, a blank line between documents (the input format
of `create_pretraining_data`), split into a training and a held-out file, gzip
compressed with a fixed timestamp so reruns give identical bytes.

Input formats:
  kjv:        the King James Bible as printed by Debian's `bible` program, one
              verse per line (`Ge1:1 In the beginning ...`); one chapter becomes
              one document.
  paragraphs: plain text; each paragraph (blank-line separated) becomes one
              document.

The shipped corpus (bert_tf/data/corpus/) was made with:
  apt-get download bible-kjv bible-kjv-text
  dpkg-deb -x bible-kjv_4.38_amd64.deb kjv && dpkg-deb -x bible-kjv-text_4.38_all.deb kjv
  kjv/usr/bin/bible -f -p kjv/usr/lib "gen1:1-rev22:21" > kjv_verses.txt
  python tools/prepare_corpus.py --input_file=kjv_verses.txt --input_format=kjv \
      --output_dir=bert_tf/data/corpus --heldout_every=20

An existing train.txt.gz or heldout.txt.gz in --output_dir is an error; nothing is overwritten.
"""

import gzip
import itertools
import os
import re

from absl import flags  # noqa: E402

from bert_tf import cli  # first: quiets TensorFlow's C++ start-up lines
from bert_tf.data import sentence_splitter  # noqa: E402
from bert_tf.data.document_reader import InputError  # noqa: E402
from bert_tf.file_io import refuse_existing  # noqa: E402
from bert_tf.finetuning.table_reader import read_text, split_lines  # noqa: E402

OUTPUT_NAMES = ("train.txt.gz", "heldout.txt.gz")

flags.DEFINE_string("input_file", None, "Raw text file (UTF-8).")
flags.DEFINE_enum("input_format", "paragraphs", ["kjv", "paragraphs"], "Layout of --input_file.")
flags.DEFINE_string("output_dir", None, "Writes train.txt.gz and heldout.txt.gz here.")
flags.DEFINE_integer("heldout_every", 20, "Every n-th document goes to the held-out split.",
                     lower_bound=1)
flags.mark_flags_as_required(["input_file", "output_dir"])
FLAGS = flags.FLAGS

# "Ge1:1 text", "1Sm3:4 text", "SSol2:1 text"
_KJV_VERSE = re.compile(r"^(?P<book>\d?[A-Za-z]+)(?P<chapter>\d+):\d+\s+(?P<text>.*)$")


def kjv_documents(lines, path="input"):
    """Yields one text per chapter from `bible -f` verse lines.

    Raises:
      InputError: a non-blank line is not a verse line (file and line named).
    """
    def chapter_key(match):
        return match.group("book"), match.group("chapter")

    matches = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        match = _KJV_VERSE.match(line)
        if not match:
            raise InputError(f"{path}:{number}: not a `bible -f` verse line: {line[:80]!r}; "
                             "use --input_format=paragraphs for plain text.")
        matches.append(match)
    for _, verses in itertools.groupby(matches, key=chapter_key):
        yield " ".join(v.group("text") for v in verses)


def paragraph_documents(text):
    """Yields one text per blank-line separated paragraph."""
    for paragraph in re.split(r"\n\s*\n", text):
        if paragraph.strip():
            yield paragraph


def _write_gzip(path, documents):
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                                mtime=0) as out:
        out.write("\n\n".join("\n".join(d) for d in documents).encode("utf-8") + b"\n")


def main(argv):
    del argv  # cli.run refuses positional arguments
    for name in OUTPUT_NAMES:
        refuse_existing(os.path.join(FLAGS.output_dir, name), "output file")
    text = read_text(FLAGS.input_file)
    if FLAGS.input_format == "kjv":
        raw_documents = list(kjv_documents(split_lines(text), FLAGS.input_file))
    else:
        raw_documents = paragraph_documents(text)
    train, heldout = [], []
    for index, raw in enumerate(raw_documents):
        sentences = sentence_splitter.split_sentences(raw)
        if sentences:
            (heldout if index % FLAGS.heldout_every == FLAGS.heldout_every - 1
             else train).append(sentences)
    if not train:
        raise InputError(f"{FLAGS.input_file}: no training document ({len(heldout)} held out "
                         f"with --heldout_every={FLAGS.heldout_every}); nothing was written.")
    os.makedirs(FLAGS.output_dir, exist_ok=True)
    for name, documents in zip(OUTPUT_NAMES, (train, heldout)):
        path = os.path.join(FLAGS.output_dir, name)
        _write_gzip(path, documents)
        print(f"{path}: {len(documents)} documents, {sum(map(len, documents))} sentences")


if __name__ == "__main__":
    cli.run(main)
