"""Placeholder: filled by the diversity metrics work."""
