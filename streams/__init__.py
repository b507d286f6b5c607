"""Faust agents. Importing this package registers every agent on ``app.kafka.app.app``."""
