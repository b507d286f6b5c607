"""Observability: metrics (metrics.py), structured log lines (logs.py, logthrottle.py), tracing
(tracing.py), health checks (health.py)."""
