"""Collection integrity: cross-store checks and repair, backup and restore."""
