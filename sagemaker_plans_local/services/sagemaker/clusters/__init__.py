"""HyperPod clusters, instance groups and nodes. Plain Python, no boto3."""
