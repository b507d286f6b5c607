"""Workflows and incidents: workflow definitions and the mode rule, their filters and sites, the
topic as the worker sees it, the workflow stage of the per-event path, and the incidents of episodes."""
