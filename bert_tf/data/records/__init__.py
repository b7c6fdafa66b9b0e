"""Offline data making, on Apache Beam: pretraining TFRecords and WordPiece vocabularies."""
