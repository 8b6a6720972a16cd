"""Shared by every service: the virtual clock, waits, settings, ARNs, domain errors, the record store."""
