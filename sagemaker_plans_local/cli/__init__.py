"""The command line: serve, reset, run, and the inspection commands (docs/cli.md)."""
