"""librarian layer."""
