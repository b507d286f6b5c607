"""Tocsin: incident-alerting event engine."""
