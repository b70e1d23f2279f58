"""``BEAMMCP['FREEZE_HEAP_AT_STARTUP']``: the process builds its server at startup and then
moves every object alive into the collector's permanent generation; off, nothing changes."""

from __future__ import annotations

import gc

import pytest
from django.test import override_settings

from beammcp_django import process as servers
from beammcp_django.asgi import get_asgi_application
from beammcp_django.conf import get_settings


def _with_freeze(flag: bool) -> override_settings:
    return override_settings(BEAMMCP={**get_settings(), "FREEZE_HEAP_AT_STARTUP": flag})


@pytest.fixture
def unfrozen():
    """Give the test process its collector back whatever the test froze."""
    gc.unfreeze()
    servers.forget_servers()
    yield
    gc.unfreeze()
    servers.forget_servers()


def test_on_the_asgi_application_builds_the_server_then_freezes_the_heap(unfrozen):
    with _with_freeze(True):
        get_asgi_application()
        frozen = gc.get_freeze_count()
        built = servers._build_server.cache_info().currsize
        server = servers.get_server()
    assert built == 1  # the HTTP server was built before the freeze, not at first request
    assert frozen > 10_000  # Django's startup heap, and the catalog with it
    # The server the first request gets is the one built (and frozen) at startup.
    assert gc.is_tracked(server)
    assert server not in gc.get_objects()  # frozen objects are outside every generation


def test_off_nothing_is_built_early_and_nothing_is_frozen(unfrozen):
    with _with_freeze(False):
        get_asgi_application()
        frozen = gc.get_freeze_count()
        built = servers._build_server.cache_info().currsize
    assert (frozen, built) == (0, 0)


def test_stdio_prepares_its_own_dual_era_server(unfrozen):
    with _with_freeze(True):
        servers.prepare_process(stdio=True)
        legacy = servers.get_server(stdio=True)
        frozen = gc.get_freeze_count()
    assert legacy.options.legacy is True
    assert frozen > 10_000
    assert legacy not in gc.get_objects()
