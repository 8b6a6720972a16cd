"""Durable backend state: a root's journal, replayed on open and before each call (docs/durability.md)."""
