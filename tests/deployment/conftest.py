"""The deployment of docs/deployment.md on loopback, once per session: a redis-server, the
page's commands (migrate, collectstatic, then ``mcp_serve --workers 2`` exactly as written),
and Debian's nginx with the page's configuration in front of it."""

from __future__ import annotations

import ssl
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.deployment import page
from tests.deployment.nginx import client_context, nginx_binary, self_signed, start_nginx
from tests.http.conftest import redis_url  # noqa: F401 - the session's redis-server
from tests.http.mcphttp_support import REPO_ROOT, ServerProcess, free_port, server_env

SETTINGS = "tests.deployment.deploy_settings"


@dataclass
class Deployment:
    workers: ServerProcess
    nginx: ServerProcess
    where: page.Loopback
    env: dict[str, str]

    @property
    def https_url(self) -> str:
        return f"https://localhost:{self.where.https_port}/mcp"

    def context(self) -> ssl.SSLContext:
        return client_context(self.where.certificate)


def deployment_env(directory: Path, redis: str) -> dict[str, str]:
    """The test settings' environment, then the page's environment block and settings."""
    env = server_env(directory)
    env["DJANGO_SETTINGS_MODULE"] = SETTINGS
    env["BEAMMCP_DEPLOY_REDIS_URL"] = redis
    return env


@pytest.fixture(scope="session")
def deployment(
    redis_url: str,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Deployment]:
    nginx_binary()  # skip or fail before anything starts
    directory = tmp_path_factory.mktemp("deployment")
    static_root = directory / "static"
    certificate, key = self_signed(directory, "localhost")
    env = deployment_env(directory, redis_url)
    env.update(page.environment("localhost", static_root))
    # The page's commands in order: the last one serves, the ones before prepare.
    *setup, _ = page.commands(sys.executable, upstream_port=8000)
    for command in setup:
        done = subprocess.run(
            command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    workers = ServerProcess(
        "mcp_serve", env, directory, command=lambda port: page.commands(sys.executable, port)[-1]
    )
    nginx = None
    try:
        workers.wait_ready()
        http_port = free_port()

        def located(https_port: int) -> page.Loopback:
            return page.Loopback(
                http_port=http_port,
                https_port=https_port,
                upstream_port=workers.port,
                static_root=static_root,
                certificate=certificate,
                key=key,
                log_dir=directory,
            )

        nginx = start_nginx(directory, env, lambda port: page.nginx_config(located(port)))
        where = located(nginx.port)
        yield Deployment(workers, nginx, where, env)
    finally:
        if nginx is not None:
            nginx.stop()
        workers.stop()
