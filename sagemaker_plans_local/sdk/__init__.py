"""The SageMaker Python SDK (v2) layer: Session, Estimator, activation, CLI and pytest plugin."""
