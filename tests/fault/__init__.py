"""Fault injection: kill -9, full disk, damaged files (`pytest -m fault`)."""
