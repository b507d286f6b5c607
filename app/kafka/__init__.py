"""Kafka plumbing: the faust.App (app.py), topic declarations (topics.py), the record format
(records.py), the partitioner (partitioner.py) and the configuration changes topic with its cache
(config_changes.py)."""
