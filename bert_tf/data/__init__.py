"""Pretraining text and data: readers both sides share, `records/` (offline), `pipelines/` (online).

The text readers here (`document_reader`, `sentence_splitter`) serve both sides; `corpus/` is
the shipped King James Bible corpus. `records/` makes pretraining TFRecords and vocabularies
offline on Apache Beam; `pipelines/` feeds training through tf.data, from those records or
straight from text. Neither side imports the other.
"""
