"""The SDK layer for SageMaker Python SDK v2 (``sagemaker.session``, ``Estimator``, ``@remote``)."""
