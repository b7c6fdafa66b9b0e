"""What a run shows a person after the numbers: the learning curve as a picture."""

from bert_tf.reporting.learning_curve import LearningCurveError, read_history, write_learning_curve

__all__ = ["LearningCurveError", "read_history", "write_learning_curve"]
