"""Faust agents. Importing this package registers every agent on ``app.faust_app.app``."""
