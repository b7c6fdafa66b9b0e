"""The Beam `ModelHandler` of `tools/predict.py`: a `Predictor` per worker, windows of lines.

`RunInference` calls `load_model` once per worker process (Beam keeps the model in a shared
handle across bundles and threads), the only place the model is built on every runner, then
`run_inference` on batches that `BatchElements` makes. A batch here is a window of
`WINDOW_BATCHES` model batches: the predictor sorts its lines by length and runs them
`batch_size` at a time, so lines close in length share a batch (google-research sorts nothing;
keras-hub neither; Beam's own length bucketing needs a streaming pipeline's
`max_batch_duration_secs`).

Example:
>>> lines | RunInference(TaskModelHandler(PredictSettings(model="sst2/")))  # doctest: +SKIP
"""

from bert_tf import errors
from bert_tf.corpus_inference import predictor, progress
from bert_tf.data.document_reader import InputError

base = errors.require_extra("apache_beam.ml.inference.base", extra="beam")

# Model batches per RunInference batch: the window sorted by length.
WINDOW_BATCHES = 8
METRICS_NAMESPACE = "bert_tf.predict"


class TaskModelHandler(base.ModelHandler):
    """`readers.Line` in, `predictor.Prediction` out, with the model of `settings`.

    With `progress_folder`, each worker counts its predicted lines there (`progress`).
    """

    def __init__(self, settings, progress_folder=None):
        window = settings.batch_size * WINDOW_BATCHES
        super().__init__(min_batch_size=window, max_batch_size=window)
        self._settings = settings
        self._progress_folder = progress_folder
        self._progress = None  # made in the worker: a lock does not travel

    def load_model(self):
        """The worker's `Predictor`: the one place the model is built (the launcher only checks
        `predictor.check_settings`).

        Raises:
          InputError: the model cannot be built (damaged checkpoint, `max_seq_length` above
            its positions, no vocab), with that error's one line: the worker error that
            `beam_runner.run` hands back as one line on every runner.
        """
        try:
            return predictor.Predictor(self._settings)
        except (errors.UserError, FileNotFoundError) as error:
            raise InputError(str(error)) from None

    def run_inference(self, batch, model, inference_args=None):
        del inference_args  # none: every setting is the handler's
        predictions = model.predict(batch)
        if self._progress_folder:
            if self._progress is None:
                self._progress = progress.ProgressFile(self._progress_folder)
            self._progress.add(len(batch))
        return predictions

    def get_num_bytes(self, batch):
        return sum(len(line.text) for line in batch)

    def get_metrics_namespace(self):
        return METRICS_NAMESPACE
