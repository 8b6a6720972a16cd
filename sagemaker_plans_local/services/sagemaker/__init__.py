"""SageMaker: training jobs, warm pools, training plans and capacity, HyperPod clusters, tags."""
