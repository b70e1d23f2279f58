"""What a browser test of MCP Apps reads of its host page: the exchanges the page keeps in a
window variable, waited for by kind, failing at once on the page's own error."""

from __future__ import annotations

from selenium.common.exceptions import TimeoutException
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from tests.chromium import WAIT


def logged(
    browser: WebDriver, variable: str, kind: str, count: int = 1, *, error: str
) -> list[dict]:
    """The entries of ``kind`` in ``window[variable]``, once there are ``count`` of them; an
    entry of kind ``error`` fails the test, as does the wait running out (naming the log and
    the console)."""

    def read(driver: WebDriver) -> list[dict]:
        return driver.execute_script(f"return window.{variable} || []")

    def found(driver: WebDriver) -> list[dict] | bool:
        log = read(driver)
        errors = [entry for entry in log if entry["kind"] == error]
        assert not errors, errors
        entries = [entry for entry in log if entry["kind"] == kind]
        return entries if len(entries) >= count else False

    try:
        return WebDriverWait(browser, WAIT).until(found)
    except TimeoutException:
        console = [entry["message"] for entry in browser.get_log("browser")]
        raise AssertionError(f"no {kind}: {read(browser)} {console}") from None
