"""Debian's headless Chromium driven through Debian's chromedriver by Selenium: the one setup
every browser test uses (the admin pages, the CORS calls).

A module that needs the browser calls ``skip_without_chromium()`` at import, then opens one
with ``chromium(directory, monkeypatch)`` inside its own fixture. Selenium Manager is kept
offline: it must never download a driver or a browser.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT = 30.0  # no single wait for the browser may take longer (a shared, noisy machine)
CHROMIUM_ARGUMENTS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)


def skip_without_chromium() -> None:
    """Skip the calling test module when Debian's chromium or its driver is not installed."""
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip(
            f"the browser test needs Debian's chromium and chromium-driver ({CHROMIUM}, "
            f"{CHROMEDRIVER}); tests/run.sh installs them when run as root",
            allow_module_level=True,
        )


@contextlib.contextmanager
def chromium(
    directory: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    downloads: Path | None = None,
    console: bool = False,
) -> Iterator[WebDriver]:
    """A fresh browser whose profile and driver log live in ``directory``; files it downloads
    go to ``downloads`` when given; with ``console`` the page's console messages are kept
    for ``driver.get_log("browser")``. Quit on exit, whatever happened."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    monkeypatch.setenv("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (*CHROMIUM_ARGUMENTS, f"--user-data-dir={directory / 'profile'}"):
        options.add_argument(argument)
    if downloads is not None:
        options.add_experimental_option(
            "prefs",
            {"download.default_directory": str(downloads), "download.prompt_for_download": False},
        )
    if console:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(CHROMEDRIVER, log_output=str(directory / "chromedriver.log"))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        driver.set_page_load_timeout(WAIT)
        driver.set_script_timeout(WAIT)
        if downloads is not None:
            driver.execute_cdp_cmd(
                "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
            )
        yield driver
    finally:
        driver.quit()
