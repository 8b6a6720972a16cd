"""The what-if simulator: a workload under several policies, each on a fresh backend (docs/what-if.md)."""
