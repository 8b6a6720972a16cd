"""The SDK layer for SageMaker Python SDK v3 (sagemaker-core, sagemaker-train)."""
