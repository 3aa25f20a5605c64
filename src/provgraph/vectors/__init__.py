"""vectors layer."""
