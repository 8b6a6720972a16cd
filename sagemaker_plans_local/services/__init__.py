"""One folder per emulated service: its API handlers and its own state."""
