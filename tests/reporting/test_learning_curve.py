"""learning_curve: the PNG is a valid image of the logged values; the logged values read back."""

import struct

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.reporting.learning_curve import LearningCurveError, read_history, write_learning_curve

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
HELD_OUT_RGB = (0xFF, 0x7F, 0x0E)  # matplotlib's second colour: the held-out line


def _history(scale=1.0, evaluate=True):
    history = []
    for step in range(0, 501, 50):
        entry = {"step": step, "train/mlm_accuracy": scale * step / 2000,
                 "train/mlm_loss": 9.0 - step / 100, "train/nsp_accuracy": 0.5}
        if evaluate and step % 100 == 0:
            entry.update({"eval/mlm_accuracy": scale * step / 2500,
                          "eval/mlm_loss": 9.5 - step / 110})
        history.append(entry)
    return history


def _held_out_pixels(path):
    image = tf.io.decode_png(tf.io.read_file(path), channels=3).numpy()
    return int(np.all(image == HELD_OUT_RGB, axis=-1).sum())


def test_writes_a_valid_png_of_the_logged_values(tmp_path):
    path = str(tmp_path / "learning_curve.png")
    assert write_learning_curve(_history(), path, baseline=0.075) == path
    data = open(path, "rb").read()
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1000, 400)  # figsize 10 x 4 inches at 100 dpi
    image = tf.io.decode_png(data).numpy()
    assert image.shape[:2] == (height, width)
    assert image.std() > 0  # not a blank canvas
    assert _held_out_pixels(path) > 0


def test_the_picture_follows_the_data(tmp_path):
    paths = [str(tmp_path / f"{name}.png") for name in ("a", "a_again", "b", "train_only")]
    write_learning_curve(_history(), paths[0])
    write_learning_curve(_history(), paths[1])
    write_learning_curve(_history(scale=1.5), paths[2])
    write_learning_curve(_history(evaluate=False), paths[3])
    contents = [open(p, "rb").read() for p in paths]
    assert contents[0] == contents[1]  # same values, same bytes
    assert contents[0] != contents[2]
    assert _held_out_pixels(paths[3]) == 0  # no held-out values, no held-out line


def test_refuses_a_history_without_masked_lm_values(tmp_path):
    with pytest.raises(LearningCurveError, match="has none of train/mlm_accuracy"):
        write_learning_curve([{"step": 1, "train/nsp_accuracy": 0.5}], str(tmp_path / "x.png"))


def test_read_history_merges_train_and_eval_and_keeps_the_last_value(tmp_path):
    def log(split, step, values):
        writer = tf.summary.create_file_writer(str(tmp_path / split))
        with writer.as_default(step=step):
            for name, value in values.items():
                tf.summary.write(name, tf.constant(value, tf.float32))
        writer.close()

    log("train", 10, {"mlm_accuracy": 0.1, "mlm_loss": 5.0})
    log("train", 20, {"mlm_accuracy": 0.2, "mlm_loss": 4.0})
    log("eval", 20, {"mlm_accuracy": 0.15})
    log("train", 20, {"mlm_accuracy": 0.25})  # a resumed run logs step 20 again
    history = read_history(str(tmp_path))
    assert [entry["step"] for entry in history] == [10, 20]
    assert history[0] == pytest.approx({"step": 10, "train/mlm_accuracy": 0.1,
                                        "train/mlm_loss": 5.0})
    assert history[1] == pytest.approx({"step": 20, "train/mlm_accuracy": 0.25,
                                        "train/mlm_loss": 4.0, "eval/mlm_accuracy": 0.15})
