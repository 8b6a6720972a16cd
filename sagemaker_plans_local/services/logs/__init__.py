"""CloudWatch Logs: the JSON API and the log streams."""
