"""Placeholder: filled by the classification metrics work."""
