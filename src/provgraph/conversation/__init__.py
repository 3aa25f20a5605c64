"""Conversations: turns whose traces link to the turn before, questions rewritten with the history."""
