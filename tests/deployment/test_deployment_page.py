"""docs/deployment.md against the code it configures: the nginx limits match the package's
settings, the logging section names every logger the package uses, and the kept-alive
connections nginx's upstream pool makes keep every head bound."""

from __future__ import annotations

import contextlib
import logging
import logging.config
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from beammcp_django.conf import DEFAULTS
from tests.deployment import page
from tests.http.mcphttp_support import (
    MAX_BODY,
    ServerProcess,
    Wire,
    http_request,
    message,
    server_env,
    start_server,
)

PACKAGE = Path(__file__).resolve().parents[2] / "beammcp_django"


def seconds(value: str) -> float:
    match = re.fullmatch(r"(\d+)(s?)", value)
    assert match, value
    return float(match.group(1))


def test_the_read_timeout_outlasts_the_longest_call_and_stream():
    # The MCP location's (the first); the health probe's own is short on purpose.
    read_timeout = page.nginx_directive("proxy_read_timeout")[0]
    longest = max(DEFAULTS["SUBSCRIPTION_MAX_SECONDS"], DEFAULTS["CALL_TIMEOUT_SECONDS"])
    assert seconds(read_timeout) > longest


def test_the_body_and_head_limits_are_the_packages():
    (body,) = page.nginx_directive("client_max_body_size")
    assert body == "1m" and MAX_BODY == 1 << 20
    (buffers,) = page.nginx_directive("large_client_header_buffers")
    _count, size = buffers.split()
    assert int(size.removesuffix("k")) * 1024 == DEFAULTS["HEADER_MAX_BYTES"]
    (header_timeout,) = page.nginx_directive("client_header_timeout")
    assert seconds(header_timeout) == DEFAULTS["HEADER_TIMEOUT_SECONDS"]


def test_nginx_closes_idle_upstream_connections_before_the_workers_do():
    (pool_timeout,) = page.nginx_directive("keepalive_timeout")
    serve = page.commands("python", 8000)[-1]
    worker_timeout = serve[serve.index("--timeout-keep-alive") + 1]
    assert seconds(pool_timeout) < float(worker_timeout)


def test_the_page_names_every_logger_the_package_uses():
    used = set()
    for source in PACKAGE.rglob("*.py"):
        used |= set(re.findall(r'getLogger\("([\w.]+)"\)', source.read_text(encoding="utf-8")))
    assert used, "no logger found: the scan is broken"
    text = page.PAGE.read_text(encoding="utf-8").split("**Logging.**", 1)[1].split("\n## ", 1)[0]
    assert {name for name in used if f"`{name}`" not in text} == set()


@contextlib.contextmanager
def logging_restored() -> Iterator[None]:
    """Every logger's level, handlers and propagation as they were: a configuration left in
    place would log (and pytest keep) every later test's INFO records, access lines
    included, which the unbounded-growth test would count as growth."""
    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    saved = {
        id(logger): (logger.level, list(logger.handlers), logger.propagate, logger.disabled)
        for logger in loggers
        if isinstance(logger, logging.Logger)
    }
    try:
        yield
    finally:
        for logger in [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]:
            if not isinstance(logger, logging.Logger):
                continue
            level, handlers, propagate, disabled = saved.get(
                id(logger), (logging.NOTSET, [], True, False)
            )
            logger.handlers[:] = handlers
            logger.propagate, logger.disabled = propagate, disabled
            logger.setLevel(level)


def test_the_documented_logging_configures_and_routes_the_packages_records(capsys):
    # The additions follow the project's own settings, where BEAMMCP is defined.
    namespace: dict[str, object] = {"BEAMMCP": {}}
    exec(page.settings_block("redis://127.0.0.1:1/0"), namespace)
    assert namespace["BEAMMCP"] == {"SESSION_CACHE": "default"}
    with logging_restored():
        logging.config.dictConfig(namespace["LOGGING"])
        logging.getLogger("beammcp_django.http").info("a refusal reason")
        logging.getLogger("beammcp_django.http").debug("not at INFO")
    assert not logging.getLogger("beammcp_django.access").isEnabledFor(logging.INFO)
    written = capsys.readouterr().err
    assert re.search(r"INFO beammcp_django\.http pid=\d+ a refusal reason", written), written
    assert "not at INFO" not in written


@pytest.fixture(scope="module")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory = tmp_path_factory.mktemp("kept-alive")
    server = start_server("mcp_serve", server_env(directory), directory)
    yield server
    server.stop()


@pytest.mark.slow
def test_a_head_on_a_kept_alive_connection_is_bounded_like_the_first(worker):
    """nginx reuses upstream connections: a second request's head must be counted too."""
    limit = DEFAULTS["HEADER_MAX_BYTES"]
    with Wire(worker.port) as wire:
        wire.send(http_request(message("first", "server/discover")))
        assert wire.response().status == 200
        wire.send(http_request(message("second", "server/discover")))
        assert wire.response().status == 200
        wire.send(http_request(message("third", "server/discover"), add=[("X-Big", "a" * limit)]))
        refused = wire.response()
    assert refused.status == 431
    assert f"longer than {limit} bytes".encode() in refused.body
