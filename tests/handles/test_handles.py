"""Server-minted handles (``beammcp_django/handles``) through ``McpClient``, in process: an
id of the kind's shape, found again only by the principal that minted it and only while it
lives; every other id (another's, ended, expired, malformed) the same tool error; the bound
per principal refused by name; the lifetime in the minting tool's description."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import override_settings
from django.utils import timezone

from beammcp_django.handles import book
from beammcp_django.handles.book import HandleBook, kinds_of
from beammcp_django.models import McpHandle
from beammcp_django.protocol.errors import ToolError
from beammcp_django.protocol.principal import principal_key
from beammcp_django.tasks.worker import owner_principal
from beammcp_django.test import McpClient
from tests.handles.sites import SITE, WatchList

pytestmark = pytest.mark.django_db

UNKNOWN = "watch list wl_… expired or unknown: create a new one"


@pytest.fixture(autouse=True)
def served():
    with override_settings(BEAMMCP={**settings.BEAMMCP, "CATALOG": "tests.handles.sites.SITE"}):
        yield


@pytest.fixture
def clock(monkeypatch):
    """The handles' clock, moved by the test: ``clock.now += timedelta(...)``."""

    class Clock:
        now = timezone.now()

    monkeypatch.setattr(book, "clock", lambda: Clock.now)
    return Clock


def client(name: str) -> McpClient:
    """A client calling as the user ``name`` (through the stdio core, which names its user;
    over HTTP the AUTHORIZE hook names the principal, the same way to the store)."""
    return McpClient("2025-11-25", user=User.objects.get_or_create(username=name)[0])


def create(mcp: McpClient) -> str:
    return mcp.call_tool("create_watch_list").structured["watch_list_id"]


def test_a_minted_id_is_opaque_of_its_kind_s_shape_and_holds_the_host_s_data():
    mcp = client("ada")
    handle = create(mcp)
    assert re.fullmatch(r"wl_[A-Za-z0-9_-]{32}", handle)
    assert mcp.call_tool("watch_city", {"watch_list_id": handle, "city": "oslo"}).text == "oslo"
    assert mcp.call_tool("watch_city", {"watch_list_id": handle, "city": "lyon"}).text == (
        "oslo, lyon"
    )
    assert mcp.call_tool("read_watch_list", {"watch_list_id": handle}).text == "oslo, lyon"
    assert McpHandle.objects.get().owner == "model:auth.user:" + str(User.objects.get().pk)


def test_another_principal_s_an_ended_and_a_made_up_id_are_one_answer():
    ada, bob = client("ada"), client("bob")
    handle = create(ada)
    ended = create(ada)
    ada.call_tool("end_watch_list", {"watch_list_id": ended})
    made_up = "wl_" + "A" * 32
    answers = [
        bob.call_tool("read_watch_list", {"watch_list_id": handle}),
        ada.call_tool("read_watch_list", {"watch_list_id": ended}),
        ada.call_tool("read_watch_list", {"watch_list_id": made_up}),
        ada.call_tool("read_watch_list", {"watch_list_id": "not an id at all"}),
        ada.call_tool("read_watch_list", {"watch_list_id": "bsk_" + handle[3:]}),
        bob.call_tool("end_watch_list", {"watch_list_id": handle}),
    ]
    assert [(answer.is_error, answer.text) for answer in answers] == [(True, UNKNOWN)] * 6
    # Bob's attempt to end it ended nothing.
    assert ada.call_tool("read_watch_list", {"watch_list_id": handle}).text == "(none)"


def test_a_malformed_id_never_reaches_host_code_when_the_argument_is_declared():
    result = client("ada").call_tool("watch_city", {"watch_list_id": "wl_short", "city": "x"})
    assert result.is_error
    assert result.text.startswith("invalid arguments for tool 'watch_city'")


def test_a_handle_unused_for_its_idle_lifetime_expires_and_use_moves_it_on(clock):
    mcp = client("ada")
    handle = create(mcp)
    for _ in range(3):  # each use within the hour keeps it: three hours in all
        clock.now += timedelta(minutes=59)
        assert not mcp.call_tool("read_watch_list", {"watch_list_id": handle}).is_error
    clock.now += timedelta(minutes=61)
    assert mcp.call_tool("read_watch_list", {"watch_list_id": handle}).text == UNKNOWN


def test_no_use_keeps_a_handle_past_its_absolute_lifetime(clock):
    mcp = client("ada")
    handle = create(mcp)
    for _ in range(24):
        clock.now += timedelta(minutes=59)
        assert not mcp.call_tool("read_watch_list", {"watch_list_id": handle}).is_error
    clock.now += timedelta(minutes=50)  # 23 h 26 min: still alive, used a minute ago
    clock.now += timedelta(minutes=35)  # past 24 h from its making
    assert mcp.call_tool("read_watch_list", {"watch_list_id": handle}).text == UNKNOWN


def test_the_bound_per_principal_is_refused_by_name_and_freed_by_an_end(clock):
    ada, bob = client("ada"), client("bob")
    handles = [create(ada) for _ in range(3)]
    refused = ada.call_tool("create_watch_list")
    assert (refused.is_error, refused.text) == (
        True,
        "you hold 3 watch lists, the most one caller may: end one before making another",
    )
    assert create(bob)  # a bound per principal
    ada.call_tool("end_watch_list", {"watch_list_id": handles[0]})
    assert create(ada)
    clock.now += timedelta(hours=2)  # expired ones no longer count
    assert [create(ada) for _ in range(3)]


def test_the_minting_tool_s_description_states_the_lifetime():
    tools = {tool["name"]: tool for tool in client("ada").list_tools()}
    assert tools["create_watch_list"]["description"] == (
        "Start a list of cities to watch. Watch lists expire after 1 hour unused and 1 day "
        "after they are made; one caller may hold 3 at once."
    )
    assert tools["watch_city"]["inputSchema"]["properties"]["watch_list_id"] == {
        "type": "string",
        "pattern": "^wl_[A-Za-z0-9_-]{32}$",
        "description": "a watch list id",
    }


def test_at_2026_07_28_with_no_principal_a_handle_is_a_bearer_name():
    mcp = McpClient()  # the sample's AUTHORIZE serves everyone, naming no one
    handle = create(mcp)
    assert McpHandle.objects.get().owner == ""
    assert McpClient().call_tool("read_watch_list", {"watch_list_id": handle}).text == "(none)"


@dataclass(frozen=True)
class Subject:
    """A principal that is no Django model instance (as a JWT's subject is)."""

    issuer: str
    subject: str


def test_a_task_s_run_holds_the_handles_of_an_owner_that_is_no_model_instance():
    """A task's worker cannot rebuild such a caller: it knows it by its key alone
    (``owner_principal``), and the handles the caller minted are still its own there."""
    kinds = kinds_of(SITE)
    minted = HandleBook(kinds, SimpleNamespace(principal=Subject("idp", "ada"))).mint(
        WatchList, {"cities": ["oslo"]}
    )
    found, in_the_worker = owner_principal(principal_key(Subject("idp", "ada")))
    assert found and not isinstance(in_the_worker, Subject)
    there = HandleBook(kinds, SimpleNamespace(principal=in_the_worker))
    assert there.get(WatchList, minted.id).data == {"cities": ["oslo"]}
    _, someone_else = owner_principal(principal_key(Subject("idp", "bob")))
    with pytest.raises(ToolError, match=re.escape(UNKNOWN)):
        HandleBook(kinds, SimpleNamespace(principal=someone_else)).get(WatchList, minted.id)


def test_each_malformed_kind_and_an_unknown_minted_kind_is_refused_by_name():
    from datetime import timedelta as span

    from beammcp_django.handles.kinds import HandleKind, kind_problems

    class Loose(HandleKind):
        kind = "Bad Kind"
        prefix = "wl_"
        idle = span(days=2)
        lifetime = span(days=1)
        per_principal = 0

    assert kind_problems(Loose.spec()) == [
        "its kind is not 1 to 63 of a-z 0-9 _, starting with a letter",
        "its prefix is not 1 to 8 of a-z 0-9, starting with a letter",
        "its idle lifetime is longer than its lifetime",
        "its per_principal is not an integer >= 1",
    ]
    from django.core.checks import run_checks

    site = {**settings.BEAMMCP, "CATALOG": "tests.handles.sites.TWO_KINDS_ONE_PREFIX"}
    with override_settings(BEAMMCP=site):
        found = [m.msg for m in run_checks() if m.id == "beammcp.E034"]
    assert found == ["handle kind Wishlist: has the prefix 'wl' of Basket too"]


def test_the_purge_deletes_what_expired_by_command_and_by_the_tasks_framework(clock):
    from io import StringIO

    from django.core.management import call_command

    from beammcp_django.tasks.handle_purge import purge_handles

    mcp = client("ada")
    kept = create(mcp)
    create(mcp)
    create(mcp)
    clock.now += timedelta(minutes=59)
    mcp.call_tool("read_watch_list", {"watch_list_id": kept})
    # Two are idle past their hour in the real clock's future, one was used: the command
    # and the job read the real clock, so move the rows' ends instead of the clock.
    McpHandle.objects.exclude(handle_id=kept).update(expires_at=timezone.now())
    out = StringIO()
    call_command("mcp_handles", "purge", stdout=out)
    assert out.getvalue() == "purged 2 expired handle(s)\n"
    assert list(McpHandle.objects.values_list("handle_id", flat=True)) == [kept]
    McpHandle.objects.update(expires_at=timezone.now())
    assert purge_handles.call() == 1
    assert not McpHandle.objects.exists()


def test_the_admin_lists_handles_by_kind_and_principal_never_their_data_and_ends_them():
    from django.contrib.admin.utils import quote
    from django.test import Client
    from django.urls import reverse

    mcp = client("ada")
    handle = create(mcp)
    mcp.call_tool("watch_city", {"watch_list_id": handle, "city": "secret-city"})
    staff = Client()
    staff.force_login(User.objects.create_superuser("root", "r@b.invalid", "pw"))
    listing = staff.get(reverse("admin:beammcp_django_mcphandle_changelist")).content.decode()
    assert handle[:12] in listing and "watch_list" in listing
    assert "model:auth.user:" in listing
    # The admin's own quoting of a key in a URL ("_" is its escape; an id holds "_"s).
    change = reverse("admin:beammcp_django_mcphandle_change", args=(quote(handle),))
    assert change in listing
    page = staff.get(change)
    assert page.status_code == 200
    assert "secret-city" not in page.content.decode()
    ended = staff.post(
        reverse("admin:beammcp_django_mcphandle_changelist"),
        {"action": "end_handles", "_selected_action": [handle]},
    )
    assert ended.status_code == 302
    assert mcp.call_tool("read_watch_list", {"watch_list_id": handle}).text == UNKNOWN
