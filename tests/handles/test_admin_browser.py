"""The handles' admin page in Debian's headless Chromium, against the sample's ``runserver``:
watch lists minted over real HTTP are listed by kind and principal with their times, never
their data; the end action, chosen and confirmed in the browser, ends them, and the next call
naming one is answered as for an unknown one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.admin.test_admin_browser import click_and_wait, log_in
from tests.chromium import chromium, skip_without_chromium
from tests.http.mcphttp_support import ServerProcess, message, post

pytestmark = [pytest.mark.slow, pytest.mark.one_leg]

skip_without_chromium()

from selenium.webdriver.common.by import By  # noqa: E402 - after the skip: only with a browser
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.select import Select  # noqa: E402

# The admin walk's fixtures (the sample's runserver, a superuser), by the names tests ask.
from tests.admin.test_admin_browser import sample_env, server  # noqa: E402, F401

UNKNOWN = "watch list wl_… expired or unknown: create a new one"


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebDriver]:
    with chromium(tmp_path, monkeypatch) as driver:
        yield driver


def call(process: ServerProcess, tool: str, **arguments: object) -> dict:
    response = post(process.port, message(1, "tools/call", {"name": tool, "arguments": arguments}))
    assert response.status == 200, response.body
    return response.json()["result"]


def test_a_staff_user_lists_the_watch_lists_and_ends_them_in_chromium(
    server: ServerProcess,  # noqa: F811 - the fixture imported above
    browser: WebDriver,
):
    handles = [
        call(server, "create_watch_list", cities=[city])["structuredContent"]["watch_list_id"]
        for city in ("oslo", "lisbon")
    ]
    base = f"http://127.0.0.1:{server.port}"
    log_in(browser, base)
    browser.get(f"{base}/admin/beammcp_django/mcphandle/")
    rows = browser.find_elements(By.CSS_SELECTOR, "#result_list tbody tr")
    assert len(rows) == 2
    text = browser.find_element(By.ID, "result_list").text
    assert {handle[:12] for handle in handles} <= set(text.replace("…", " ").split())
    assert "watch_list" in text and "(no principal: a bearer name)" in text
    assert "oslo" not in browser.page_source and "lisbon" not in browser.page_source

    browser.find_element(By.ID, "action-toggle").click()
    Select(browser.find_element(By.NAME, "action")).select_by_value("end_handles")
    click_and_wait(browser, browser.find_element(By.CSS_SELECTOR, "button[name=index]"))
    assert "Ended 2 handle(s)" in browser.find_element(By.CSS_SELECTOR, ".messagelist").text
    ended = call(server, "watched_forecast", watch_list_id=handles[0])
    assert (ended["isError"], ended["content"][0]["text"]) == (True, UNKNOWN)
