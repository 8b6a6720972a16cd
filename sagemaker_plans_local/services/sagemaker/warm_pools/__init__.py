"""Managed warm pools: keep-alive, matching and reuse. Plain Python, no boto3."""
