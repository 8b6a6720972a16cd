"""Domain: plain-Python state of training jobs and warm pools on a virtual clock.

Nothing here knows about boto3, botocore or HTTP.
"""
