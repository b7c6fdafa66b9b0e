"""Entity-level precision, recall and F1 counted exactly as the CoNLL `conlleval` script counts.

conlleval's chunk rules read B-/I- (and E-, S-less IOE) prefixes without being told the scheme,
so the same counting serves BIO (IOB2) and IOB1 tag sequences. Sentence boundaries count as
"O". Scores are percentages, as conlleval prints them.
"""

import collections
import dataclasses


def _split(tag):
    """`B-PER` → (`B`, `PER`); tags without a hyphen have the empty type. Hyphens may recur."""
    prefix, hyphen, kind = tag.partition("-")
    return (prefix, kind) if hyphen else (tag, "")


def _chunk_end(prev_tag, tag, prev_type, kind):
    if (prev_tag, tag) in {("B", "B"), ("B", "O"), ("I", "B"), ("I", "O"),
                           ("E", "E"), ("E", "I"), ("E", "O")}:
        return True
    if prev_tag not in ("O", ".") and prev_type != kind:
        return True
    return prev_tag in ("[", "]")


def _chunk_start(prev_tag, tag, prev_type, kind):
    if (prev_tag, tag) in {("B", "B"), ("I", "B"), ("O", "B"), ("O", "I"),
                           ("E", "E"), ("E", "I"), ("O", "E")}:
        return True
    if tag not in ("O", ".") and prev_type != kind:
        return True
    return tag in ("[", "]")


@dataclasses.dataclass
class ConllCounts:
    """conlleval's counters; `precision`, `recall`, `f1` and `per_type` derive from them."""

    tokens: int = 0
    correct_tags: int = 0
    found_correct: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    found_guessed: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    correct_chunks: collections.Counter = dataclasses.field(default_factory=collections.Counter)

    @staticmethod
    def _scores(correct, guessed, gold):
        precision = 100.0 * correct / guessed if guessed else 0.0
        recall = 100.0 * correct / gold if gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {"precision": precision, "recall": recall, "f1": f1}

    def overall(self):
        """Overall scores plus the phrase counts conlleval prints on its first line."""
        counts = {"phrases": sum(self.found_correct.values()),
                  "found": sum(self.found_guessed.values()),
                  "correct": sum(self.correct_chunks.values())}
        scores = self._scores(counts["correct"], counts["found"], counts["phrases"])
        accuracy = 100.0 * self.correct_tags / self.tokens if self.tokens else 0.0
        return dict(counts, tokens=self.tokens, accuracy=accuracy, **scores)

    def per_type(self):
        types = sorted(set(self.found_correct) | set(self.found_guessed))
        return {kind: self._scores(self.correct_chunks[kind], self.found_guessed[kind],
                                   self.found_correct[kind]) for kind in types}


def count_chunks(rows):
    """Runs conlleval's loop over `(gold_tag, guessed_tag)` rows; `None` marks a sentence break.

    Returns:
      A `ConllCounts`.
    """
    counts = ConllCounts()
    in_correct = False
    last_correct, last_correct_type = "O", ""
    last_guessed, last_guessed_type = "O", ""
    for row in rows:
        boundary = row is None
        correct, correct_type = ("O", "") if boundary else _split(row[0])
        guessed, guessed_type = ("O", "") if boundary else _split(row[1])
        gold_end = _chunk_end(last_correct, correct, last_correct_type, correct_type)
        guess_end = _chunk_end(last_guessed, guessed, last_guessed_type, guessed_type)
        gold_start = _chunk_start(last_correct, correct, last_correct_type, correct_type)
        guess_start = _chunk_start(last_guessed, guessed, last_guessed_type, guessed_type)
        if in_correct:
            if gold_end and guess_end and last_guessed_type == last_correct_type:
                in_correct = False
                counts.correct_chunks[last_correct_type] += 1
            elif gold_end != guess_end or guessed_type != correct_type:
                in_correct = False
        if gold_start and guess_start and guessed_type == correct_type:
            in_correct = True
        if gold_start:
            counts.found_correct[correct_type] += 1
        if guess_start:
            counts.found_guessed[guessed_type] += 1
        if not boundary:
            counts.correct_tags += int(correct == guessed and correct_type == guessed_type)
            counts.tokens += 1
        last_correct, last_correct_type = correct, correct_type
        last_guessed, last_guessed_type = guessed, guessed_type
    if in_correct:
        counts.correct_chunks[last_correct_type] += 1
    return counts


def evaluate_tags(gold_sentences, guessed_sentences):
    """conlleval counts of tag sequences, one list of string tags per sentence.

    Example:
    >>> evaluate_tags([["B-PER", "I-PER", "O"]], [["B-PER", "I-PER", "O"]]).overall()["f1"]
    100.0
    """
    if len(gold_sentences) != len(guessed_sentences):
        raise ValueError(f"{len(gold_sentences)} gold sentences but {len(guessed_sentences)} "
                         "guessed ones.")
    rows = []
    for index, (gold, guessed) in enumerate(zip(gold_sentences, guessed_sentences)):
        if len(gold) != len(guessed):
            raise ValueError(f"Sentence {index}: {len(gold)} gold tags but {len(guessed)} "
                             "guessed tags.")
        rows.extend(zip(gold, guessed))
        rows.append(None)
    return count_chunks(rows)


def evaluate_conll_lines(lines, delimiter=None, boundary="-X-"):
    """conlleval on its own input format: `token ... gold guess` lines, blank between sentences.

    Raises:
      ValueError: a line has a different number of fields than the first one (names the line).
    """
    rows, width = [], None
    for number, line in enumerate(lines, start=1):
        fields = line.rstrip("\n").split(delimiter)
        if not fields or fields == [""] or fields[0] == boundary:
            rows.append(None)
            continue
        if width is None:
            width = len(fields)
        if len(fields) != width or width < 2:
            raise ValueError(f"Line {number}: expected {width} fields (token ... gold guess), "
                             f"found {len(fields)}: {line!r}")
        rows.append((fields[-2], fields[-1]))
    return count_chunks(rows)
