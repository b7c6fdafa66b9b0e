"""Rule-based sentence splitter."""

import pytest

from bert_tf.data.sentence_splitter import split_paragraphs, split_sentences


@pytest.mark.parametrize("text, expected",
                         [("In the beginning God created the heaven. And the " "earth was void.",
                           ["In the beginning God created the heaven.", "And the earth was void."]),
                          ("Mr. Smith met Dr. Jones at St. Paul's.",
                           ["Mr. Smith met Dr. Jones at " "St. Paul's."]),
                          ("Use tools, e.g. " "hammers, i.e. heavy ones. Then rest.",
                           ["Use tools, " "e.g. hammers, i.e. heavy ones.", "Then rest."]),
                          ("Pi is 3.14 and e is 2.72. Both are irrational.",
                           ["Pi is 3.14 and e is " "2.72.", "Both are irrational."]),
                          ('He said, "Stop." Then he left.', ['He said, "Stop."', "Then he left."]),
                          ('"Why?" she asked. "Because!" he said.',
                           ['"Why?" she asked.', '"Because!" he said.']),
                          ("J. S. Bach wrote it. " "It is long.",
                           ["J. S. Bach wrote it.", "It is long."]),
                          ("Wait... what? No! Yes.", ["Wait... what?", "No!", "Yes."]),
                          ("It ended (finally.) Next came 1999.",
                           ["It ended (finally.)", "Next came 1999."]),
                          ("no capital. after the " "period", ["no capital. after the period"]),
                          ("  spaced\n out   text.  ", ["spaced out text."]), ("", []),])
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


def test_split_paragraphs():
    text = "First one. Second one.\n\n\n  \nThird.\nStill third.\n\n"
    assert split_paragraphs(text) == [["First one.", "Second one."], ["Third.", "Still third."]]
