"""Communities over the knowledge graph, their reports, and global (map-reduce) search over the reports."""
