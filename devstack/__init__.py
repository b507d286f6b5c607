"""What runs locally for `make run` and the tests (not the product): a real Kafka from the official
jars (kafka.py) and an SMTP sink (smtp_sink.py). The product never imports it; `tocsin run` and
`tocsin kafka` start it (cli/run.py, cli/kafka.py: the command line stands above every room)."""
