"""Checks bert_tf's TF Hub exports in `hub.KerasLayer`, as tensorflow.org's tutorial uses them.

"Classify text with BERT" builds: raw text -> `hub.KerasLayer(preprocess)` ->
`hub.KerasLayer(encoder, trainable=True)` -> Dropout -> Dense, compiles it and fits it.
`hub.KerasLayer` runs only on tf_keras (Keras 2), so this runs in a second venv, on exports that
bert_tf wrote (`--head=preprocessor`, `--head=hub_encoder`) beside its own outputs:

    # 1. in the project venv: the exports and bert_tf's outputs on SENTENCES
    .venv/bin/python dev/check_hub_keras_layer.py --write=/tmp/hub_check --model_dir=MODEL_DIR
    # 2. in a venv with tensorflow-hub, tf_keras, tensorflow-text (the Model Garden one:
    #    pip install 'tf-models-official==2.20.*'): the tutorial's model on them
    TF_USE_LEGACY_KERAS=1 /tmp/tfmodels/bin/python dev/check_hub_keras_layer.py
    --check=/tmp/hub_check

MODEL_DIR needs a masked-LM head for the `.mlm` check (e.g. a `run_pretraining` output).
Step 2 prints the largest differences from bert_tf's outputs and the tutorial model's losses.
"""

import argparse
import os
import subprocess
import sys

import numpy as np

SENTENCES = ["this movie was wonderful , i loved it", "a dull and tedious film",
             "the acting was fine but the plot made no sense at all"]
LABELS = [1, 0, 0]


def write(folder, model_dir):
    """Exports both SavedModels with bert_tf's tool and stores bert_tf's outputs beside them."""
    import tensorflow as tf

    import bert_tf

    for head in ("preprocessor", "hub_encoder"):
        subprocess.run([sys.executable, "tools/export_saved_model.py", f"--model_dir={model_dir}",
                        f"--export_dir={folder}/{head}", f"--head={head}"], check=True)
    model = bert_tf.MaskedLM.from_pretrained(model_dir)
    inputs = model.preprocessor(tf.constant(SENTENCES))
    outputs = model.encoder(inputs)
    positions = np.array([[1, 2], [1, 3], [2, 4]], np.int32)
    ids = {name: np.asarray(value) for name, value in inputs.items()}
    logits = model.predict({**ids, "masked_lm_positions": positions}, verbose=0)
    logits = logits["mlm_logits"] if isinstance(logits, dict) else logits
    np.savez(os.path.join(folder, "bert_tf_outputs.npz"), positions=positions,
             mlm_logits=np.asarray(logits), **{k: np.asarray(inputs[k]) for k in inputs},
             sequence_output=np.asarray(outputs["sequence_output"]),
             pooled_output=np.asarray(outputs["pooled_output"]))


def check(folder):
    """The tutorial's model on the exports: outputs against bert_tf's, then compile and fit."""
    import tensorflow as tf
    import tensorflow_hub as hub
    import tensorflow_text  # noqa: F401  (registers the preprocessor's ops)
    import tf_keras

    expected = np.load(os.path.join(folder, "bert_tf_outputs.npz"))
    preprocess = hub.KerasLayer(f"{folder}/preprocessor/1", name="preprocessing")
    encoder = hub.KerasLayer(f"{folder}/hub_encoder/1", trainable=True, name="BERT_encoder")
    inputs = preprocess(tf.constant(SENTENCES))
    width = expected["input_word_ids"].shape[1]
    outputs = encoder({k: v[:, :width] for k, v in inputs.items()})
    mask = expected["input_mask"][..., None]
    print("ids equal:", all(np.array_equal(inputs[k][:, :width], expected[k])
                            for k in ("input_word_ids", "input_mask", "input_type_ids")))
    print("sequence_output max |diff| (real tokens):",
          float(np.max(np.abs((outputs["sequence_output"] - expected["sequence_output"]) * mask))))
    print("pooled_output max |diff|:",
          float(np.max(np.abs(outputs["pooled_output"] - expected["pooled_output"]))))
    mlm = hub.load(f"{folder}/hub_encoder/1").mlm
    logits = mlm({**{k: expected[k] for k in ("input_word_ids", "input_mask", "input_type_ids")},
                  "masked_lm_positions": expected["positions"]})["mlm_logits"]
    print(".mlm mlm_logits max |diff|:", float(np.max(np.abs(logits - expected["mlm_logits"]))))

    # The tutorial's classifier, as written there.
    text_input = tf_keras.layers.Input(shape=(), dtype=tf.string, name="text")
    net = encoder(preprocess(text_input))["pooled_output"]
    net = tf_keras.layers.Dropout(0.1)(net)
    net = tf_keras.layers.Dense(1, activation=None, name="classifier")(net)
    classifier = tf_keras.Model(text_input, net)
    classifier.compile(optimizer=tf_keras.optimizers.Adam(1e-3),
                       loss=tf_keras.losses.BinaryCrossentropy(from_logits=True),
                       metrics=["binary_accuracy"])
    before = [w.numpy().copy() for w in encoder.trainable_weights]
    history = classifier.fit(tf.constant(SENTENCES * 4), tf.constant(LABELS * 4), epochs=3,
                             batch_size=4, verbose=0)
    moved = sum(not np.array_equal(b, w.numpy()) for b, w in zip(before, encoder.trainable_weights))
    print("fit losses:", [round(x, 4) for x in history.history["loss"]],
          f"encoder weights moved: {moved}/{len(before)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", help="folder to write the exports and outputs to")
    parser.add_argument("--model_dir", help="with --write: the model directory to export")
    parser.add_argument("--check", help="folder written by --write")
    args = parser.parse_args()
    if args.write:
        write(args.write, args.model_dir)
    if args.check:
        check(args.check)


if __name__ == "__main__":
    main()
