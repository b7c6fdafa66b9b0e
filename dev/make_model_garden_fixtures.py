"""Dev-only: regenerates the Model Garden TF2 checkpoint fixtures of tests/checkpoints.

Runs with the TensorFlow Model Garden (tf-models-official, which brings tf_keras), never
needed by the package or `make test`. Install it in a venv of its own:

  python3 -m venv /tmp/tfmodels
  /tmp/tfmodels/bin/pip install 'tf-models-official==2.20.*'
  /tmp/tfmodels/bin/python dev/make_model_garden_fixtures.py \
      --output_dir=tests/testdata/model_garden

Writes, from one tiny random google-research TF1 checkpoint (hidden 16, 2 layers, 2 heads,
`hidden_act: gelu`, the 63-token vocab of tests/testdata/hf_tasks/bert_model_pt), each
folder with `bert_config.json` + `vocab.txt`:
  tf1/         the TF1 checkpoint itself (`bert_model.ckpt`, google-research's names, with
               the masked-LM and next-sentence heads), saved by `tf.compat.v1.train.Saver`;
  encoder/     Model Garden's `tf2_bert_encoder_checkpoint_converter` of it with
               `--converted_model=encoder --checkpoint_model_name=encoder`:
               `tf.train.Checkpoint(encoder=BertEncoder)`, renamed `bert_model.ckpt.*` as
               the published v3 BERTs are;
  model/       the same with `--checkpoint_model_name=model` (the older layout), the
               converter's own file names (`bert_model.ckpt-1.*` and `checkpoint`);
  pretrainer/  `--converted_model=pretrainer`: `BertPretrainerV2` (encoder + masked LM),
               saved with its `checkpoint_items` (`encoder`, `masked_lm`) and `model`;
  pretrainer_as_encoder/  `--converted_model=pretrainer` with the flag's default
               `--checkpoint_model_name=encoder`: the `BertPretrainerV2` itself under
               `encoder` (its encoder under `encoder/encoder_network`), `masked_lm` beside;
  pretrainer_nsp/  a `BertPretrainerV2` with the `next_sentence` `ClassificationHead` of
               Model Garden's BERT pretraining config, its encoder and masked LM restored
               from pretrainer/, saved as its `checkpoint_items` (`encoder`, `masked_lm`,
               `next_sentence.pooler_dense`), as Model Garden's pretraining exports it;
  encoder_v2/  the encoder/ weights in Model Garden's `BertEncoderV2` (a Keras layer, what
               its `encoders.build_encoder` makes; the converter's `BertEncoder` is a
               functional model), `tf.train.Checkpoint(encoder=...)`;
  embedding_width/  a `BertEncoder` with `embedding_width=8` (a factorised embedding and
               its projection), `tf.train.Checkpoint(encoder=...)`;
  no_encoder/  a checkpoint holding only a `ClassificationHead` (`tf.train.Checkpoint(
               head=...)`), for the refusal test.
`model_garden_reference.npz` holds the fixed inputs and, per folder `<name>/`, Model
Garden's outputs restored from that folder: `sequence_output`, `pooled_output` (BertEncoder)
and, for the pretrainers, `mlm_logits` at `masked_lm_positions`; for pretrainer_nsp also
`next_sentence_pooled_output`, its next-sentence head's `pooler_dense` on [CLS].
"""

import argparse
import os
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from official.legacy.bert import configs  # noqa: E402
from official.modeling import tf_utils  # noqa: E402
from official.nlp.modeling import layers, models, networks  # noqa: E402
from official.nlp.tools import tf2_bert_encoder_checkpoint_converter as converter  # noqa: E402

_parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_parser.add_argument("--output_dir", default="tests/testdata/model_garden",
                     help="Where the fixtures go.")

VOCAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                     "tests", "testdata", "hf_tasks", "bert_model_pt", "vocab.txt")
CONFIG = {"vocab_size": 63, "hidden_size": 16, "num_hidden_layers": 2,
          "num_attention_heads": 2, "intermediate_size": 32, "hidden_act": "gelu",
          "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
          "max_position_embeddings": 32, "type_vocab_size": 2, "initializer_range": 0.02}
# Two rows, the second padded; its second segment has type id 1.
INPUT_WORD_IDS = np.array([[2, 10, 21, 4, 33, 3, 40, 12, 3],
                           [2, 15, 4, 25, 3, 7, 3, 0, 0]], np.int32)
INPUT_MASK = (INPUT_WORD_IDS > 0).astype(np.int32)
INPUT_TYPE_IDS = np.array([[0, 0, 0, 0, 0, 0, 1, 1, 1],
                           [0, 0, 0, 0, 0, 1, 1, 0, 0]], np.int32)
MASKED_LM_POSITIONS = np.array([[3, 1], [2, 5]], np.int32)


def write_tf1_checkpoint(folder, seed=0):
    """A random google-research BERT checkpoint (its variable names, heads included)."""
    rng = np.random.default_rng(seed)
    h, i, v = CONFIG["hidden_size"], CONFIG["intermediate_size"], CONFIG["vocab_size"]
    shapes = {"bert/embeddings/word_embeddings": [v, h],
              "bert/embeddings/position_embeddings": [CONFIG["max_position_embeddings"], h],
              "bert/embeddings/token_type_embeddings": [CONFIG["type_vocab_size"], h],
              "bert/pooler/dense/kernel": [h, h], "bert/pooler/dense/bias": [h],
              "cls/predictions/transform/dense/kernel": [h, h],
              "cls/predictions/transform/dense/bias": [h],
              "cls/predictions/output_bias": [v],
              "cls/seq_relationship/output_weights": [2, h],
              "cls/seq_relationship/output_bias": [2]}
    norms = ["bert/embeddings/LayerNorm", "cls/predictions/transform/LayerNorm"]
    for layer in range(CONFIG["num_hidden_layers"]):
        block = f"bert/encoder/layer_{layer}"
        for name, (n_in, n_out) in {"attention/self/query": (h, h),
                                    "attention/self/key": (h, h),
                                    "attention/self/value": (h, h),
                                    "attention/output/dense": (h, h),
                                    "intermediate/dense": (h, i),
                                    "output/dense": (i, h)}.items():
            shapes[f"{block}/{name}/kernel"] = [n_in, n_out]
            shapes[f"{block}/{name}/bias"] = [n_out]
        norms += [f"{block}/attention/output/LayerNorm", f"{block}/output/LayerNorm"]
    values = {name: rng.normal(0.0, 0.3, shape) for name, shape in shapes.items()}
    for norm in norms:
        values[f"{norm}/gamma"] = 1.0 + rng.normal(0.0, 0.1, [h])
        values[f"{norm}/beta"] = rng.normal(0.0, 0.1, [h])
    os.makedirs(folder)
    with tf.Graph().as_default():
        variables = [tf.compat.v1.Variable(value.astype(np.float32), name=name)
                     for name, value in values.items()]
        saver = tf.compat.v1.train.Saver(variables)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, os.path.join(folder, "bert_model.ckpt"),
                       write_meta_graph=False)
    os.remove(os.path.join(folder, "checkpoint"))


def write_small_files(folder, config=CONFIG):
    with open(os.path.join(folder, "bert_config.json"), "w", encoding="utf-8") as f:
        f.write(configs.BertConfig.from_dict(config).to_json_string())
    shutil.copy(VOCAB, os.path.join(folder, "vocab.txt"))


def encoder_inputs():
    return {"input_word_ids": tf.constant(INPUT_WORD_IDS),
            "input_mask": tf.constant(INPUT_MASK),
            "input_type_ids": tf.constant(INPUT_TYPE_IDS)}


def rename_prefix(folder, old, new):
    """Renames checkpoint `old`'s files to prefix `new` (as the published tarballs name them)."""
    for name in os.listdir(folder):
        if name.startswith(old + "."):
            os.rename(os.path.join(folder, name),
                      os.path.join(folder, new + name[len(old):]))
    os.remove(os.path.join(folder, "checkpoint"))


def convert(tf1_prefix, folder, model_name, converted_model):
    """Model Garden's converter, as its flags `--checkpoint_model_name` and
    `--converted_model` choose."""
    os.makedirs(folder)
    bert_config = configs.BertConfig.from_dict(CONFIG)
    converter.convert_checkpoint(bert_config, os.path.join(folder, "bert_model.ckpt"),
                                 tf1_prefix, checkpoint_model_name=model_name,
                                 converted_model=converted_model)
    write_small_files(folder)
    return os.path.join(folder, "bert_model.ckpt-1")


def encoder_outputs(prefix, name="encoder"):
    """Model Garden's BertEncoder restored from `prefix` (its object `name`), run on the inputs."""
    encoder = converter._create_bert_model(configs.BertConfig.from_dict(CONFIG))
    tf.train.Checkpoint(**{name: encoder}).read(prefix).expect_partial()
    # The converter's BertEncoder returns [sequence_output, pooled_output].
    sequence_output, pooled_output = encoder(encoder_inputs(), training=False)
    return {"sequence_output": sequence_output.numpy(), "pooled_output": pooled_output.numpy()}


def build_pretrainer(next_sentence):
    """BertPretrainerV2 as Model Garden's BERT pretraining builds it (with NSP: its
    `next_sentence` ClassificationHead, inner_dim = hidden size, tanh)."""
    bert_config = configs.BertConfig.from_dict(CONFIG)
    heads = []
    if next_sentence:
        heads.append(layers.ClassificationHead(
            inner_dim=CONFIG["hidden_size"], num_classes=2, activation="tanh",
            name="next_sentence"))
    return models.BertPretrainerV2(
        encoder_network=converter._create_bert_model(bert_config),
        mlm_activation=tf_utils.get_activation(CONFIG["hidden_act"]),
        mlm_initializer=tf.keras.initializers.TruncatedNormal(stddev=0.02),
        classification_heads=heads)


def pretrainer_outputs(pretrainer):
    inputs = dict(encoder_inputs(), masked_lm_positions=tf.constant(MASKED_LM_POSITIONS))
    outputs = pretrainer(inputs, training=False)
    return {"sequence_output": outputs["sequence_output"].numpy(),
            "pooled_output": outputs["pooled_output"].numpy(),
            "mlm_logits": outputs["mlm_logits"].numpy()}


def main():
    args = _parser.parse_args()
    out = args.output_dir
    if os.path.exists(out):
        shutil.rmtree(out)
    tf.keras.utils.set_random_seed(0)
    references = {"input_word_ids": INPUT_WORD_IDS, "input_mask": INPUT_MASK,
                  "input_type_ids": INPUT_TYPE_IDS,
                  "masked_lm_positions": MASKED_LM_POSITIONS}

    def store(name, outputs):
        references.update({f"{name}/{key}": value for key, value in outputs.items()})

    tf1 = os.path.join(out, "tf1")
    write_tf1_checkpoint(tf1)
    write_small_files(tf1)
    tf1_prefix = os.path.join(tf1, "bert_model.ckpt")

    with tempfile.TemporaryDirectory() as scratch:
        prefix = convert(tf1_prefix, os.path.join(scratch, "encoder"), "encoder", "encoder")
        store("encoder", encoder_outputs(prefix))
        shutil.copytree(os.path.join(scratch, "encoder"), os.path.join(out, "encoder"))
    rename_prefix(os.path.join(out, "encoder"), "bert_model.ckpt-1", "bert_model.ckpt")

    prefix = convert(tf1_prefix, os.path.join(out, "model"), "model", "encoder")
    store("model", encoder_outputs(prefix, name="model"))

    pretrainer_prefix = convert(tf1_prefix, os.path.join(out, "pretrainer"), "model",
                                "pretrainer")
    pretrainer = build_pretrainer(next_sentence=False)
    tf.train.Checkpoint(model=pretrainer).read(
        pretrainer_prefix).assert_existing_objects_matched()
    store("pretrainer", pretrainer_outputs(pretrainer))

    prefix = convert(tf1_prefix, os.path.join(out, "pretrainer_as_encoder"), "encoder",
                     "pretrainer")
    pretrainer = build_pretrainer(next_sentence=False)
    tf.train.Checkpoint(encoder=pretrainer).read(prefix).assert_existing_objects_matched()
    store("pretrainer_as_encoder", pretrainer_outputs(pretrainer))

    nsp = build_pretrainer(next_sentence=True)
    pretrainer_outputs(nsp)  # builds its variables
    tf.train.Checkpoint(encoder=nsp.encoder_network, masked_lm=nsp.masked_lm).read(
        pretrainer_prefix).assert_existing_objects_matched().expect_partial()
    folder = os.path.join(out, "pretrainer_nsp")
    os.makedirs(folder)
    tf.train.Checkpoint(**nsp.checkpoint_items).write(os.path.join(folder, "bert_model.ckpt"))
    write_small_files(folder)
    outputs = pretrainer_outputs(nsp)
    # What `copy_pooler_dense_to_encoder` pools with: the head's own dense layer on [CLS].
    outputs["next_sentence_pooled_output"] = nsp.classification_heads[0].dense(
        outputs["sequence_output"][:, 0]).numpy()
    store("pretrainer_nsp", outputs)

    folder = os.path.join(out, "encoder_v2")
    os.makedirs(folder)
    encoder = networks.BertEncoderV2(
        vocab_size=CONFIG["vocab_size"], hidden_size=CONFIG["hidden_size"],
        num_layers=CONFIG["num_hidden_layers"],
        num_attention_heads=CONFIG["num_attention_heads"],
        inner_dim=CONFIG["intermediate_size"],
        inner_activation=tf_utils.get_activation(CONFIG["hidden_act"]),
        max_sequence_length=CONFIG["max_position_embeddings"],
        type_vocab_size=CONFIG["type_vocab_size"])
    encoder(encoder_inputs())
    tf.train.Checkpoint(encoder=encoder).read(
        os.path.join(out, "encoder", "bert_model.ckpt")).assert_existing_objects_matched()
    tf.train.Checkpoint(encoder=encoder).write(os.path.join(folder, "bert_model.ckpt"))
    write_small_files(folder)
    outputs = encoder(encoder_inputs(), training=False)
    store("encoder_v2", {name: outputs[name].numpy()
                         for name in ("sequence_output", "pooled_output")})

    folder = os.path.join(out, "embedding_width")
    os.makedirs(folder)
    encoder = networks.BertEncoder(
        vocab_size=CONFIG["vocab_size"], hidden_size=CONFIG["hidden_size"],
        num_layers=CONFIG["num_hidden_layers"],
        num_attention_heads=CONFIG["num_attention_heads"],
        intermediate_size=CONFIG["intermediate_size"],
        max_sequence_length=CONFIG["max_position_embeddings"], embedding_width=8)
    encoder(encoder_inputs())
    tf.train.Checkpoint(encoder=encoder).write(os.path.join(folder, "bert_model.ckpt"))
    write_small_files(folder, dict(CONFIG, embedding_size=8))

    folder = os.path.join(out, "no_encoder")
    os.makedirs(folder)
    head = layers.ClassificationHead(inner_dim=CONFIG["hidden_size"], num_classes=2)
    head(tf.zeros([1, 4, CONFIG["hidden_size"]]))
    tf.train.Checkpoint(head=head).write(os.path.join(folder, "bert_model.ckpt"))
    write_small_files(folder)

    np.savez_compressed(os.path.join(out, "model_garden_reference.npz"), **references)
    for name in sorted(references):
        print(name, references[name].shape)


if __name__ == "__main__":
    main()
