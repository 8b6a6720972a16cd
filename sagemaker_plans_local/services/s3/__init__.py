"""S3: the rest-xml API and the object store under the backend's root."""
