"""The HTTP server: every emulated service on one port, plus a control API (docs/server.md)."""
