"""What every group uses: ids, event time in milliseconds, JSON bounds, the strict model base, the
retry schedule, token-bucket rate limits and a request's client address."""
