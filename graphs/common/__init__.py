"""graphs/common package."""
