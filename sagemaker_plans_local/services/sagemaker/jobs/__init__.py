"""Training jobs: records, rules, simulated phases, local runs and the executor port. Plain Python, no boto3."""
