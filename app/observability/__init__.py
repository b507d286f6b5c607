"""Observability: metrics (metrics.py), structured log lines (logfmt.py, logthrottle.py), health checks
(health.py)."""
