# Fine-tune with Keras `fit`: model directory -> BertPreprocessor in tf.data -> BertClassifier.
# Expects ./minilm (python tools/convert_checkpoint.py --from=huggingface --input=<HF folder>
# --output_dir=minilm) and ./bbc/{train,dev}.jsonl (python tools/prepare_text_folders.py).
import json

import keras
import tensorflow as tf

from bert_tf import BertClassifier, BertEncoder
from bert_tf.tokenization.bert_preprocessor import BertPreprocessor

model_dir = "minilm"


def read_jsonl(path):
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    return [row["text"] for row in rows], [row["label"] for row in rows]


train_texts, train_labels = read_jsonl("bbc/train.jsonl")
dev_texts, dev_labels = read_jsonl("bbc/dev.jsonl")
label_names = sorted(set(train_labels))
preprocessor = BertPreprocessor(f"{model_dir}/vocab.txt", lower_case=True, seq_length=64)


def make_dataset(texts, labels, shuffle):
    label_ids = [label_names.index(label) for label in labels]
    ds = tf.data.Dataset.from_tensor_slices((texts, label_ids))
    if shuffle:
        ds = ds.shuffle(len(texts), seed=0)
    # Tokenize whole batches in-graph: tf.string [B] -> dict of int32 [B, 64].
    ds = ds.batch(16).map(lambda text, label: (preprocessor(text), label))
    return ds.prefetch(tf.data.AUTOTUNE)


classifier = BertClassifier(BertEncoder.from_pretrained(model_dir), num_classes=len(label_names))
classifier.compile(
    optimizer=keras.optimizers.AdamW(learning_rate=1e-4, weight_decay=0.01),
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"])
classifier.fit(make_dataset(train_texts, train_labels, shuffle=True), epochs=2)
loss, accuracy = classifier.evaluate(make_dataset(dev_texts, dev_labels, shuffle=False))
print(f"dev accuracy: {accuracy:.3f}")
