# Fine-tune on raw strings: load any checkpoint folder, fit, predict, save, export.
# ./all-MiniLM-L6-v2 is a Hugging Face folder (config.json, model.safetensors, vocab.txt);
# a bert_tf model directory or a google-research checkpoint folder loads the same way.
import keras

import bert_tf

train_texts = ["What an amazing movie!", "A total waste of time.", "Loved every minute.",
               "Dull and far too long.", "A wonderful, moving story.", "I want my money back."]
train_labels = [1, 0, 1, 0, 1, 0]

classifier = bert_tf.TextClassifier.from_pretrained("all-MiniLM-L6-v2", num_classes=2)
classifier.fit(train_texts, train_labels, batch_size=32, epochs=3)
logits = classifier.predict(["What a great film!", "Dull."])  # [2, num_classes]

classifier.save("clf.keras")                  # raw strings in, the same numbers out
reloaded = keras.models.load_model("clf.keras")
classifier.save_model_dir("clf")              # for run_* --model_dir and tools/
classifier.export("serving")                  # TF Serving SavedModel on raw text: serving/1
