"""Entity F1 against counts worked out by hand with conlleval's chunk rules."""

import pathlib

import pytest

from bert_tf.metrics import conlleval

TESTDATA = pathlib.Path(__file__).parents[1] / "testdata" / "metrics"


def test_bio_file_counts():
    # Gold chunks: PER(John Smith), geo-loc(New York), ORG(United Nations), geo-loc(Paris).
    # Guessed: PER(John Smith), geo-loc(New), ORG(York), ORG(United Nations), MISC(met),
    # geo-loc(Paris, I- after O starts a chunk). Correct: PER, ORG(United Nations), geo-loc(Paris).
    with open(TESTDATA / "conlleval_bio.txt") as f:
        counts = conlleval.evaluate_conll_lines(f)
    overall = counts.overall()
    counted = (overall["tokens"], overall["phrases"], overall["found"], overall["correct"])
    assert counted == (12, 4, 6, 3)
    assert overall["accuracy"] == pytest.approx(75.0)
    assert overall["precision"] == pytest.approx(50.0)
    assert overall["recall"] == pytest.approx(75.0)
    assert overall["f1"] == pytest.approx(60.0)
    per_type = counts.per_type()
    assert sorted(per_type) == ["MISC", "ORG", "PER", "geo-loc"]  # hyphen inside the type kept
    assert per_type["geo-loc"]["f1"] == pytest.approx(50.0)
    assert per_type["ORG"]["precision"] == pytest.approx(50.0)
    assert per_type["ORG"]["recall"] == pytest.approx(100.0)
    assert per_type["MISC"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_iob1_file_counts():
    # IOB1: B- only splits adjacent same-type chunks. Gold: PER(Alex), PER(Bob),
    # LOC(Rio de Janeiro). Guessed: PER(Alex), PER(Bob), LOC(Rio), LOC(Janeiro).
    with open(TESTDATA / "conlleval_iob1.txt") as f:
        overall = conlleval.evaluate_conll_lines(f).overall()
    assert (overall["phrases"], overall["found"], overall["correct"]) == (3, 4, 2)
    assert overall["precision"] == pytest.approx(50.0)
    assert overall["recall"] == pytest.approx(200 / 3)
    assert overall["accuracy"] == pytest.approx(600 / 7)


def test_tag_lists_match_file_reader():
    gold, guessed, sentence_gold, sentence_guess = [], [], [], []
    with open(TESTDATA / "conlleval_bio.txt") as f:
        for line in list(f) + ["\n"]:
            if not line.strip():
                gold.append(sentence_gold)
                guessed.append(sentence_guess)
                sentence_gold, sentence_guess = [], []
                continue
            _, g, p = line.split()
            sentence_gold.append(g)
            sentence_guess.append(p)
    assert conlleval.evaluate_tags(gold, guessed).overall()["f1"] == pytest.approx(60.0)
    # A chunk open at a sentence end does not run into the next sentence.
    counts = conlleval.evaluate_tags([["B-PER"], ["I-PER"]], [["B-PER"], ["I-PER"]]).overall()
    assert (counts["phrases"], counts["correct"]) == (2, 2)


def test_bad_lines_name_the_line():
    with pytest.raises(ValueError, match="Line 2"):
        conlleval.evaluate_conll_lines(["a B-X B-X\n", "b O\n"])
    with pytest.raises(ValueError, match="Sentence 0"):
        conlleval.evaluate_tags([["O", "O"]], [["O"]])
