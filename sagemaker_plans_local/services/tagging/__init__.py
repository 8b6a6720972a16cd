"""The Resource Groups Tagging API over the resources the backend holds."""
