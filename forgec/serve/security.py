"""Who may reach what on `forgec serve` (docs/security.md, "forgec serve"): the evaluation token and the Host/Origin policy.

The agent under training is the adversary here: its tool calls and, in many
harnesses, its code run beside the server. The score and the gold state must be
out of its reach, so the evaluation channel is closed by default: a token is
always required, generated at start when none is given (printed once on stderr,
or written to `--eval-token-file` with mode 0600 for a harness to read), and the
same Host/Origin rules the MCP SDK applies to `/mcp` cover `/forgec` too.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
import stat
from pathlib import Path

from mcp.server.transport_security import TransportSecuritySettings

TOKEN_ENV = "FORGEC_SERVE_EVAL_TOKEN"
DEFAULT_BODY_LIMIT = 4 * 1024 * 1024  # bytes, every route (a 32k-token conversation is ~150 kB)
_LOOPBACK_NAMES = ("localhost",)


class TokenError(Exception):
    """A token source that cannot be used (message says why)."""


def is_loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    return host in ("0.0.0.0", "::", "[::]", "")


def resolve_token(given: str | None, env: str | None, path: Path | None) -> tuple[str, str]:
    """The evaluation token and where it came from: --eval-token, $FORGEC_SERVE_EVAL_TOKEN, the token file (read,
    or created with a new token), else a new one (the caller prints it once)."""
    for tok, where in ((given, "--eval-token"), (env, f"${TOKEN_ENV}")):
        if tok is not None:
            tok = tok.strip()
            if len(tok) < 16:
                raise TokenError(f"{where} must be at least 16 characters (a guessable token opens the score to the agent)")
            return tok, where
    if path is not None:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            return _read_token_file(path), f"--eval-token-file {path}"
        except OSError as e:
            raise TokenError(f"cannot create the token file {path}: {e.strerror or e}") from None
        tok = secrets.token_urlsafe(32)
        with os.fdopen(fd, "w") as f:
            f.write(tok + "\n")
        return tok, f"new, written to {path}"
    return secrets.token_urlsafe(32), "new"


def _read_token_file(path: Path) -> str:
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise TokenError(f"the token file {path} is not a regular file")
        if st.st_size > 4096:
            raise TokenError(f"the token file {path} is over 4 kB; it should hold one token")
        if st.st_mode & 0o077:
            raise TokenError(f"the token file {path} is readable by other users (mode {stat.S_IMODE(st.st_mode):o}); "
                             f"chmod 600 it")
        tok = path.read_text(encoding="utf-8").strip()
    except OSError as e:
        raise TokenError(f"cannot read the token file {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise TokenError(f"the token file {path} is not UTF-8 text") from None
    if len(tok) < 16 or any(c.isspace() for c in tok):
        raise TokenError(f"the token file {path} must hold one token of at least 16 characters and no spaces")
    return tok


def transport_security(host: str, allowed_hosts: list[str]) -> TransportSecuritySettings:
    """One Host/Origin policy for `/mcp` and `/forgec`: loopback names always; the bound host (with any port) when it
    is a name or an address; this machine's name for a wildcard bind; plus `--allowed-host` values."""
    hosts = ["127.0.0.1", "localhost", "[::1]"]
    if is_wildcard(host):
        hosts.append(socket.gethostname())
    elif not is_loopback(host):
        hosts.append(f"[{host}]" if ":" in host else host)
    hosts += [h for h in allowed_hosts if h]
    allowed, origins = [], []
    for h in dict.fromkeys(hosts):
        allowed += [h, f"{h}:*"]
        origins += [f"http://{h}", f"http://{h}:*", f"https://{h}", f"https://{h}:*"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=allowed, allowed_origins=origins)


def exposure_warning(host: str) -> str | None:
    """What to say when the server listens beyond this machine (plain HTTP: the token and the traffic travel in clear)."""
    if is_loopback(host):
        return None
    return (f"listening on {host}, beyond this machine, over plain HTTP: the evaluation token and every tool call "
            "travel unencrypted; put a TLS proxy in front, or bind 127.0.0.1 and tunnel (ssh -L)")
