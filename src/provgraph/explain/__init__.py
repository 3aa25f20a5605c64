"""explain layer."""
