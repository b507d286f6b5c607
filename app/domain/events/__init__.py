"""Events and control: the publish request (its notification, input limits and the one check of a
raw request) and event control (BYPASS, METRIC, SET) that decides each event."""
