"""ipywidget explorers (no analysis logic inside: they call the library)."""
