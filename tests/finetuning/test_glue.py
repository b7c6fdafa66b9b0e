"""GLUE readers on files with the real GLUE headers, table tasks, TFDS mapping and bad input."""

import os
import sys

import pytest

from bert_tf.errors import UserError
from bert_tf.finetuning import glue, sentence_task
from bert_tf.finetuning.table_reader import DataError, read_rows

_MNLI = ("index\tpromptID\tpairID\tgenre\tsentence1_binary_parse\tsentence2_binary_parse\t"
         "sentence1_parse\tsentence2_parse\tsentence1\tsentence2")
# task: (folder files {name: text}, expected (text_a, text_b, label name) of train row 0)
GLUE_FILES = {
    "cola": ({"train.tsv": "gj04\t1\t\tOur friends won't buy this analysis.\n"
                           "gj04\t0\t*\tThey drank the pub.\n",
              "test.tsv": "index\tsentence\n0\tBill whistled past the house.\n"},
             ("Our friends won't buy this analysis.", None, "1")),
    "sst2": ({"train.tsv": "sentence\tlabel\nit 's a \" charming journey \t1\nbland \t0\n",
              "test.tsv": "index\tsentence\n0\tuneasy mishmash\n"},
             ("it 's a \" charming journey ", None, "1")),  # unbalanced quote kept as text
    "mrpc": ({"train.tsv": "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
                           "1\t702876\t702977\tAmrozi accused his brother.\tHe accused him.\n",
              "test.tsv": "index\t#1 ID\t#2 ID\t#1 String\t#2 String\n0\t1\t2\tA b.\tC d.\n"},
             ("Amrozi accused his brother.", "He accused him.", "1")),
    "stsb": ({"train.tsv": "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\t"
                           "sentence1\tsentence2\tscore\n"
                           "0\tmain-captions\tMSRvid\t2012test\t0001\tnone\tnone\t"
                           "A plane is taking off.\tAn air plane is taking off.\t5.000\n",
              "test.tsv": "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\t"
                          "sentence1\tsentence2\n0\tg\tf\ty\t1\tn\tn\tA girl.\tA boy.\n"},
             ("A plane is taking off.", "An air plane is taking off.", 5.0)),
    "qqp": ({"train.tsv": "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
                          "133273\t213221\t213222\tHow is life?\tHow is your life?\t0\n",
             "test.tsv": "id\tquestion1\tquestion2\n0\tWhy?\tWhy not?\n"},
            ("How is life?", "How is your life?", "0")),
    "mnli": ({"train.tsv": _MNLI + "\tlabel1\tgold_label\n"
                           "0\t31193\t31193n\tgov\t(a)\t(b)\t(A)\t(B)\tConceptually cream.\t"
                           "Product and geography.\tneutral\tneutral\n",
              "dev_matched.tsv": _MNLI + "\tlabel1\tlabel2\tlabel3\tlabel4\tlabel5\tgold_label\n"
                                 "0\t1\t1e\tfic\t(a)\t(b)\t(A)\t(B)\tThe man.\tA man.\tentailment\t"
                                 "entailment\tentailment\tneutral\tentailment\tentailment\n",
              "test_matched.tsv": _MNLI + "\n0\t1\t1\tfic\t(a)\t(b)\t(A)\t(B)\tA.\tB.\n"},
             ("Conceptually cream.", "Product and geography.", "neutral")),
    "qnli": ({"train.tsv": "index\tquestion\tsentence\tlabel\n"
                           "0\tWhen?\tIn 1990.\tentailment\n",
              "test.tsv": "index\tquestion\tsentence\n0\tWho?\tNobody.\n"},
             ("When?", "In 1990.", "entailment")),
    "rte": ({"train.tsv": "index\tsentence1\tsentence2\tlabel\n"
                          "0\tNo weapons were found.\tWeapons were found.\tnot_entailment\n",
             "test.tsv": "index\tsentence1\tsentence2\n0\tA.\tB.\n"},
            ("No weapons were found.", "Weapons were found.", "not_entailment")),
    "wnli": ({"train.tsv": "index\tsentence1\tsentence2\tlabel\n"
                           "0\tI stuck a pin.\tThe pin had a hole.\t1\n",
              "test.tsv": "index\tsentence1\tsentence2\n0\tA.\tB.\n"},
             ("I stuck a pin.", "The pin had a hole.", "1")),
}


@pytest.mark.parametrize("name", sorted(GLUE_FILES))
def test_glue_task_reads_its_files(name, tmp_path):
    files, (text_a, text_b, label) = GLUE_FILES[name]
    task = glue.glue_task(name)
    for file_name, text in files.items():
        (tmp_path / file_name).write_text(text)
    train = sentence_task.read_examples(task, str(tmp_path), "train")
    assert (train.text_a[0], train.text_b[0] if train.text_b else None) == (text_a, text_b)
    expected = label if task.regression else task.label_names.index(label)
    assert train.labels[0] == pytest.approx(expected)
    test = sentence_task.read_examples(task, str(tmp_path), "test")
    assert test.labels is None and len(test) == 1 and test.ids == ["0"]
    path = glue.write_submission(task, test, [2.5 if task.regression else 0], str(tmp_path))
    first = "2.500" if task.regression else task.label_names[0]
    assert open(path).read() == f"index\tprediction\n0\t{first}\n"
    assert path.endswith(f"{task.submission_name}.tsv")


def test_mnli_dev_with_five_labels(tmp_path):
    (tmp_path / "dev_matched.tsv").write_text(GLUE_FILES["mnli"][0]["dev_matched.tsv"])
    dev = sentence_task.read_examples(glue.glue_task("MNLI-m"), str(tmp_path), "dev")
    assert dev.labels.tolist() == [1]  # gold_label entailment; google-research label order


def test_names_aliases_and_metrics():
    assert glue.glue_task("SST-2").name == "sst2"
    assert glue.glue_task("MNLI-mm").split_files["dev"] == "dev_mismatched.tsv"
    assert glue.glue_task("cola").metrics[0] == "matthews_corrcoef"
    assert glue.glue_task("stsb").metrics == ("pearson", "spearman")
    with pytest.raises(ValueError, match=r"--task_name=sts: not a GLUE task \(\['cola'"):
        glue.glue_task("sts")
    metrics = sentence_task.compute_metrics(glue.glue_task("mrpc"), [1, 0, 1, 1], [1, 0, 0, 1])
    assert metrics == {"f1": pytest.approx(0.8), "accuracy": 0.75}


def test_tfds_label_ids_follow_names():
    # TFDS MNLI: entailment, neutral, contradiction; google-research: contradiction, entailment,
    # neutral. TFDS CoLA names unacceptable/acceptable for our "0"/"1".
    assert glue._tfds_label_ids(glue.glue_task("mnli"),
                                ["entailment", "neutral", "contradiction"]) == [1, 2, 0]
    assert glue._tfds_label_ids(glue.glue_task("cola"), ["unacceptable", "acceptable"]) == [0, 1]


def test_tfds_reader_on_a_mocked_prepared_dataset(tmp_path, monkeypatch):
    import tensorflow_datasets as tfds

    monkeypatch.setattr(tfds.core.DatasetBuilder, "is_prepared", lambda self: True)
    with tfds.testing.mock_data(num_examples=5, policy=tfds.testing.MockPolicy.USE_CODE):
        examples = glue.read_tfds_examples(glue.glue_task("qnli"), "dev", str(tmp_path))
    assert len(examples) == 5 and len(examples.text_b) == 5
    assert isinstance(examples.text_a[0], str) and set(examples.labels) <= {0, 1}


def test_tfds_not_prepared_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="glue/rte is not prepared"):
        glue.read_tfds_examples(glue.glue_task("rte"), "train", str(tmp_path))


def test_tfds_missing_is_a_one_line_error(tmp_path, monkeypatch):
    # tensorflow-datasets is an optional extra (the demo install leaves it out); a None entry in
    # sys.modules makes the import fail as if it were not installed.
    monkeypatch.setitem(sys.modules, "tensorflow_datasets", None)
    with pytest.raises(UserError, match=r"tensorflow_datas.*pip install 'bert_tf\[tfds\]'"):
        glue.read_tfds_examples(glue.glue_task("rte"), "train", str(tmp_path))


def test_table_task_jsonl_csv_and_inferred_labels(tmp_path):
    (tmp_path / "train.jsonl").write_text('{"text": "good", "y": "pos"}\n\n'
                                          '{"text": "bad", "y": "neg"}\n')
    (tmp_path / "dev.csv").write_text('text,y\n"so, so good",pos\n')
    task = sentence_task.SentenceTask("reviews", text_a_column="text", label_column="y",
                                      split_files={"train": "train.jsonl", "dev": "dev.csv"})
    task = sentence_task.infer_label_names(task, str(tmp_path))
    assert task.label_names == ("neg", "pos")
    assert sentence_task.read_examples(task, str(tmp_path), "train").labels.tolist() == [1, 0]
    dev = sentence_task.read_examples(task, str(tmp_path), "dev")
    assert dev.text_a == ["so, so good"] and dev.labels.tolist() == [1]


def test_bad_input_names_file_and_line(tmp_path):
    task = glue.glue_task("rte")
    (tmp_path / "train.tsv").write_text("index\tsentence1\tsentence2\tlabel\n"
                                        "0\tA.\tB.\tentailment\n1\tC.\tD.\tmaybe\n")
    with pytest.raises(DataError, match=r"train.tsv:3: label 'maybe' is not in the label list"):
        sentence_task.read_examples(task, str(tmp_path), "train")
    (tmp_path / "dev.tsv").write_text("index\tsentence1\tlabel\n0\tA.\tentailment\n")
    with pytest.raises(DataError, match=r"dev.tsv:2: missing column\(s\) \['sentence2'\]"):
        sentence_task.read_examples(task, str(tmp_path), "dev")
    (tmp_path / "test.tsv").write_text("")
    with pytest.raises(DataError, match="test.tsv is empty"):
        sentence_task.read_examples(task, str(tmp_path), "test")
    with pytest.raises(DataError, match="Data file not found"):
        sentence_task.read_examples(glue.glue_task("qnli"), str(tmp_path / "nowhere"), "train")
    (tmp_path / "bad.jsonl").write_text('{"text": "a"\n')
    bad = sentence_task.SentenceTask("t", "text", split_files={"train": "bad.jsonl"})
    with pytest.raises(DataError, match="bad.jsonl:1: not valid JSON"):
        sentence_task.read_examples(bad, str(tmp_path), "train")


def test_tsv_rows_keep_their_columns_and_lines(tmp_path):
    """A tab inside a text would shift the label column: an error naming the line. U+2028 and
    form feeds stay inside their text; CRLF files read like LF files."""
    task = glue.glue_task("rte")
    header = "index\tsentence1\tsentence2\tlabel\r\n"
    (tmp_path / "train.tsv").write_text(
        header + "0\tA\u2028a.\tB\x0cb.\tentailment\r\n1\tC.\tD.\tnot_entailment\r\n")
    examples = sentence_task.read_examples(task, str(tmp_path), "train")
    assert examples.text_a == ["A\u2028a.", "C."] and examples.text_b == ["B\x0cb.", "D."]
    assert examples.labels.tolist() == [0, 1]
    (tmp_path / "train.tsv").write_text(header + "0\tA\u2028a.\tB.\tentailment\r\n"
                                        "1\tC.\tD.\tmaybe\r\n")
    with pytest.raises(DataError, match=r"train.tsv:3: label 'maybe'"):
        sentence_task.read_examples(task, str(tmp_path), "train")
    (tmp_path / "train.tsv").write_text(header + "0\tA.\tB.\tentailment\n"
                                        "1\tC.\tD with\ta tab.\tentailment\n")
    with pytest.raises(DataError, match=r"train.tsv:3: 5 fields, but the header has 4 \(a tab "
                                        r"inside a text\?\)"):
        sentence_task.read_examples(task, str(tmp_path), "train")


def test_csv_and_encoding_errors_name_the_line(tmp_path):
    table = sentence_task.SentenceTask("t", "text", split_files={"train": "t.csv"})
    (tmp_path / "t.csv").write_text('text,label\n"a, quoted\ntext",x\nb,c,y\n')
    with pytest.raises(DataError, match=r"t.csv:4: 3 fields, but the header has 2; quote"):
        sentence_task.read_examples(table, str(tmp_path), "train")
    (tmp_path / "t.csv").write_text('text,label\na\rb,x\n')
    with pytest.raises(DataError, match=r"t.csv:2: new-line character seen in unquoted field"):
        sentence_task.read_examples(table, str(tmp_path), "train")
    (tmp_path / "t.csv").write_bytes(b"text,label\nok,x\nna\xefve,y\n")
    with pytest.raises(DataError, match=r"t.csv:3: not valid UTF-8 \(byte 0xef at column 3\)"):
        sentence_task.read_examples(table, str(tmp_path), "train")


def test_a_fifo_as_data_file_is_refused_without_waiting_on_it(tmp_path):
    path = tmp_path / "train.tsv"
    os.mkfifo(path)
    with pytest.raises(DataError, match=rf"^{path} is a FIFO, not a regular file"):
        read_rows(str(path))
