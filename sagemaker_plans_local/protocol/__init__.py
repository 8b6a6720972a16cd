"""One protocol layer for every service.

The botocore models, validation, the awsJson/query/rest-xml wire formats,
AWS errors and the base service.
"""
