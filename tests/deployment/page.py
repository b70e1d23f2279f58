"""docs/deployment.md as the tests read it: its fenced blocks, found by their first line, with
the placeholders the page lists under "What the test substitutes" replaced, and nothing else.

The tests run what this module returns, so a block edited on the page is a change to what is
tested; a block that is renamed or removed fails here, naming it.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from tests.support import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "deployment.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)

# The placeholders of the page and the documented values they stand for.
PUBLIC_HOST = "mcp.example.com"
UPSTREAM = "127.0.0.1:8000"
STATIC_ROOT = "/srv/mcp/static"
REDIS = "redis://127.0.0.1:6379"
NGINX_LOGS = "/var/log/nginx/"


def block(language: str, label: str) -> str:
    """The one fenced ``language`` block of the page whose first line starts with ``label``."""
    found = [
        body
        for lang, body in FENCE.findall(PAGE.read_text(encoding="utf-8"))
        if lang == language and body.splitlines()[0].startswith(label)
    ]
    assert len(found) == 1, f"docs/deployment.md has {len(found)} {language} blocks '{label}'"
    return found[0]


@dataclass(frozen=True)
class Loopback:
    """Where the test puts what the page names: ports, directories, the certificate."""

    http_port: int
    https_port: int
    upstream_port: int
    static_root: Path
    certificate: Path
    key: Path
    log_dir: Path
    host: str = "localhost"


def nginx_config(where: Loopback) -> str:
    """The page's nginx block with the placeholders replaced."""
    text = block("nginx", "# /etc/nginx/conf.d/beammcp.conf")
    text = text.replace(PUBLIC_HOST, where.host)
    text = text.replace(UPSTREAM, f"127.0.0.1:{where.upstream_port}")
    text = text.replace(STATIC_ROOT, str(where.static_root))
    text = text.replace(NGINX_LOGS, f"{where.log_dir}/")
    text = re.sub(r"listen 80\b", f"listen 127.0.0.1:{where.http_port}", text)
    text = re.sub(r"listen 443\b", f"listen 127.0.0.1:{where.https_port}", text)
    text = re.sub(r"ssl_certificate \S+;", f"ssl_certificate {where.certificate};", text)
    text = re.sub(r"ssl_certificate_key \S+;", f"ssl_certificate_key {where.key};", text)
    return text


def settings_block(redis_url: str) -> str:
    """The page's production settings, on the test's Redis."""
    return block("python", "# settings.py: the production additions").replace(
        REDIS, redis_url.rstrip("/").rsplit("/", 1)[0]
    )


def environment(host: str, static_root: Path) -> dict[str, str]:
    """The page's environment lines as a mapping, for ``host`` and ``static_root``."""
    values = {}
    for line in block("sh", "# environment").splitlines()[1:]:
        if line.strip():
            name, _, value = line.partition("=")
            values[name] = value.replace(PUBLIC_HOST, host).replace(STATIC_ROOT, str(static_root))
    return values


def commands(python: str, upstream_port: int) -> list[list[str]]:
    """The page's deploy commands, ``python`` standing for the virtualenv's interpreter."""
    result = []
    for line in block("sh", "# deploy").splitlines()[1:]:
        if not line.strip():
            continue
        words = shlex.split(line.replace("--port 8000", f"--port {upstream_port}"))
        assert words[0] == "python", line
        result.append([python, *words[1:]])
    return result


def nginx_directive(name: str) -> list[str]:
    """Every value of one directive in the page's nginx block, as written."""
    text = block("nginx", "# /etc/nginx/conf.d/beammcp.conf")
    return [match.strip() for match in re.findall(rf"^\s*{name}\s+([^;]*);", text, re.MULTILINE)]
