"""The model endpoint as a user names it: safe to print (credentials in the URL hidden), and
reachable or not (checked once, before a run spends anything).

``http://user:KEY@host/v1`` is a common way to pass a key through a proxy; the key must not
reach ``config.json``, error messages or stderr.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit, urlunsplit

__all__ = ["HIDDEN", "redact_url", "unreachable", "url_secrets"]

HIDDEN = "***"
DEFAULT_ENDPOINT = "https://api.openai.com/v1"


def redact_url(url: str | None) -> str | None:
    """``url`` with the user name and password of its authority replaced by ``***``."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname
        port = parts.port
    except ValueError:
        return url if "@" not in url else HIDDEN
    if "@" not in parts.netloc:
        return url
    netloc = f"{HIDDEN}@{host or ''}" + (f":{port}" if port is not None else "")
    if host and ":" in host:  # an IPv6 literal keeps its brackets
        netloc = f"{HIDDEN}@[{host}]" + (f":{port}" if port is not None else "")
    return urlunsplit(parts._replace(netloc=netloc))


def url_secrets(url: str | None) -> list[str]:
    """The credentials written into ``url`` (``user:KEY@``), to be hidden wherever they are
    echoed (a server may quote them back in an error)."""
    if not url or "@" not in url:
        return []
    try:
        parts = urlsplit(url)
        found = [parts.password, parts.username]
    except ValueError:
        return []
    return [secret for secret in found if secret and len(secret) >= 4]


def unreachable(url: str | None, *, timeout_s: float = 5.0) -> str | None:
    """Why nothing can be sent to ``url`` (a refused connection, an unknown host), or None.

    Only failures that no retry cures are reported; a slow or silent server is left to the
    client's timeouts and retries."""
    target = url or DEFAULT_ENDPOINT
    try:
        parts = urlsplit(target)
        host = parts.hostname
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as error:
        return f"the endpoint URL {redact_url(target)} is not valid: {error}"
    if not host:
        return f"the endpoint URL {redact_url(target)} names no host"
    label = f"{host}:{port}"
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except ConnectionRefusedError:
        return f"{label} refused the connection (is the model server running?)"
    except socket.gaierror as error:
        return f"cannot resolve host {host} ({error.strerror or error})"
    except OSError:
        return None  # a timeout or a network hiccup: the client's retries decide
