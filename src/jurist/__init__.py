"""jurist: an LLM-as-a-judge evaluation harness."""

__version__ = "0.1.0"
