"""The admin's MCP pages in a real browser: Debian's headless Chromium, driven by Selenium,
against ``manage.py runserver`` (daphne, with the admin's static files) serving the sample
project on a fresh SQLite database.

The test calls tools over real HTTP first, then logs in through the admin's form, finds the
catalog and the connectome as entries of the app on the admin index and opens each from
there, reads the annotation audit's finding and asks the reach form a question, sees each
tool's effects in the catalog, walks from the catalog to a tool's page and its node in the
connectome, filters the edge table, downloads an export and checks its digest against the
one the page shows.
Screenshots go to ``tests/admin/artifacts/`` (not committed).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chromium import WAIT, chromium, skip_without_chromium
from tests.http.mcphttp_support import ServerProcess, message, post, start_server
from tests.migrated import migrated_database_url
from tests.support import manage
from tests.tasks.tasks_support import Worker, client

pytestmark = [pytest.mark.slow, pytest.mark.one_leg]

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
SAMPLE_SKILL = (
    Path(__file__).resolve().parents[2] / "sample_project/demo/skills/reading-the-forecast/SKILL.md"
)
USERNAME, PASSWORD = "admin", "browser-test-password-4e1f"

skip_without_chromium()

from selenium.common.exceptions import (  # noqa: E402 - after the skip: only with a browser
    StaleElementReferenceException,
    WebDriverException,
)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.select import Select  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture
def sample_env(tmp_path: Path) -> dict[str, str]:
    """The sample settings on a fresh migrated database holding one superuser, DEBUG on so
    the admin's static files are served."""
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "sample_project.settings",
            "DJANGO_DEBUG": "true",
            "DJANGO_SUPERUSER_PASSWORD": PASSWORD,
            "PYTHONUNBUFFERED": "1",
            "MCPHTTP_RECORD_DIR": str(tmp_path),  # read by ServerProcess; nothing writes it
        }
    )
    env.pop("DJANGO_ALLOWED_HOSTS", None)
    env["DATABASE_URL"] = migrated_database_url(tmp_path, env)
    manage(env, "createsuperuser", "--noinput", "--username", USERNAME, "--email", "a@b.invalid")
    return env


@pytest.fixture
def server(sample_env: dict[str, str], tmp_path: Path) -> Iterator[ServerProcess]:
    """``runserver`` on a free loopback port, on ``sample_env``."""
    process = start_server("runserver", sample_env, tmp_path)
    yield process
    process.stop()


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebDriver]:
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    with chromium(tmp_path, monkeypatch, downloads=downloads) as driver:
        yield driver


def screenshot(driver: WebDriver, name: str, width: int = 1400) -> Path:
    """The whole page at ``width`` (the window grown to its height, at most 6000 px) as a
    PNG."""
    ARTIFACTS.mkdir(exist_ok=True)
    driver.set_window_size(width, 1000)
    height, frame = driver.execute_script(
        "return [document.documentElement.scrollHeight, window.outerHeight - window.innerHeight]"
    )
    driver.set_window_size(width, min(height, 6000) + frame)
    path = ARTIFACTS / f"{name}.png"
    assert driver.save_screenshot(str(path)), path
    driver.set_window_size(1400, 1000)
    return path


def gone(element: object) -> bool:
    """Whether the page holding ``element`` was replaced. Chromium answers a node of a
    document mid-swap with "Node ... does not belong to the document": gone, too."""
    try:
        element.is_enabled()  # type: ignore[attr-defined]
    except StaleElementReferenceException:
        return True
    except WebDriverException as error:
        if "does not belong to the document" in str(error):
            return True
        raise
    return False


def click_and_wait(driver: WebDriver, element: object) -> None:
    """Click something that loads a new page, and wait until it has replaced this one."""
    element.click()  # type: ignore[attr-defined]
    wait = WebDriverWait(driver, WAIT)
    wait.until(lambda d: gone(element))
    wait.until(lambda d: d.execute_script("return document.readyState") == "complete")


def wait_for_file(directory: Path, name: str) -> Path:
    deadline = time.monotonic() + WAIT
    path = directory / name
    while time.monotonic() < deadline:
        if path.exists() and not list(directory.glob("*.crdownload")):
            return path
        time.sleep(0.1)
    raise AssertionError(
        f"{name} was not downloaded: {sorted(p.name for p in directory.iterdir())}"
    )


def call_tools(server: ServerProcess) -> None:
    """A few real calls, so the observed graph has edges to draw."""
    calls = [
        ("echo", {"text": "hello"}),
        ("echo", {"text": "again"}),
        ("get_forecast", {"city": "oslo", "days": 2}),
    ]
    for number, (name, arguments) in enumerate(calls):
        request = message(number, "tools/call", {"name": name, "arguments": arguments})
        response = post(server.port, request)
        assert response.status == 200, (response.status, response.body)
        assert "result" in response.json(), response.body


def ask_reach(browser: WebDriver, entry: str, effect: str) -> None:
    """Ask the reach form whether ``entry`` reaches ``effect`` in the declared graph."""
    Select(browser.find_element(By.ID, "id_reach-graph")).select_by_value("declared")
    Select(browser.find_element(By.ID, "id_reach-question")).select_by_value("reaches")
    for name, value in (("entry", entry), ("effect", effect)):
        field = browser.find_element(By.ID, f"id_reach-{name}")
        field.clear()
        field.send_keys(value)
    click_and_wait(browser, browser.find_element(By.CSS_SELECTOR, "#reach-form input[type=submit]"))


def log_in(browser: WebDriver, base: str) -> None:
    browser.get(f"{base}/admin/")
    browser.find_element(By.ID, "id_username").send_keys(USERNAME)
    browser.find_element(By.ID, "id_password").send_keys(PASSWORD)
    click_and_wait(browser, browser.find_element(By.CSS_SELECTOR, "input[type=submit]"))
    assert "Site administration" in browser.title


def test_a_staff_user_browses_the_catalog_and_the_connectome_in_chromium(
    server: ServerProcess, browser: WebDriver, tmp_path: Path
):
    call_tools(server)
    base = f"http://127.0.0.1:{server.port}"
    log_in(browser, base)

    # The admin index lists both pages as entries of the app, beside the store.
    app = browser.find_element(By.CSS_SELECTOR, "#content-main .app-beammcp_django")
    assert app.find_element(By.TAG_NAME, "caption").text == "MCP SERVER"
    entries = [row.text for row in app.find_elements(By.CSS_SELECTOR, "th[scope=row] a")]
    assert entries == ["Connectome", "MCP catalog", "MCP handles", "MCP tasks", "Observed edges"]
    screenshot(browser, "index")

    # The index's "Connectome" entry opens the page, its breadcrumbs lead back to the app.
    click_and_wait(browser, app.find_element(By.LINK_TEXT, "Connectome"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Connectome"
    assert browser.find_elements(By.CSS_SELECTOR, "#drawing-observed svg g.node")
    finding = browser.find_element(By.CSS_SELECTOR, "#finding-table tr.mcp-finding").text
    assert "tool/current_conditions" in finding and "readOnlyHint: true" in finding
    assert "effect/model.write/demo.Observation" in finding and "declared" in finding
    ask_reach(browser, "tool/current_conditions", "effect/model.write/demo.Observation")
    assert browser.find_element(By.ID, "reach-verdict").text == "Yes"
    hops = browser.find_elements(By.CSS_SELECTOR, "#reach-path tr.mcp-hop")
    assert len(hops) == 2 and "CurrentConditions.call/3" in hops[0].text
    assert len(browser.find_elements(By.CSS_SELECTOR, "#drawing-reach svg g.edge")) == 2
    browser.find_element(By.ID, "reach").screenshot(str(ARTIFACTS / "connectome_reach.png"))
    ask_reach(browser, "tool/nope", "effect/model.write/demo.Observation")
    assert "has no node 'tool/nope'" in browser.find_element(By.ID, "reach-refusal").text
    # A label copied from a drawing is not a node id: the refusal names the id it stands for.
    ask_reach(browser, "tool/current_conditions", "model.write/demo.Observation")
    refusal = browser.find_element(By.ID, "reach-refusal").text
    assert "did you mean 'effect/model.write/demo.Observation'?" in refusal
    click_and_wait(
        browser, browser.find_element(By.CSS_SELECTOR, ".breadcrumbs a[href$='/admin/']")
    )

    # The index's "MCP catalog" entry opens the catalog.
    app = browser.find_element(By.CSS_SELECTOR, "#content-main .app-beammcp_django")
    click_and_wait(browser, app.find_element(By.LINK_TEXT, "MCP catalog"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "MCP catalog"
    assert browser.current_url == f"{base}/admin/beammcp_django/mcpcatalog/"
    listed = {link.text for link in browser.find_elements(By.CSS_SELECTOR, "td a.mcp-code")}
    assert {"echo", "get_forecast", "record_observation", "forecast_briefing"} <= listed
    assert {"weather://stations", "weather://observations/{city}"} <= listed
    effects = {
        row.find_element(By.CSS_SELECTOR, "td a.mcp-code").text: row.find_element(
            By.CSS_SELECTOR, "td.mcp-tool-effects"
        ).text
        for row in browser.find_elements(By.CSS_SELECTOR, "#tools tbody tr")
    }
    assert effects["current_conditions"] == "model.write demo.Observation: can reach; not reached"
    assert effects["get_forecast"] == "none"
    screenshot(browser, "catalog")
    # At a wide window and a narrow one, no tool's name is broken across lines, and a
    # description's ``literals`` read as code.
    tools = browser.find_element(By.ID, "tools")
    assert "``" not in tools.text and tools.find_elements(By.CSS_SELECTOR, "td code")
    for width in (1000, 1400):
        browser.set_window_size(width, 1000)
        for link in browser.find_elements(By.CSS_SELECTOR, "#tools tbody td > a.mcp-code"):
            lines = browser.execute_script("return arguments[0].getClientRects().length", link)
            assert lines == 1, (width, link.text)
        # A table wider than the content scrolls in its own box: the page does not.
        page, window = browser.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth]"
        )
        assert page <= window, (width, page, window)
        screenshot(browser, f"catalog-{width}", width)

    # The sample's skill: listed with its files, its page showing each file's digest (that
    # of the bytes on disk) and its SKILL.md as written.
    skills = browser.find_element(By.ID, "skills").text
    assert "reading-the-forecast" in skills and "2 files" in skills
    assert "app 'demo', skills/reading-the-forecast/" in skills
    assert "every caller the endpoint serves" in skills
    click_and_wait(browser, browser.find_element(By.LINK_TEXT, "reading-the-forecast"))
    files = {
        row.find_element(By.CSS_SELECTOR, "td:first-child").text: row.find_element(
            By.CSS_SELECTOR, "td:last-child"
        ).text
        for row in browser.find_elements(By.CSS_SELECTOR, "#files tbody tr")
    }
    folder = SAMPLE_SKILL.parent
    assert files == {
        f"skill://reading-the-forecast/{path.relative_to(folder).as_posix()}": "sha256:"
        + hashlib.sha256(path.read_bytes()).hexdigest()
        for path in (SAMPLE_SKILL, folder / "references" / "conditions.md")
    }
    shown_md = browser.find_element(By.CSS_SELECTOR, "#skill-md pre").text
    assert shown_md.startswith("---\nname: reading-the-forecast\n")
    assert "[references/conditions.md](references/conditions.md)" in shown_md
    for width in (1000, 1400):
        browser.set_window_size(width, 1000)
        page, window = browser.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth]"
        )
        assert page <= window, (width, page, window)
    screenshot(browser, "catalog_skill")
    browser.back()

    click_and_wait(browser, browser.find_element(By.LINK_TEXT, "get_forecast"))
    properties = browser.find_element(By.ID, "input-schema").text
    assert "city" in properties and "days" in properties and "maximum: 7" in properties
    assert "days[].condition" in browser.find_element(By.ID, "output-schema").text
    assert "readOnlyHint" in browser.find_element(By.ID, "annotations").text
    screenshot(browser, "catalog_tool")

    # The tool's node in the connectome: the page filtered to it, the node highlighted.
    node = "beammcp-sample-weather/tool/get_forecast"
    click_and_wait(browser, browser.find_element(By.LINK_TEXT, node))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Connectome"
    for drawing in ("declared", "observed", "diff"):
        drawn = browser.find_elements(By.CSS_SELECTOR, f"#drawing-{drawing} svg g.node")
        assert len(drawn) > 0, drawing
    focused = browser.find_elements(By.CSS_SELECTOR, "#drawing-diff svg g.node.focus")
    assert len(focused) == 1 and "get_forecast" in focused[0].text
    assert browser.find_elements(
        By.CSS_SELECTOR, "#drawing-diff svg g.edge.declared_never_observed"
    )
    counts = [
        label.text
        for label in browser.find_elements(
            By.CSS_SELECTOR, "#drawing-observed svg g.edge.observed text"
        )
    ]
    assert "2" in counts  # echo, called twice
    rows = browser.find_elements(By.CSS_SELECTOR, "#edge-table tr.mcp-edge")
    assert rows and all(node in row.text for row in rows)
    attribution = browser.find_element(By.ID, "attribution").text
    assert "tool/get_forecast" in attribution and "tool/echo" not in attribution
    assert "Completeness bound" in browser.find_element(By.ID, "bound").text
    screenshot(browser, "connectome_node")
    assert browser.find_element(By.ID, "drawing-diff").screenshot(
        str(ARTIFACTS / "connectome_diff_drawing.png")
    )

    # The filter form: clear the node, keep only dead authority.
    click_and_wait(browser, browser.find_element(By.LINK_TEXT, "Clear"))
    Select(browser.find_element(By.ID, "id_edge_class")).select_by_value("declared_never_observed")
    click_and_wait(
        browser, browser.find_element(By.CSS_SELECTOR, "#edge-filter input[type=submit]")
    )
    classes = {
        cell.text
        for cell in browser.find_elements(By.CSS_SELECTOR, "#edge-table tr.mcp-edge td:first-child")
    }
    assert classes == {"declared_never_observed"}
    all_edges = int(browser.find_element(By.CSS_SELECTOR, "#edges h2").text.split(" of ")[1][:-1])
    assert len(browser.find_elements(By.CSS_SELECTOR, "#edge-table tr.mcp-edge")) < all_edges
    screenshot(browser, "connectome_filtered")

    # A download button: the file's digest is the one printed beside it.
    shown = browser.find_element(By.ID, "digest-diff").text
    browser.find_element(By.ID, "download-diff").click()
    downloaded = wait_for_file(tmp_path / "downloads", "connectome.diff.json")
    assert hashlib.sha256(downloaded.read_bytes()).hexdigest() == shown
    # The sample's current_conditions is mis-annotated on purpose: the record names it.
    record = json.loads(downloaded.read_bytes())
    assert downloaded.read_bytes().startswith(b'{"algorithm":"sha256","annotation_findings":[')
    assert any(
        f["tool"].endswith("/tool/current_conditions") for f in record["annotation_findings"]
    )

    assert server.alive(), server.log_tail()


def test_a_staff_user_watches_tasks_and_cancels_one_waiting_for_input_in_chromium(
    server: ServerProcess, sample_env: dict[str, str], browser: WebDriver, tmp_path: Path
):
    """Two tasks made over HTTP and run by a real worker: one completed, one waiting for
    input. The page lists both with a one-line summary and none of what the client sent or
    the tool answered; the status filter keeps the waiting one; the cancel action cancels it,
    as tasks/cancel would."""
    worker = Worker(sample_env, tmp_path, "admin")
    try:
        asking = client({"server": server}, elicitation={})
        waiting = asking.start(city="nairobi", weeks=2)
        asking.wait_for(waiting, "input_required")
        plain = client({"server": server})
        done = plain.start(city="nairobi", weeks=1)
        plain.wait_for(done, "completed")
    finally:
        worker.stop()
    base = f"http://127.0.0.1:{server.port}"
    log_in(browser, base)

    app = browser.find_element(By.CSS_SELECTOR, "#content-main .app-beammcp_django")
    click_and_wait(browser, app.find_element(By.LINK_TEXT, "MCP tasks"))
    assert browser.current_url == f"{base}/admin/beammcp_django/mcptask/"
    rows = {row.text for row in browser.find_elements(By.CSS_SELECTOR, "#result_list tbody tr")}
    assert len(rows) == 2
    assert any("input required" in row and "waiting for 1 input(s)" in row for row in rows), rows
    # A completed task's summary is its run's last progress message, as tasks/get shows it.
    assert any("completed" in row and "week 1 of 1" in row for row in rows), rows
    assert all("seasonal_report" in row for row in rows)
    page = browser.page_source.lower()
    assert "nairobi" not in page and "week 1: about" not in page  # no argument, no result
    screenshot(browser, "tasks")

    filters = browser.find_element(By.ID, "changelist-filter")
    click_and_wait(browser, filters.find_element(By.LINK_TEXT, "input required"))
    listed = browser.find_elements(By.CSS_SELECTOR, "#result_list tbody tr")
    assert len(listed) == 1 and waiting[:8] in listed[0].text

    listed[0].find_element(By.CSS_SELECTOR, "input.action-select").click()
    Select(browser.find_element(By.NAME, "action")).select_by_value("cancel_tasks")
    click_and_wait(browser, browser.find_element(By.CSS_SELECTOR, "button[name=index]"))
    said = browser.find_element(By.CSS_SELECTOR, ".messagelist li.success").text
    assert said.startswith("Cancellation asked for 1 task(s)")
    screenshot(browser, "tasks_cancelled")
    assert asking.get(waiting)["status"] == "cancelled"
    assert plain.get(done)["status"] == "completed"
    assert server.alive(), server.log_tail()


@pytest.fixture
def counted_dot(sample_env: dict[str, str], tmp_path: Path) -> Path:
    """``dot`` on the server's PATH replaced by a script that notes each run in a log, then
    runs the real ``dot``: how the test sees, from outside, whether a view laid anything out."""
    real = shutil.which("dot")
    assert real, "graphviz's dot is not installed"
    shims, log = tmp_path / "shims", tmp_path / "dot-runs.log"
    shims.mkdir()
    shim = shims / "dot"
    shim.write_text(f'#!/bin/sh\necho run >> "{log}"\nexec "{real}" "$@"\n')
    shim.chmod(0o755)
    sample_env["PATH"] = f"{shims}{os.pathsep}{sample_env.get('PATH', '')}"
    log.touch()
    return log


def dot_runs(log: Path) -> int:
    return len(log.read_text().splitlines())


def test_a_1000_edge_store_is_drawn_aggregated_its_layouts_cached_in_chromium(
    counted_dot: Path, sample_env: dict[str, str], tmp_path: Path, browser: WebDriver
):
    """A store holding 1,000 observed edges (a large host's workers' flushes, written before
    the server starts) drawn on the page of a real server: the observed graph and the diff
    aggregated to fit the cap, a second view laid out by no ``dot`` run, and a node's
    neighbourhood, chosen in the edge table, drawn at full detail by one more run. Five
    times the cap, not the 5,000 edges of tests/admin/test_connectome_page.py: that page
    weighs 5.7 MB, which runserver and Chromium took 6 s to serve and show on an idle
    machine and over 30 s with two test runs sharing it (2026-12-06); its size is proven
    there, what the browser adds (the drawings shown, the cache, a click) here."""
    script = "from tests.admin.generated_graph import stored; print(stored(1000))"
    assert manage(sample_env, "shell", "-v", "0", "-c", script).stdout.split()[-1:] == [b"1000"]
    server = start_server("runserver", sample_env, tmp_path)
    try:
        base = f"http://127.0.0.1:{server.port}"
        log_in(browser, base)
        browser.get(f"{base}/admin/beammcp_django/connectome/")
        for name in ("observed", "diff"):
            note = browser.find_element(By.ID, f"note-{name}").text
            assert note.startswith("Aggregated to fit the drawing cap of 200:"), note
            drawn = browser.find_elements(By.CSS_SELECTOR, f"#drawing-{name} svg g.edge")
            assert 0 < len(drawn) <= 200
            assert browser.find_elements(By.CSS_SELECTOR, f"#drawing-{name} svg g.node.group")
        assert len(browser.find_elements(By.CSS_SELECTOR, "#edge-table tr.mcp-edge")) > 1000
        first_view = dot_runs(counted_dot)
        assert first_view == 3  # the declared graph, the observed graph, the diff
        screenshot(browser, "connectome_aggregated")

        browser.refresh()
        WebDriverWait(browser, WAIT).until(
            lambda d: d.execute_script("return document.readyState") == "complete"
        )
        assert browser.find_elements(By.CSS_SELECTOR, "#drawing-observed svg g.node.group")
        assert dot_runs(counted_dot) == first_view

        function = browser.find_element(
            By.XPATH, "//table[@id='edge-table']//td[contains(., '/module/pkg')]/a"
        )
        chosen = function.text
        click_and_wait(browser, function)
        near = browser.find_element(By.ID, "drawing-neighbourhood")
        assert chosen in near.find_element(By.TAG_NAME, "summary").text
        assert "at full detail" in browser.find_element(By.ID, "note-neighbourhood").text
        assert len(near.find_elements(By.CSS_SELECTOR, "svg g.node.focus")) == 1
        assert dot_runs(counted_dot) == first_view + 1
    finally:
        server.stop()
