"""Dev-only: regenerates the keras-hub preset fixtures of tests/checkpoints.

Runs with keras-hub 0.32 (and the TensorFlow it needs for BERT's tokenizer), never needed by
the package or `make test`. Install them in a venv of their own:

  python3 -m venv /tmp/khvenv
  /tmp/khvenv/bin/pip install 'keras-hub==0.32.*' 'tensorflow==2.21.*' \
      'tensorflow-text==2.21.*'
  /tmp/khvenv/bin/python dev/make_keras_hub_fixtures.py \
      --output_dir=tests/testdata/keras_hub

Writes, each with keras-hub's own `save_to_preset` (hidden 16, 2 layers, 2 heads, the 63-token
uncased vocab of tests/testdata/hf_tasks):
  backbone/     a `BertBackbone` preset with its `BertTokenizer` (config.json, metadata.json,
                model.weights.h5, tokenizer.json, assets/tokenizer/vocabulary.txt);
  classifier/   a 3-class `BertTextClassifier` with its preprocessor (sequence_length 24),
                fitted a few steps so that neither the head nor the backbone is at its
                initialisation (+ task.json, task.weights.h5, preprocessor.json);
  masked_lm/    a `BertMaskedLM`, cased tokenizer (`lowercase` false), random output bias;
  roberta/      a tiny `RobertaBackbone` preset (weights only): another architecture, refused.
`reference.npz` holds, per fixture `<name>/`, the inputs and keras-hub's outputs: the
backbone's `sequence_output` / `pooled_output` on token ids, the classifier's logits on
raw strings (with the ids its preprocessor made), the masked LM's logits at `mask_positions`.
`reference.json` holds the texts and the classifier's label count.

With `--check_export=DIR --name=NAME` it instead loads a preset bert_tf wrote
(`convert_checkpoint --to=keras_hub`) with keras-hub's `from_preset` and prints the max abs
difference of its outputs to fixture NAME's references (backbone, classifier or masked_lm).
"""

import argparse
import json
import os
import shutil

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import keras_hub  # noqa: E402
import numpy as np  # noqa: E402

_parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_parser.add_argument("--output_dir", default="tests/testdata/keras_hub",
                     help="Where the fixtures go.")
_parser.add_argument("--check_export", default=None, help="A bert_tf export to check instead.")
_parser.add_argument("--name", default=None, help="The fixture --check_export compares to.")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB = os.path.join(REPO, "tests", "testdata", "hf_tasks", "bert_model_pt", "vocab.txt")
TEXTS = ["The film was great.", "An awful movie, and a bad song!",
         "He read the book where the river lives.", "Light and dark, day and night."]
LABELS = [2, 0, 1, 1]
NUM_CLASSES = 3
SEQUENCE_LENGTH = 24
TINY = {"num_layers": 2, "num_heads": 2, "hidden_dim": 16, "intermediate_dim": 32,
        "max_sequence_length": 32, "dropout": 0.1}


def _vocabulary():
    with open(VOCAB, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def _backbone_inputs(preprocessor):
    """Token ids of TEXTS as the preprocessor packs them, in the backbone's input names."""
    features = preprocessor(TEXTS)
    if isinstance(features, tuple):
        features = features[0]
    return {name: np.asarray(features[name]) for name in
            ("token_ids", "segment_ids", "padding_mask")}


def _save(model, path):
    if os.path.exists(path):
        shutil.rmtree(path)
    model.save_to_preset(path)


def make_backbone(output_dir, references):
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=_vocabulary(), lowercase=True)
    preprocessor = keras_hub.models.BertTextClassifierPreprocessor(
        tokenizer, sequence_length=SEQUENCE_LENGTH)
    backbone = keras_hub.models.BertBackbone(vocabulary_size=tokenizer.vocabulary_size(), **TINY)
    inputs = _backbone_inputs(preprocessor)
    outputs = backbone.predict(inputs, verbose=0)
    path = os.path.join(output_dir, "backbone")
    _save(backbone, path)
    tokenizer.save_to_preset(path)
    for name, value in {**inputs, **outputs}.items():
        references[f"backbone/{name}"] = np.asarray(value)


def make_classifier(output_dir, references):
    keras.utils.set_random_seed(2)
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=_vocabulary(), lowercase=True)
    preprocessor = keras_hub.models.BertTextClassifierPreprocessor(
        tokenizer, sequence_length=SEQUENCE_LENGTH)
    backbone = keras_hub.models.BertBackbone(vocabulary_size=tokenizer.vocabulary_size(), **TINY)
    classifier = keras_hub.models.BertTextClassifier(backbone, NUM_CLASSES,
                                                     preprocessor=preprocessor)
    classifier.compile(optimizer=keras.optimizers.Adam(0.05))
    classifier.fit(x=TEXTS, y=np.array(LABELS), batch_size=4, epochs=5, verbose=0)
    logits = classifier.predict(TEXTS, verbose=0)
    path = os.path.join(output_dir, "classifier")
    _save(classifier, path)
    references["classifier/logits"] = np.asarray(logits)
    for name, value in _backbone_inputs(preprocessor).items():
        references[f"classifier/{name}"] = value


def make_masked_lm(output_dir, references):
    keras.utils.set_random_seed(3)
    tokenizer = keras_hub.models.BertTokenizer(vocabulary=_vocabulary(), lowercase=False)
    preprocessor = keras_hub.models.BertMaskedLMPreprocessor(
        tokenizer, sequence_length=SEQUENCE_LENGTH, mask_selection_length=4)
    backbone = keras_hub.models.BertBackbone(vocabulary_size=tokenizer.vocabulary_size(), **TINY)
    masked_lm = keras_hub.models.BertMaskedLM(backbone, preprocessor=preprocessor)
    head = masked_lm.masked_lm_head
    head._bias.assign(np.random.default_rng(3).normal(0, 0.5, head._bias.shape))
    packed = keras_hub.models.BertTextClassifierPreprocessor(
        tokenizer, sequence_length=SEQUENCE_LENGTH)
    inputs = _backbone_inputs(packed)
    inputs["mask_positions"] = np.array([[1, 2, 3, 4]] * len(TEXTS), np.int32)
    logits = masked_lm(inputs, training=False)  # predict() would run the preprocessor
    path = os.path.join(output_dir, "masked_lm")
    _save(masked_lm, path)
    references["masked_lm/logits"] = np.asarray(logits)
    for name, value in inputs.items():
        references[f"masked_lm/{name}"] = value


def make_roberta(output_dir):
    backbone = keras_hub.models.RobertaBackbone(vocabulary_size=50, **TINY)
    _save(backbone, os.path.join(output_dir, "roberta"))


def _max_difference(a, b):
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def check_export(path, name, output_dir):
    """Loads bert_tf's export with keras-hub; prints its outputs' distance to fixture `name`."""
    references = np.load(os.path.join(output_dir, "reference.npz"))
    inputs = {key: references[f"{name}/{key}"]
              for key in ("token_ids", "segment_ids", "padding_mask")}
    if name == "classifier":
        model = keras_hub.models.BertTextClassifier.from_preset(path)
        print("classifier logits on raw strings, max abs difference:",
              _max_difference(model.predict(TEXTS, verbose=0), references[f"{name}/logits"]))
        model = keras_hub.models.BertTextClassifier.from_preset(path, preprocessor=None)
        print("classifier logits on ids, max abs difference:",
              _max_difference(model.predict(inputs, verbose=0), references[f"{name}/logits"]))
    elif name == "masked_lm":
        model = keras_hub.models.BertMaskedLM.from_preset(path, preprocessor=None)
        inputs["mask_positions"] = references[f"{name}/mask_positions"]
        print("masked LM logits, max abs difference:",
              _max_difference(model.predict(inputs, verbose=0), references[f"{name}/logits"]))
    backbone = keras_hub.models.BertBackbone.from_preset(path)
    outputs = backbone.predict(inputs if name != "masked_lm" else {
        key: value for key, value in inputs.items() if key != "mask_positions"}, verbose=0)
    if name == "backbone":
        for key in ("sequence_output", "pooled_output"):
            print(f"backbone {key}, max abs difference:",
                  _max_difference(outputs[key], references[f"{name}/{key}"]))
    tokenizer = keras_hub.models.BertTokenizer.from_preset(path)
    print("tokenizer:", tokenizer.vocabulary_size(), "tokens, lowercase", tokenizer.lowercase)


def main():
    args = _parser.parse_args()
    if args.check_export:
        check_export(args.check_export, args.name, args.output_dir)
        return
    keras.utils.set_random_seed(1)
    os.makedirs(args.output_dir, exist_ok=True)
    references = {}
    make_backbone(args.output_dir, references)
    make_classifier(args.output_dir, references)
    make_masked_lm(args.output_dir, references)
    make_roberta(args.output_dir)
    np.savez(os.path.join(args.output_dir, "reference.npz"), **references)
    with open(os.path.join(args.output_dir, "reference.json"), "w", encoding="utf-8") as f:
        json.dump({"texts": TEXTS, "num_classes": NUM_CLASSES,
                   "sequence_length": SEQUENCE_LENGTH}, f, indent=2)
        f.write("\n")
    for key, value in sorted(references.items()):
        print(key, value.shape, value.dtype)


if __name__ == "__main__":
    main()
