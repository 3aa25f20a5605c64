"""provenance layer."""
