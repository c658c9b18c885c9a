"""The source repository a built book links to (the GitHub button on every page), or none.

The book's configuration names no repository: where the book is published from is known only
when it is built. :func:`repository_url` takes, in this order, the one given (``recmetrics report
--repository URL``), the repository a GitHub Actions workflow builds (``GITHUB_SERVER_URL`` and
``GITHUB_REPOSITORY``), and the ``origin`` remote of the checkout the package runs from; with none
of them the pages have no repository button (:func:`theme_options`).
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any, Mapping

from ..errors import InputError
from .paths import checkout

_SCP = re.compile(r"^(?:[\w.-]+@)?(?P<host>[\w.-]+):(?P<path>(?!/)[^\s]+)$")   # git@github.com:owner/name.git
_HTTP = re.compile(r"^(?:https?|ssh|git)://(?:[^@/\s]+@)?(?P<host>[\w.-]+)(?::\d+)?/(?P<path>[^\s?#]+)$")


def web_url(remote: str) -> str | None:
    """The web address of a git remote (``https://host/owner/name``; credentials, port and
    ``.git`` dropped), or ``None`` when ``remote`` is not the address of a hosted repository
    (a local path, an empty string).

    >>> web_url("git@github.com:someone/recmetrics.git"), web_url("https://user:token@github.com/a/b.git")
    ('https://github.com/someone/recmetrics', 'https://github.com/a/b')
    >>> web_url("ssh://git@gitlab.example.org:2222/group/sub/proj.git"), web_url("/srv/git/repo.git")
    ('https://gitlab.example.org/group/sub/proj', None)
    """
    remote = (remote or "").strip()
    match = _HTTP.match(remote) or _SCP.match(remote)
    if not match:
        return None
    path = re.sub(r"\.git$", "", match.group("path").strip("/"))
    if "/" not in path:
        return None
    return f"https://{match.group('host')}/{path}"


def origin_url(repo: str | os.PathLike | None) -> str | None:
    """The web address of the ``origin`` remote of the git checkout ``repo`` (``None`` when it is
    not a checkout, has no ``origin`` or git is missing)."""
    if repo is None or not (Path(repo) / ".git").exists():
        return None
    try:
        proc = subprocess.run(["git", "-C", str(repo), "remote", "get-url", "origin"], capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return web_url(proc.stdout) if proc.returncode == 0 else None


def repository_url(given: str | None = None, environ: Mapping[str, str] | None = None,
                   repo: str | os.PathLike | None = None) -> str | None:
    """The repository the book links to: ``given`` (checked: a web address of a repository),
    else GitHub Actions' (``$GITHUB_SERVER_URL/$GITHUB_REPOSITORY``), else the ``origin`` remote of
    ``repo`` (default: the checkout the package runs from, none when it runs installed), else
    ``None``.

    >>> repository_url(environ={"GITHUB_REPOSITORY": "someone/recmetrics"})
    'https://github.com/someone/recmetrics'
    >>> repository_url(environ={}, repo="/no/such/folder") is None
    True
    """
    if given is not None:
        url = web_url(str(given))
        if not url or not re.match(r"^https?://", str(given).strip()):
            raise InputError(f"--repository {given!r}: give the web address of the book's source repository, "
                             f"e.g. https://github.com/OWNER/NAME")
        return url
    environ = os.environ if environ is None else environ
    if environ.get("GITHUB_REPOSITORY"):
        server = (environ.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
        return f"{server}/{environ['GITHUB_REPOSITORY'].strip('/')}"
    return origin_url(checkout() if repo is None else repo)


def theme_options(url: str | None) -> dict[str, Any]:
    """The Sphinx configuration that shows the repository button linking to ``url`` (none: ``{}``,
    and the book's configuration shows no button)."""
    if not url:
        return {}
    return {"html_theme_options": {"repository_url": url, "use_repository_button": True}}
