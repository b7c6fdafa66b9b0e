"""The paper's fine-tuning tasks: readers, features, postprocessing and their training glue."""
