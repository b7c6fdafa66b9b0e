"""Training: distribution strategies, optimizers and schedules, the custom train loop,
pretraining."""
