"""`pretraining_runner`: each input pipeline is built once per run (resume: tests/integration)."""

from bert_tf.training import pretraining_runner
from bert_tf.training.options import PretrainingOptions
from tests.integration.test_run_pretraining import PREDICTIONS, SEQ, write_config, write_records


def test_checked_pipelines_are_the_ones_read_and_a_resume_builds_its_skipping_one(tmp_path,
                                                                                 monkeypatch):
    built = []

    def counted(input_file, **kwargs):
        built.append((input_file, kwargs["is_training"], kwargs["skip_batches"]))
        return records(input_file, **kwargs)

    records = pretraining_runner.pretraining_dataset
    monkeypatch.setattr(pretraining_runner, "pretraining_dataset", counted)
    train = write_records(tmp_path / "train.tfrecord")
    held_out = write_records(tmp_path / "held_out.tfrecord", seed=1)
    options = dict(bert_config_file=write_config(tmp_path / "bert_config.json"), input_file=train,
                   eval_input_file=held_out, max_seq_length=SEQ,
                   max_predictions_per_seq=PREDICTIONS, output_dir=str(tmp_path / "run"),
                   train_batch_size=8, eval_batch_size=8, num_warmup_steps=1, steps_per_loop=2,
                   save_checkpoints_steps=2, eval_every_steps=2, max_eval_steps=2)

    result = pretraining_runner.run_pretraining(PretrainingOptions(num_train_steps=4, **options))
    assert result["step"] == 4
    # Checked before the model is built, then trained on, evaluated three times, summarized.
    assert sorted(built) == [(held_out, False, 0), (train, True, 0)]

    built.clear()
    pretraining_runner.run_pretraining(PretrainingOptions(num_train_steps=6, **options))
    assert sorted(built) == [(held_out, False, 0), (train, True, 0), (train, True, 4)]
