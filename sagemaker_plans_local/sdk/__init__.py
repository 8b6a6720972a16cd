"""The SageMaker Python SDK layer (v2 and v3): Session, Estimator (v2), activation, CLI and pytest plugin.

Nothing here imports the SDK at import time; each major's code lives in
``v2``/``v3`` and is loaded for the installed major on first use.
"""
