"""Pure rules (no I/O library, no other room), in groups: iam/ (identity and IAM), events/ (events
and control), workflows/ (workflows and incidents), delivery/ (delivery of actions), shared/ (what
every group uses); pipeline.py runs an event through control and the workflow stage."""
