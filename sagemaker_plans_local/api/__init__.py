"""API layer: model-driven validation, AWS errors, wire (de)serialization."""
