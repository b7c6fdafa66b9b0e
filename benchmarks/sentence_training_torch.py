"""The peer of `benchmarks/sentence_training.py`: sentence-transformers on PyTorch, as its users
train a retrieval model from pairs (`SentenceTransformerTrainer` with
`MultipleNegativesRankingLoss`, `BatchSamplers.NO_DUPLICATES`). Run in `.venv-ref` (torch,
sentence-transformers, datasets, accelerate); the benchmark times this whole process, start-up
and loading included, and reads the folder it saves.

  .venv-ref/bin/python benchmarks/sentence_training_torch.py --model=<folder> \
      --train_file=pairs.jsonl --output_dir=out --batch_size=32 --learning_rate=5e-5 \
      --epochs=1 --warmup_proportion=0.1 --max_seq_length=128 --seed=0 --threads=2

Prints one JSON row: the trainer's own training seconds and steps.
"""

import argparse
import json
import time


def main():
    parser = argparse.ArgumentParser()
    for name in ("model", "train_file", "output_dir"):
        parser.add_argument(f"--{name}", required=True)
    parser.add_argument("--anchor_column", default="query")
    parser.add_argument("--positive_column", default="passage")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--warmup_proportion", type=float, default=0.1)
    parser.add_argument("--weight_decay", type=float, default=0.01)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.losses import MultipleNegativesRankingLoss
    from sentence_transformers.training_args import BatchSamplers

    with open(args.train_file, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    pairs = Dataset.from_dict({"anchor": [r[args.anchor_column] for r in rows],
                               "positive": [r[args.positive_column] for r in rows]})
    model = SentenceTransformer(args.model, device="cpu")
    model.max_seq_length = args.max_seq_length
    training = SentenceTransformerTrainingArguments(
        output_dir=args.output_dir + "_trainer", num_train_epochs=args.epochs,
        per_device_train_batch_size=args.batch_size, learning_rate=args.learning_rate,
        warmup_steps=args.warmup_proportion, weight_decay=args.weight_decay, seed=args.seed,
        batch_sampler=BatchSamplers.NO_DUPLICATES, save_strategy="no", report_to=[],
        use_cpu=True, dataloader_num_workers=0, logging_steps=10)
    trainer = SentenceTransformerTrainer(model=model, args=training, train_dataset=pairs,
                                         loss=MultipleNegativesRankingLoss(model))
    start = time.perf_counter()
    result = trainer.train()
    seconds = time.perf_counter() - start
    model.save(args.output_dir)
    print(json.dumps({"train_seconds": seconds, "steps": result.global_step,
                      "loss": result.training_loss}), flush=True)


if __name__ == "__main__":
    main()
