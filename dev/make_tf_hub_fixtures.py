"""Dev-only: regenerates the TF Hub SavedModel fixtures of tests/checkpoints (tf_hub/).

The SavedModels are made by TF Model Garden's own TF Hub exporter
(`official/nlp/tools/export_tfhub_lib.py`), the code that made the TF Hub / Kaggle BERTs
(`bert_en_uncased_L-12_H-768_A-12`, the small BERTs, the experts) and their
`bert_*_preprocess` models, on tf_keras (Keras 2). Never needed by the package or
`make test`. Its venv:

  python3.11 -m venv /tmp/tfmodels
  /tmp/tfmodels/bin/pip install tf-models-official==2.20.* tensorflow==2.20.* \
      tensorflow-text==2.20.* tensorflow-hub tf-keras==2.20.* sentencepiece
  TF_USE_LEGACY_KERAS=1 /tmp/tfmodels/bin/python dev/make_tf_hub_fixtures.py \
      --output_dir=tests/testdata/tf_hub

Writes, for a tiny random BERT (hidden 16, 2 layers, 4 heads, FFN 24, Model Garden's
`hidden_act: gelu`, the 63-token uncased vocab of tests/testdata/hf_tasks):
  bert_uncased_tiny/             `export_model(..., with_mlm=True)`: the encoder SavedModel with
                                 its `.mlm` sub-object, `assets/vocab.txt`, `do_lower_case`.
  bert_uncased_tiny_preprocess/  `export_preprocessing(...)` for the same vocab, seq length 16.
  not_bert/                      a `tf.Module` SavedModel with one signature, `scale`.
  albert_like/                   a `tf.Module` SavedModel with what marks Model Garden's ALBERT
                                 exports: a SentencePiece model (trained here on the fixture
                                 texts) as its `sp_model_file` asset.
  reference.npz                  per input kind (`single`, `pair`): the preprocess model's
                                 `input_word_ids`, `input_mask`, `input_type_ids`, the
                                 encoder's `pooled_output`, `sequence_output`, `encoder_outputs`
                                 (stacked, [L, B, S, H]), and `.mlm`'s `mlm_logits` at
                                 `masked_lm_positions`: all from the SavedModels as
                                 `tf.saved_model.load` runs them.
  reference.json                 the texts.
"""

import argparse
import json
import os
import shutil
import tempfile

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from official.legacy.bert import configs  # noqa: E402
from official.modeling import tf_utils  # noqa: E402
from official.nlp.modeling import models  # noqa: E402
from official.nlp.tools import export_tfhub_lib  # noqa: E402

_parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_parser.add_argument("--output_dir", default="tests/testdata/tf_hub", help="Where they go.")

VOCAB = os.path.join(os.path.dirname(__file__), "..", "tests", "testdata", "hf_tasks",
                     "bert_model_pt", "vocab.txt")
TEXTS = ["The film was great.", "An awful movie, and a bad song!",
         "He read the book where the river lives."]
PAIRS = [("Who wrote the book?", "Moses wrote the book in Egypt."),
         ("Where does Mary live?", "Mary lives in the city of London.")]
SEQ_LENGTH = 16
MASKED_POSITIONS = [1, 3, 4]


def _bert_config():
    return configs.BertConfig(
        vocab_size=63, hidden_size=16, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=24, hidden_act="gelu", max_position_embeddings=32,
        type_vocab_size=2)


def _randomize(variables, seed):
    """Random biases and LayerNorm parameters too, so a swapped or missing mapping shows."""
    rng = np.random.default_rng(seed)
    for variable in variables:
        center = 1.0 if "gamma" in variable.name else 0.0
        variable.assign(rng.normal(center, 0.2, variable.shape).astype(np.float32))


def _pretrainer_checkpoint(bert_config, prefix):
    """A Model Garden pretrainer checkpoint with random weights, as export_model reads one."""
    encoder = export_tfhub_lib.get_bert_encoder(bert_config)
    pretrainer = models.BertPretrainerV2(
        encoder_network=encoder, mlm_activation=tf_utils.get_activation(bert_config.hidden_act))
    ids = tf.zeros([1, 4], tf.int32)
    pretrainer(dict(input_word_ids=ids, input_mask=ids + 1, input_type_ids=ids,
                    masked_lm_positions=tf.zeros([1, 1], tf.int32)))
    _randomize(pretrainer.trainable_variables, seed=0)
    return tf.train.Checkpoint(**pretrainer.checkpoint_items).save(prefix)


def _export_bert(output_dir, scratch):
    bert_config = _bert_config()
    checkpoint = _pretrainer_checkpoint(bert_config, os.path.join(scratch, "pretrainer"))
    encoder_dir = os.path.join(output_dir, "bert_uncased_tiny")
    export_tfhub_lib.export_model(
        encoder_dir, bert_config=bert_config, model_checkpoint_path=checkpoint,
        with_mlm=True, vocab_file=VOCAB, do_lower_case=True)
    preprocess_dir = os.path.join(output_dir, "bert_uncased_tiny_preprocess")
    export_tfhub_lib.export_preprocessing(
        preprocess_dir, vocab_file=VOCAB, do_lower_case=True, tokenize_with_offsets=False,
        default_seq_length=SEQ_LENGTH)
    return encoder_dir, preprocess_dir


def _export_not_bert(output_dir):
    class Scale(tf.Module):
        def __init__(self):
            super().__init__()
            self.factor = tf.Variable(2.0)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def scale(self, x):
            return {"scaled": x * self.factor}

    module = Scale()
    tf.saved_model.save(module, os.path.join(output_dir, "not_bert"),
                        signatures={"scale": module.scale})


def _export_albert_like(output_dir, scratch):
    """What marks Model Garden's ALBERT exports: a SentencePiece model as the
    `sp_model_file` asset (a whole ALBERT SavedModel would add 0.9 MB to the fixtures)."""
    import sentencepiece

    corpus = os.path.join(scratch, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        f.write("\n".join(TEXTS + [t for pair in PAIRS for t in pair]) + "\n")
    model_prefix = os.path.join(scratch, "albert_sp")
    sentencepiece.SentencePieceTrainer.train(
        input=corpus, model_prefix=model_prefix, vocab_size=40, model_type="unigram",
        pad_id=0, unk_id=1, bos_id=-1, eos_id=-1, control_symbols="[CLS],[SEP],[MASK]",
        normalization_rule_name="identity")
    module = tf.Module()
    module.sp_model_file = tf.saved_model.Asset(model_prefix + ".model")
    module.word_embeddings = tf.Variable(tf.zeros([40, 8]), name="word_embeddings/embeddings")
    tf.saved_model.save(module, os.path.join(output_dir, "albert_like"))


def _references(encoder_dir, preprocess_dir):
    """The SavedModels' own outputs, as a TF Hub user gets them."""
    preprocess = tf.saved_model.load(preprocess_dir)
    encoder = tf.saved_model.load(encoder_dir)
    single = preprocess(tf.constant(TEXTS))
    first, second = zip(*PAIRS)
    pair = preprocess.bert_pack_inputs(
        [preprocess.tokenize(tf.constant(first)), preprocess.tokenize(tf.constant(second))],
        seq_length=tf.constant(SEQ_LENGTH))
    arrays = {}
    for kind, inputs in (("single", single), ("pair", pair)):
        inputs = {key: inputs[key] for key in ("input_word_ids", "input_mask", "input_type_ids")}
        batch = inputs["input_word_ids"].shape[0]
        positions = tf.constant([MASKED_POSITIONS] * batch, tf.int32)
        outputs = encoder(inputs)
        mlm = encoder.mlm(dict(inputs, masked_lm_positions=positions))
        np.testing.assert_allclose(mlm["sequence_output"], outputs["sequence_output"], atol=1e-6)
        values = dict(inputs, masked_lm_positions=positions,
                      pooled_output=outputs["pooled_output"],
                      sequence_output=outputs["sequence_output"],
                      encoder_outputs=tf.stack(outputs["encoder_outputs"]),
                      mlm_logits=mlm["mlm_logits"])
        arrays.update({f"{kind}/{key}": np.asarray(value) for key, value in values.items()})
    return arrays


def main():
    args = _parser.parse_args()
    if os.path.exists(args.output_dir):
        shutil.rmtree(args.output_dir)
    os.makedirs(args.output_dir)
    with tempfile.TemporaryDirectory() as scratch:
        encoder_dir, preprocess_dir = _export_bert(args.output_dir, scratch)
        _export_not_bert(args.output_dir)
        _export_albert_like(args.output_dir, scratch)
    np.savez_compressed(os.path.join(args.output_dir, "reference.npz"),
                        **_references(encoder_dir, preprocess_dir))
    with open(os.path.join(args.output_dir, "reference.json"), "w", encoding="utf-8") as f:
        json.dump({"texts": TEXTS, "pairs": PAIRS, "seq_length": SEQ_LENGTH,
                   "masked_positions": MASKED_POSITIONS}, f, indent=2)
        f.write("\n")
    print("Wrote", sorted(os.listdir(args.output_dir)))


if __name__ == "__main__":
    main()
