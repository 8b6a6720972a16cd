"""IAM and STS: the query API for roles, caller identity and policy simulation."""
