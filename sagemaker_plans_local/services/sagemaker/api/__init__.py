"""SageMaker's API handlers: request members to domain calls, domain records to output shapes."""
