"""A PostgreSQL server of one test's own, to stop and start again while a server uses it: the
suite's shared one (``tests/postgres.sh``) serves every other test at the same time.

Debian's binaries (``tests/postgres.sh`` installs them), a cluster made by ``initdb`` in a
directory under /var/tmp (owned by the ``postgres`` user when run as root: the server refuses
to run as root), listening on 127.0.0.1 only, on a free port, trusting loopback connections
(a test's cluster, gone with its directory). Without the binaries the test skips, and in CI
(``CI=true``) it fails, since CI installs them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.http.mcphttp_support import free_port


def _bindir() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found:
        reason = "needs Debian's postgresql (tests/postgres.sh installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must run it", pytrace=False)
        pytest.skip(reason)
    return found[-1].parent


class PostgresCluster:
    """``initdb``, then ``start``/``stop`` as often as the test likes; ``remove`` at the end."""

    def __init__(self) -> None:
        self.bindir = _bindir()
        self.data = Path(tempfile.mkdtemp(prefix="beammcp-pg-", dir="/var/tmp"))
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/postgres"
        if os.geteuid() == 0:
            shutil.chown(self.data, "postgres")
        self._as_owner(
            "initdb", "-D", str(self.data), "-U", "postgres", "-E", "UTF8",
            "--locale=C.UTF-8", "--auth=trust",
        )  # fmt: skip
        settings = f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
        settings += f"unix_socket_directories = '{self.data}'\n"
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(settings)

    def start(self) -> PostgresCluster:
        log = str(self.data / "server.log")
        self._as_owner("pg_ctl", "start", "-D", str(self.data), "-l", log, "-w", "-t", "60")
        return self

    def stop(self) -> None:
        """A fast shutdown: every connection is ended at once, as when a server goes down."""
        self._as_owner("pg_ctl", "stop", "-D", str(self.data), "-m", "fast", "-w")

    def remove(self) -> None:
        subprocess.run(
            [str(self.bindir / "pg_ctl"), "stop", "-D", str(self.data), "-m", "immediate"],
            user="postgres" if os.geteuid() == 0 else None,
            cwd=self.data,
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.data, ignore_errors=True)

    def _as_owner(self, program: str, *arguments: str) -> None:
        done = subprocess.run(
            [str(self.bindir / program), *arguments],
            user="postgres" if os.geteuid() == 0 else None,
            cwd=self.data,  # one the owner may enter
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
