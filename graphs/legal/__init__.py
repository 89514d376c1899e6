"""graphs/legal package."""
