"""Hugging Face transformers on PyTorch fine-tuned as its users run it: the peer of
`benchmarks/finetune_peers.py` (`benchmark.py --what=finetune_peers`).

A plain loop equal to `Trainer`'s default one: `set_seed` before loading the model,
`AutoModelFor{Sequence,Token}Classification` on the Hugging Face folder, the fast tokenizer
over the whole train set up front (`dataset.map(tokenize, batched=True)`, timed apart), a
`DataLoader` with a seeded `RandomSampler` and `DataCollatorWithPadding` /
`DataCollatorForTokenClassification` (each batch padded to its longest), AdamW from
`torch.optim` (fused, Trainer's default on torch >= 2.8) with weight decay off LayerNorm and
biases, `get_linear_schedule_with_warmup`, global grad-norm clip, dropout on, float32; with
`--bf16`, the forward passes run under `torch.autocast("cpu", torch.bfloat16)`, as
`Trainer(bf16=True)` runs them (weights, gradients and AdamW stay float32).
NER labels sit on each word's first WordPiece (-100 elsewhere), as run_ner's.

Reads the examples `finetune_peers` wrote (JSON, so both see the same ones) and prints one
JSON line per epoch: its seconds (training only), examples/s, the dev metric (accuracy, or
entity F1 by our `bert_tf/metrics/conlleval.py`, loaded by path: this venv has no
TensorFlow) and the load average at its start and end. Runs in the reference venv:

    .venv-ref/bin/python benchmarks/finetune_torch.py --task=sentences --hf_dir=<HF folder> \\
        --train_file=train.json --dev_file=dev.json --seed=0 --epochs=2 --batch_size=32 \\
        --learning_rate=5e-5 --warmup_proportion=0 --max_length=128
"""

import argparse
import contextlib
import importlib.util
import json
import math
import os
import time

import numpy as np
import torch
import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
CONLLEVAL = os.path.join(HERE, "..", "bert_tf", "metrics", "conlleval.py")
EVAL_BATCH_SIZE = 64
# Hugging Face's label id of positions the loss skips.
IGNORE = -100


def conlleval():
    """Our `bert_tf.metrics.conlleval`, loaded by path (the package imports TensorFlow)."""
    spec = importlib.util.spec_from_file_location("conlleval", CONLLEVAL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sentence_features(tokenizer, examples, max_length):
    """Unpadded features of `{"text", "label"}` examples, as `dataset.map(tokenize)` gives."""
    encoded = tokenizer([e["text"] for e in examples], truncation=True, max_length=max_length)
    return [{**{key: values[i] for key, values in encoded.items()}, "labels": e["label"]}
            for i, e in enumerate(examples)]


def word_features(tokenizer, examples, label_names, max_length):
    """Unpadded features of `{"words", "tags"}` examples, each tag on its word's first
    WordPiece, and the first pieces' positions (to read a tag per word back)."""
    label_id = {name: i for i, name in enumerate(label_names)}
    encoded = tokenizer([e["words"] for e in examples], is_split_into_words=True,
                        truncation=True, max_length=max_length)
    features, firsts = [], []
    for i, example in enumerate(examples):
        labels, first, previous = [], [], None
        for position, word in enumerate(encoded.word_ids(i)):
            is_first = word is not None and word != previous
            labels.append(label_id[example["tags"][word]] if is_first else IGNORE)
            if is_first:
                first.append(position)
            previous = word
        features.append({**{key: values[i] for key, values in encoded.items()},
                         "labels": labels})
        firsts.append(first)
    return features, firsts


def optimizer_and_schedule(model, learning_rate, weight_decay, total_steps, warmup_steps):
    """Trainer's AdamW (fused, eps 1e-8) with no decay on biases and norms, and its linear
    schedule: warm-up over `warmup_steps`, then down to 0 at `total_steps`."""
    no_decay = [n for n, _ in model.named_parameters() if "bias" in n or "LayerNorm" in n]
    groups = [
        {"params": [p for n, p in model.named_parameters() if n not in no_decay],
         "weight_decay": weight_decay},
        {"params": [p for n, p in model.named_parameters() if n in no_decay],
         "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=learning_rate, eps=1e-8, fused=True)
    schedule = transformers.get_linear_schedule_with_warmup(optimizer, warmup_steps, total_steps)
    return optimizer, schedule


def precision(bf16):
    """A fresh context for the forward pass: Trainer's bfloat16 autocast, or float32."""
    return torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()


def train_epoch(model, loader, optimizer, schedule, clip_norm, bf16=False):
    """One epoch of Trainer's step: loss, backward, clip, optimizer and schedule steps."""
    model.train()
    for batch in loader:
        with precision(bf16):
            loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()


def predicted_classes(model, features, collator, bf16=False):
    """Argmax over the logits of each feature, in order, batches padded to their longest."""
    model.eval()
    best = []
    with torch.no_grad(), precision(bf16):
        for start in range(0, len(features), EVAL_BATCH_SIZE):
            batch = collator(features[start:start + EVAL_BATCH_SIZE])
            batch.pop("labels")
            best += list(model(**batch).logits.argmax(-1).numpy())
    return best


def dev_accuracy(model, features, collator, bf16=False):
    guesses = predicted_classes(model, features, collator, bf16)
    return 100 * float(np.mean([g == f["labels"] for g, f in zip(guesses, features)]))


def dev_f1(model, features, collator, firsts, examples, label_names, scorer, bf16=False):
    """conlleval's entity F1; words past the truncation are guessed "O" (as ours)."""
    rows = predicted_classes(model, features, collator, bf16)
    guesses = []
    for row, first, example in zip(rows, firsts, examples):
        tags = [label_names[i] for i in row[first]]
        guesses.append(tags + ["O"] * (len(example["tags"]) - len(tags)))
    gold = [example["tags"] for example in examples]
    return scorer.evaluate_tags(gold, guesses).overall()["f1"]


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", required=True, choices=["sentences", "ner"])
    parser.add_argument("--hf_dir", required=True, help="Hugging Face folder of the encoder.")
    parser.add_argument("--train_file", required=True, help="JSON list of training examples.")
    parser.add_argument("--dev_file", required=True, help="JSON list of dev examples.")
    parser.add_argument("--label_names", required=True, help="JSON list of the label names.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--weight_decay", type=float, default=0.01)
    parser.add_argument("--warmup_proportion", type=float, default=0.0)
    parser.add_argument("--clip_norm", type=float, default=1.0)
    parser.add_argument("--max_length", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--bf16", action="store_true",
                        help="Forward passes in bfloat16 autocast, as Trainer(bf16=True).")
    return parser.parse_args()


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    transformers.set_seed(args.seed)
    train, dev = read_json(args.train_file), read_json(args.dev_file)
    label_names = json.loads(args.label_names)
    tokenizer = transformers.AutoTokenizer.from_pretrained(args.hf_dir)
    sentences = args.task == "sentences"
    model_class = (transformers.AutoModelForSequenceClassification if sentences
                   else transformers.AutoModelForTokenClassification)
    model = model_class.from_pretrained(args.hf_dir, num_labels=len(label_names))
    start = time.perf_counter()
    if sentences:
        collator = transformers.DataCollatorWithPadding(tokenizer)
        train_features = sentence_features(tokenizer, train, args.max_length)
        dev_features = sentence_features(tokenizer, dev, args.max_length)
        score = lambda: dev_accuracy(model, dev_features, collator, args.bf16)  # noqa: E731
    else:
        collator = transformers.DataCollatorForTokenClassification(tokenizer)
        train_features, _ = word_features(tokenizer, train, label_names, args.max_length)
        dev_features, firsts = word_features(tokenizer, dev, label_names, args.max_length)
        scorer = conlleval()
        score = lambda: dev_f1(model, dev_features, collator, firsts, dev,  # noqa: E731
                               label_names, scorer, args.bf16)
    tokenize_seconds = time.perf_counter() - start
    loader = torch.utils.data.DataLoader(
        train_features, batch_size=args.batch_size, collate_fn=collator,
        sampler=torch.utils.data.RandomSampler(
            train_features, generator=torch.Generator().manual_seed(args.seed)))
    total_steps = math.ceil(len(train_features) / args.batch_size) * args.epochs
    optimizer, schedule = optimizer_and_schedule(
        model, args.learning_rate, args.weight_decay, total_steps,
        int(math.ceil(args.warmup_proportion * total_steps)))
    for epoch in range(1, args.epochs + 1):
        load_start, start = os.getloadavg()[0], time.perf_counter()
        train_epoch(model, loader, optimizer, schedule, args.clip_norm, args.bf16)
        seconds, load_end = time.perf_counter() - start, os.getloadavg()[0]
        print(json.dumps({"epoch": epoch, "seconds": seconds,
                          "examples_per_s": len(train_features) / seconds,
                          "dev_metric": score(), "load_start": load_start,
                          "load_end": load_end, "tokenize_seconds": tokenize_seconds,
                          "steps": len(loader), "threads": torch.get_num_threads(),
                          "bf16": args.bf16}),
              flush=True)


if __name__ == "__main__":
    main()
