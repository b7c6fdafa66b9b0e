"""Model directories and checkpoint converters (google-research TF1, Hugging Face)."""

from bert_tf.checkpoints.model_dir import read_config, restore_model_dir, write_model_dir

__all__ = ["read_config", "restore_model_dir", "write_model_dir"]
