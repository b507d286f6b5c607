"""What runs locally for `make run` and the tests (not the product): a real Kafka from the official
jars (kafka.py) and an SMTP sink (smtp_sink.py). The product never imports it, but `tocsin run` and
`tocsin kafka` (app/cli/run.py, app/cli/kafka.py: the exception pyproject.toml's contracts name)."""
