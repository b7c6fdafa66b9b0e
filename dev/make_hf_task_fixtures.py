"""Dev-only: regenerates the Hugging Face task-folder fixtures of tests/checkpoints.

Runs with PyTorch + transformers 4.57 (the last release with TensorFlow models), never needed
by the package or `make test`. Install them in a venv of their own:

  python3 -m venv /tmp/hfvenv
  /tmp/hfvenv/bin/pip install torch==2.13.0 'transformers==4.57.6' 'tf-keras==2.21.*' \
      'tensorflow==2.21.*' safetensors==0.5.3
  /tmp/hfvenv/bin/python dev/make_hf_task_fixtures.py --output_dir=tests/testdata

Writes `hf_tasks/`, one tiny random model per architecture (hidden 8, 2 layers, a 63-token
word vocab), saved by transformers:
  <name>_pt/  `save_pretrained` of the PyTorch `BertFor*`: config.json, model.safetensors,
              vocab.txt, tokenizer_config.json;
  <name>_tf/  `save_pretrained` of the TensorFlow `TFBertFor*` holding the same weights
              (copied with `load_pytorch_state_dict_in_tf2_model`: transformers 4.57 cannot
              read safetensors into TF): config.json, tf_model.h5, vocab.txt,
              tokenizer_config.json. Not for multi_label_classification and regression,
              BertForSequenceClassification variants with the same TF layout.
`token_classification_*` is cased and keeps no vocab.txt: its tokenizer is tokenizer.json
only, as transformers 5 saves it. `sequence_classification_sharded_pt/` is the single-label
classifier saved in shards (`model.safetensors.index.json`).
`hf_tasks_reference.npz` holds, per fixture `<name>/`, the tokenizer's ids and the PyTorch
model's outputs (eval mode, float32); the TF model's agree to 1e-5 (checked here).
`hf_tasks_reference.json` holds the texts, label names and per-word tags.

With `--check_export=DIR --name=NAME` it instead loads a folder bert_tf's
`export_huggingface_checkpoint` wrote with transformers (the architecture of its config) and
prints missing / unexpected keys and the max abs difference of its outputs to fixture NAME's
references. This part runs with transformers 5 too (PyTorch only), e.g.

  /tmp/hf5venv/bin/pip install torch==2.13.0 transformers==5.17.0 safetensors numpy
  python tools/convert_checkpoint.py --from=huggingface --to=model_dir \
      --input=tests/testdata/hf_tasks/token_classification_tf --output_dir=/tmp/md
  python tools/convert_checkpoint.py --from=ours --to=huggingface --input=/tmp/md \
      --output_dir=/tmp/exported
  /tmp/hf5venv/bin/python dev/make_hf_task_fixtures.py --check_export=/tmp/exported \
      --name=token_classification

(transformers 5.17: every architecture loads with no missing or unexpected keys, outputs
equal to 0.0.)
"""

import argparse
import json
import os
import shutil

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

_parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_parser.add_argument("--output_dir", default="tests/testdata", help="Where the fixtures go.")
_parser.add_argument("--check_export", default=None, help="A bert_tf export to check instead.")
_parser.add_argument("--name", default=None, help="The fixture --check_export compares to.")

WORDS = ("the a and of to in is was he she it they light dark water earth heaven day night "
         "good bad film movie great awful song play played book read wrote where who what "
         "lives city river king john mary london paris moses egypt , . ? ! ' -").split()
CASED = "John Mary London Paris Moses Egypt The He She It They Where Who What".split()
PIECES = ["##s", "##ed", "##ing", "##ly", "##er", "##e", "##a", "##o"]
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
UNCASED_VOCAB = SPECIAL + WORDS + PIECES
CASED_VOCAB = SPECIAL + WORDS + CASED + PIECES

TEXTS = ["The film was great.", "An awful movie, and a bad song!",
         "He read the book where the river lives.", "Light and dark, day and night."]
PAIRS = [("Who wrote the book?", "Moses wrote the book in Egypt."),
         ("Where does Mary live?", "Mary lives in the city of London.")]
WORDS_INPUT = [["John", "lives", "in", "London", "."],
               ["Mary", "played", "a", "song", "in", "Paris", "!"],
               ["Moses", "wrote", "the", "book", "."]]
CHOICES = [("She read the", ["book.", "river.", "song."]),
           ("The king played a", ["song.", "city.", "water."])]
TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
SENTIMENT = ["negative", "neutral", "positive"]
TOPICS = ["film", "music", "book", "nature"]

# name: (PyTorch class, config extras, cased, input kind); the problem-type variants of
# BertForSequenceClassification are saved for PyTorch only (the same TF layout as its own).
FIXTURES = {
    "bert_model": ("BertModel", {}, False, "texts"),
    "pretraining": ("BertForPreTraining", {}, False, "texts"),
    "masked_lm": ("BertForMaskedLM", {}, False, "masked"),
    "sequence_classification": (
        "BertForSequenceClassification",
        {"id2label": dict(enumerate(SENTIMENT)), "problem_type": "single_label_classification"},
        False, "texts"),
    "multi_label_classification": (
        "BertForSequenceClassification",
        {"id2label": dict(enumerate(TOPICS)), "problem_type": "multi_label_classification"},
        False, "texts"),
    "regression": ("BertForSequenceClassification",
                   {"num_labels": 1, "problem_type": "regression"}, False, "pairs"),
    "token_classification": ("BertForTokenClassification",
                             {"id2label": dict(enumerate(TAGS))}, True, "words"),
    "question_answering": ("BertForQuestionAnswering", {}, False, "pairs"),
    "multiple_choice": ("BertForMultipleChoice", {}, False, "choices"),
}
PYTORCH_ONLY = ("multi_label_classification", "regression")
MASKED_TEXTS = ["The [MASK] was great.", "He read the [MASK] where the [MASK] lives."]


def _config(vocab, extras):
    return transformers.BertConfig(
        vocab_size=len(vocab), hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=16, max_position_embeddings=40, hidden_act="gelu", **extras)


def _randomize(model, seed):
    """Random biases and LayerNorm parameters too, so a swapped or missing mapping shows."""
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "LayerNorm.weight" in name:
                parameter.normal_(1.0, 0.2)
            elif name.endswith("bias"):
                parameter.normal_(0.0, 0.1)
            elif "embeddings" in name:
                parameter.normal_(0.0, 0.5)
            else:
                parameter.normal_(0.0, 0.3)


def _tokenizer(folder, vocab, cased):
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    tokenizer = transformers.BertTokenizerFast(os.path.join(folder, "vocab.txt"),
                                               do_lower_case=not cased)
    tokenizer.save_pretrained(folder)
    for name in ("special_tokens_map.json",):
        os.remove(os.path.join(folder, name))
    return tokenizer


def _inputs(tokenizer, kind):
    """(tokenizer outputs as int32 numpy, JSON-able description) for an input kind."""
    if kind == "texts":
        encoded = tokenizer(TEXTS, padding=True, return_tensors="np")
        what = {"texts": TEXTS}
    elif kind == "masked":
        encoded = tokenizer(MASKED_TEXTS, padding=True, return_tensors="np")
        what = {"texts": MASKED_TEXTS}
    elif kind == "pairs":
        encoded = tokenizer([a for a, _ in PAIRS], [b for _, b in PAIRS], padding=True,
                            return_tensors="np")
        what = {"pairs": PAIRS}
    elif kind == "words":
        encoded = tokenizer(WORDS_INPUT, is_split_into_words=True, padding=True,
                            return_tensors="np")
        what = {"words": WORDS_INPUT,
                "first_pieces": [[encoded.word_ids(i).index(w) for w in range(len(words))]
                                 for i, words in enumerate(WORDS_INPUT)]}
    else:  # choices: [B, C, S]
        firsts = [prompt for prompt, choices in CHOICES for _ in choices]
        seconds = [choice for _, choices in CHOICES for choice in choices]
        flat = tokenizer(firsts, seconds, padding=True, return_tensors="np")
        encoded = {name: value.reshape(len(CHOICES), -1, value.shape[-1])
                   for name, value in flat.items()}
        what = {"choices": CHOICES}
    return {name: np.asarray(encoded[name], np.int32)
            for name in ("input_ids", "attention_mask", "token_type_ids")}, what


def _outputs(outputs):
    """A model output's tensors (logits and friends) as float32 numpy, by name."""
    return {name: value.numpy().astype(np.float32) for name, value in outputs.items()
            if name in ("logits", "start_logits", "end_logits", "prediction_logits",
                        "seq_relationship_logits", "last_hidden_state", "pooler_output")}


def _tf_copy(pt_class, model, config, inputs):
    """The TF model of the same weights, and its outputs on `inputs`."""
    import tensorflow as tf
    from transformers.modeling_tf_pytorch_utils import load_pytorch_state_dict_in_tf2_model

    tf_model = getattr(transformers, "TF" + pt_class)(config)
    state = {key: value.numpy() for key, value in model.state_dict().items()}
    load_pytorch_state_dict_in_tf2_model(tf_model, state, allow_missing_keys=False)
    outputs = tf_model({name: tf.constant(value) for name, value in inputs.items()},
                       training=False)
    return tf_model, {name: np.asarray(value) for name, value in outputs.items()
                      if value is not None}


def make_fixture(name, root, references, meta, seed):
    pt_class, extras, cased, kind = FIXTURES[name]
    vocab = CASED_VOCAB if cased else UNCASED_VOCAB
    config = _config(vocab, extras)
    model = getattr(transformers, pt_class)(config).eval()
    _randomize(model, seed)
    pt_dir, tf_dir = os.path.join(root, name + "_pt"), os.path.join(root, name + "_tf")
    for folder in (pt_dir, tf_dir):
        shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(pt_dir)
    model.save_pretrained(pt_dir)
    tokenizer = _tokenizer(pt_dir, vocab, cased)
    inputs, what = _inputs(tokenizer, kind)
    with torch.no_grad():
        outputs = _outputs(model(**{k: torch.from_numpy(v.astype(np.int64))
                                    for k, v in inputs.items()}))
    tf_model, tf_outputs = _tf_copy(pt_class, model, config, inputs)
    for key, value in outputs.items():
        diff = float(np.abs(tf_outputs[key] - value).max())
        assert diff <= 1e-5, (name, key, diff)
    if name not in PYTORCH_ONLY:
        tf_model.save_pretrained(tf_dir)
        for file in ("vocab.txt", "tokenizer.json", "tokenizer_config.json"):
            shutil.copy(os.path.join(pt_dir, file), tf_dir)
    for folder in (pt_dir, tf_dir):
        # Cased: tokenizer.json only, as transformers 5 saves it; else vocab.txt only.
        drop = os.path.join(folder, "vocab.txt" if cased else "tokenizer.json")
        if os.path.exists(drop):
            os.remove(drop)
    for key, value in {**inputs, **outputs}.items():
        references[f"{name}/{key}"] = value
    labelled = (pt_class in ("BertForSequenceClassification", "BertForTokenClassification")
                and config.problem_type != "regression")
    entry = dict(what, architecture=pt_class, problem_type=config.problem_type,
                 label_names=([config.id2label[i] for i in range(config.num_labels)]
                              if labelled else None),
                 do_lower_case=not cased)
    if kind == "words":  # transformers' tags per word: its first piece's best label
        best = outputs["logits"].argmax(-1)
        entry["tags"] = [[config.id2label[int(best[i, p])] for p in firsts]
                         for i, firsts in enumerate(what["first_pieces"])]
    meta[name] = entry
    if name == "sequence_classification":
        sharded = os.path.join(root, name + "_sharded_pt")
        shutil.rmtree(sharded, ignore_errors=True)
        model.save_pretrained(sharded, max_shard_size="4KB")
        shutil.copy(os.path.join(pt_dir, "vocab.txt"), sharded)
        shutil.copy(os.path.join(pt_dir, "tokenizer_config.json"), sharded)


def check_export(folder, name, output_dir):
    """Loads a bert_tf export with transformers; prints key mismatches and output diffs."""
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        architecture = json.load(f)["architectures"][0]
    model, info = getattr(transformers, architecture).from_pretrained(
        folder, output_loading_info=True)
    print("missing:", sorted(info["missing_keys"]), "unexpected:",
          sorted(info["unexpected_keys"]))
    print("id2label:", model.config.id2label, "problem_type:", model.config.problem_type)
    references = np.load(os.path.join(output_dir, "hf_tasks_reference.npz"))
    inputs = {key: torch.from_numpy(references[f"{name}/{key}"].astype(np.int64))
              for key in ("input_ids", "attention_mask", "token_type_ids")}
    with torch.no_grad():
        outputs = _outputs(model.eval()(**inputs))
    for key, value in outputs.items():
        print(f"{key} max abs diff:", float(np.abs(value - references[f"{name}/{key}"]).max()))
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    print("tokenizer:", type(tokenizer).__name__, "lower-cases:",
          tokenizer("Egypt")["input_ids"])


def main():
    args = _parser.parse_args()
    torch.set_num_threads(1)
    if args.check_export:
        check_export(args.check_export, args.name, args.output_dir)
        return
    root = os.path.join(args.output_dir, "hf_tasks")
    os.makedirs(root, exist_ok=True)
    references, meta = {}, {}
    for seed, name in enumerate(FIXTURES):
        make_fixture(name, root, references, meta, seed)
    np.savez_compressed(os.path.join(args.output_dir, "hf_tasks_reference.npz"), **references)
    meta = {"torch": torch.__version__, "transformers": transformers.__version__,
            "fixtures": meta}
    with open(os.path.join(args.output_dir, "hf_tasks_reference.json"), "w",
              encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
