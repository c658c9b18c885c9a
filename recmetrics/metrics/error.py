"""Placeholder: filled by the error metrics work."""
