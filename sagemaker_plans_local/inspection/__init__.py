"""What a backend holds, read back through its API: costs, a timeline, the inspection CLI (docs/cli.md)."""
