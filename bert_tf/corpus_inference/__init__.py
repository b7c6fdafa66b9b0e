"""Running a Keras task model over a whole corpus on Apache Beam (`tools/predict.py`)."""
