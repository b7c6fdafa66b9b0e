"""A shortened official_configs/demo.flags run learns: held-out MLM above the unigram baseline."""

import json
import os

import pytest

from bert_tf.training.options import PretrainingOptions
from bert_tf.training.pretraining_runner import run_pretraining

CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "bert_tf", "data", "corpus")


@pytest.mark.slow
def test_shortened_demo_beats_the_unigram_baseline_and_chance_nsp(tmp_path):
    config = tmp_path / "bert_config.json"
    # The demo's recipe at a quarter of its width, so it trains in well under a minute.
    config.write_text(json.dumps({
        "vocab_size": 30522, "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
        "intermediate_size": 256, "max_position_embeddings": 64, "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0}))
    result = run_pretraining(PretrainingOptions(
        bert_config_file=str(config), input_format="text",
        input_file=os.path.join(CORPUS, "train.txt.gz"),
        eval_input_file=os.path.join(CORPUS, "heldout.txt.gz"),
        vocab_file=os.path.join(CORPUS, "vocab.txt"), output_dir=str(tmp_path / "out"),
        max_seq_length=64, max_predictions_per_seq=10, train_batch_size=32, eval_batch_size=64,
        learning_rate=3e-3, num_train_steps=300, num_warmup_steps=20, save_checkpoints_steps=300,
        steps_per_loop=50, max_eval_steps=10))
    held_out = result["eval"]
    print(held_out)
    assert held_out["mlm_accuracy"] > 1.2 * held_out["unigram_baseline"]
    assert held_out["nsp_accuracy"] > 0.55  # 640 held-out pairs: chance gives 0.5 ± 0.02
    assert os.path.exists(tmp_path / "out" / "model.ckpt.index")
