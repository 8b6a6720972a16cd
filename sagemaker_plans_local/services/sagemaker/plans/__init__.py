"""Training plans, offerings, reserved capacity and the capacity inventory. Plain Python, no boto3."""
