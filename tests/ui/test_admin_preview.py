"""The admin's view preview in Debian's headless Chromium, against a real ``mcp_serve`` of the
sample (with the probe app): the official ``AppBridge`` the package ships
(``static/beammcp_django/vendor/app-bridge.js``) frames the view through the sandbox proxy on
the second origin (the admin at ``127.0.0.1``, the sandbox at ``localhost``, the same server),
``ui/initialize``, a tool input, a tool's result and the view's own call reaching the server
as the logged-in user; a staff user without the permission a view's tool demands is told so;
the proxy refuses what it cannot carry, by name.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chromium import WAIT, chromium, skip_without_chromium
from tests.http.mcphttp_support import ServerProcess, start_server
from tests.quickstart.test_quickstart import observed_calls
from tests.ui.test_apps_host import free_port

pytestmark = [pytest.mark.slow, pytest.mark.one_leg]

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "preview-password-1"

skip_without_chromium()

from selenium.webdriver.common.by import By  # noqa: E402 - after the skip: only with a browser
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from tests.ui.browser_log import logged  # noqa: E402


def manage(env: dict[str, str], *args: str) -> None:
    path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    subprocess.run(["python", "manage.py", *args], cwd=ROOT, env={**env, "PATH": path}, check=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """``mcp_serve`` of the sample with the probe app, DEBUG on (its static files served), the
    sandbox proxy's origin the other loopback name of the same port; a superuser ``admin``
    and a staff user ``staffer`` who holds no permission. One for the module: each test
    counts calls of tools no other test calls."""
    directory = tmp_path_factory.mktemp("preview")
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.ui.probe_settings",
        "DJANGO_DEBUG": "true",
        "BEAMMCP_VIEW_SANDBOX_ORIGIN": f"http://localhost:{port}",
        "DATABASE_URL": f"sqlite:///{directory / 'db.sqlite3'}",
        "MCPHTTP_RECORD_DIR": str(directory),
    }
    env.pop("DJANGO_ALLOWED_HOSTS", None)
    manage(env, "migrate", "--no-input", "-v", "0")
    manage(
        env,
        "shell",
        "-c",
        "from django.contrib.auth.models import User; "
        f"User.objects.create_superuser('admin', 'a@b.invalid', '{PASSWORD}'); "
        f"User.objects.create_user('staffer', password='{PASSWORD}', is_staff=True)",
    )
    process = start_server("mcp_serve", env, directory, port=port)
    process.database = directory / "db.sqlite3"  # type: ignore[attr-defined]
    yield process
    process.stop()


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebDriver]:
    with chromium(tmp_path, monkeypatch, console=True) as driver:
        yield driver


def log_in(browser: WebDriver, base: str, username: str) -> None:
    browser.get(f"{base}/admin/login/")
    browser.find_element(By.ID, "id_username").send_keys(username)
    browser.find_element(By.ID, "id_password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    # The title of the page the login leads to: asking the old page's button whether it went
    # stale can meet the document mid-swap (Chromium's "Node ... does not belong").
    WebDriverWait(browser, WAIT).until(lambda d: "Site administration" in d.title)


def open_preview(browser: WebDriver, base: str, uri: str) -> None:
    quoted = uri.replace("_", "_5F").replace(":", "_3A").replace("/", "_2F")
    browser.get(f"{base}/admin/beammcp_django/mcpcatalog/resource/{quoted}/")
    # Nothing runs until the developer opens the view.
    assert preview_log(browser) == []
    browser.find_element(By.ID, "mcp-preview-open").click()


def preview_log(browser: WebDriver) -> list[dict]:
    return browser.execute_script("return window.mcpPreviewLog || []")


def wait_for(browser: WebDriver, kind: str, count: int = 1) -> list[dict]:
    """The preview's exchanges of ``kind``, once there are ``count`` of them."""
    return logged(browser, "mcpPreviewLog", kind, count, error="error")


@contextlib.contextmanager
def inside_the_view(browser: WebDriver) -> Iterator[None]:
    """The driver inside the view: the sandbox proxy's frame, then the view's own."""
    browser.switch_to.frame(browser.find_element(By.ID, "mcp-preview-view"))
    browser.switch_to.frame(browser.find_element(By.TAG_NAME, "iframe"))
    try:
        yield
    finally:
        browser.switch_to.default_content()


def in_the_view(browser: WebDriver, condition) -> None:
    """Wait for ``condition`` inside the view."""
    with inside_the_view(browser):
        WebDriverWait(browser, WAIT).until(condition)


def ask_in_the_view(browser: WebDriver, button: str = "ask") -> str:
    """Click one of the who-am-I view's own buttons; what it then shows."""
    with inside_the_view(browser):
        WebDriverWait(browser, WAIT).until(lambda d: d.find_element(By.ID, "answer"))
        browser.execute_script("document.getElementById('answer').textContent = ''")
        browser.find_element(By.ID, button).click()
        return WebDriverWait(browser, WAIT).until(
            lambda d: (
                (text := d.find_element(By.ID, "answer").text).startswith(("asked", "refused"))
                and text
            )
        )


def send(browser: WebDriver, arguments: dict, button: str) -> None:
    field = browser.find_element(By.ID, "mcp-preview-arguments")
    field.clear()
    field.send_keys(json.dumps(arguments))
    browser.find_element(By.ID, button).click()


def test_the_preview_draws_the_forecast_chart_and_its_refresh_reaches_mcp_serve(
    browser: WebDriver, server: ServerProcess
):
    base = f"http://127.0.0.1:{server.port}"
    log_in(browser, base, "admin")
    open_preview(browser, base, "ui://weather/forecast-chart")
    (view,) = wait_for(browser, "view")
    assert view["detail"]["mimeType"] == "text/html;profile=mcp-app"
    (initialized,) = wait_for(browser, "initialized")
    assert initialized["detail"] == {"name": "forecast-chart", "version": "1.0.0"}
    # The proxy is on the second origin; the view inside it has an opaque one.
    frame = browser.find_element(By.ID, "mcp-preview-view")
    assert frame.get_attribute("src").startswith(f"http://localhost:{server.port}/admin/")

    arguments = {"city": "oslo", "days": 3}
    send(browser, arguments, "mcp-preview-input")
    wait_for(browser, "tool-input")
    browser.find_element(By.ID, "mcp-preview-call").click()
    (result,) = wait_for(browser, "tool-result")
    days = result["detail"]["structuredContent"]["days"]
    in_the_view(
        browser,
        lambda d: d.find_element(By.ID, "status").text == "Forecast as the model received it.",
    )
    with inside_the_view(browser):
        # The view's own origin is opaque: it reaches neither the admin's nor the proxy's.
        assert browser.execute_script("return window.origin") == "null"
        labels = [text.text for text in browser.find_elements(By.CSS_SELECTOR, "#chart text")]
        assert [f"{day['high_c']} °C" for day in days] == labels[0::2]
        browser.find_element(By.ID, "refresh").click()
        WebDriverWait(browser, WAIT).until(
            lambda d: d.find_element(By.ID, "status").text == "Refreshed through the host."
        )
    (call,) = wait_for(browser, "view-call")
    assert call["detail"] == {"name": "refresh_forecast", "arguments": arguments}
    (answer,) = wait_for(browser, "view-call-answer")
    assert answer["detail"]["structuredContent"] == result["detail"]["structuredContent"]
    # Both calls reached mcp_serve: its connectome counted them (flushed every 5 s).
    deadline = time.monotonic() + 20
    while observed_calls(server.database, "refresh_forecast") < 1:
        assert server.alive(), server.log_tail()
        assert time.monotonic() < deadline, "no flush counted the view's call"
        time.sleep(0.2)
    assert observed_calls(server.database, "get_forecast") == 1


def test_the_view_s_call_reaches_the_endpoint_as_the_logged_in_user(
    browser: WebDriver, server: ServerProcess
):
    base = f"http://127.0.0.1:{server.port}"
    log_in(browser, base, "admin")
    open_preview(browser, base, "ui://probe/who-am-i")
    wait_for(browser, "initialized")
    browser.find_element(By.ID, "mcp-preview-call").click()
    (result,) = wait_for(browser, "tool-result")
    assert result["detail"]["content"][0]["text"] == "you are admin"
    in_the_view(browser, lambda d: d.find_element(By.ID, "answer").text == "result: you are admin")
    assert ask_in_the_view(browser) == "asked: you are admin"
    # A tool the view draws but whose visibility leaves out "app": the preview, its host,
    # refuses the view's call of it (the page's Visibility), and the server never hears it.
    refusal = 'probe_model_only is not the view\'s to call: its visibility leaves out "app"'
    assert ask_in_the_view(browser, "overreach") == f"refused: {refusal}"
    (refused,) = wait_for(browser, "view-call-refused")
    assert refused["detail"] == refusal
    # A third call of probe_who_am_i after it: once a flush has counted that one, the
    # connectome would have counted the refused call too, had it reached the server.
    browser.find_element(By.ID, "mcp-preview-call").click()
    wait_for(browser, "tool-result", 2)
    deadline = time.monotonic() + 20
    while observed_calls(server.database, "probe_who_am_i") < 3:
        assert time.monotonic() < deadline, "no flush counted the calls"
        time.sleep(0.2)
    assert observed_calls(server.database, "probe_model_only") == 0


def test_a_staff_user_without_the_tool_s_permission_is_told_why(
    browser: WebDriver, server: ServerProcess
):
    base = f"http://127.0.0.1:{server.port}"
    log_in(browser, base, "staffer")
    open_preview(browser, base, "ui://probe/who-am-i")
    (hidden,) = wait_for(browser, "tool-hidden")
    assert hidden["detail"] == (
        "probe_who_am_i is hidden from you: it demands permissions: auth.view_user"
    )
    wait_for(browser, "initialized")
    options = browser.find_elements(By.CSS_SELECTOR, "#mcp-preview-tool option")
    shown = {option.get_attribute("value"): option.is_enabled() for option in options}
    assert shown == {"probe_who_am_i": False, "probe_model_only": True}
    # The view's own call is refused as for a tool that does not exist, and says so.
    answer = ask_in_the_view(browser)
    assert answer.startswith("refused: ") and "unknown tool 'probe_who_am_i'" in answer, answer


def test_the_sandbox_proxy_enforces_the_policy_built_from_the_view_s_csp(
    browser: WebDriver, server: ServerProcess
):
    base = f"http://127.0.0.1:{server.port}"
    log_in(browser, base, "admin")
    open_preview(browser, base, "ui://probe/csp")
    logs = wait_for(browser, "view-log", 2)
    data = [entry["detail"]["data"] for entry in logs]
    assert {"blocked": "https://undeclared.example.org/beacon", "directive": "connect-src"} in data
    assert {"refused": "https://undeclared.example.org/beacon"} in data
    assert not any("loaded" in item for item in data)
