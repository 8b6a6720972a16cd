"""Transports: how requests reach the API layer (today: a botocore event hook)."""
