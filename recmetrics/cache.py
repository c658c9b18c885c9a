"""Where recmetrics keeps cached artefacts (runs, vendored JavaScript)."""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir(kind: str, env_var: str) -> Path:
    """``$env_var`` if set, else ``$XDG_CACHE_HOME/recmetrics/<kind>``, else ``~/.cache/recmetrics/<kind>``."""
    env = os.environ.get(env_var)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "recmetrics" / kind
