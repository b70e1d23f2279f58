"""Ending a principal's credentials at once: their open streams and the grants cached for them,
in every worker.

A revoked token, a deactivated user or a removed permission used to keep working for as long
as each worker had it cached: the bearer token cache (``OAUTH["TOKEN_CACHE_SECONDS"]``) held
the grant, with the user object whose permissions Django had cached, and an open stream asked
the ``AUTHORIZE`` hook again only every ``SUBSCRIPTION_REAUTHORIZE_SECONDS``. ``end_principal``
forgets this process's cached grants of the principal and publishes the end on the Channels
layer: every listen stream and session stream of that principal ends (whichever worker holds
it), and every worker that serves bearer tokens forgets its cached grants too. Without a
shared layer (no ``CHANNEL_LAYERS``) only this process hears it; other processes then learn
of the end when their cached grant lapses.

The package calls it itself when django-oauth-toolkit deletes an access token (its
revocation), when a user is saved inactive, and when a user's permissions or groups, or a
group's permissions, lose an entry (``apps.py`` connects the receivers). A host calls it on
anything else that ends a principal's right to be served (logout, a revocation of its own).
Safe from sync code and from async code, as ``notify.publish`` is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from beammcp_django import notify
from beammcp_django.protocol.listen_filter import PRINCIPAL_ENDED
from beammcp_django.protocol.principal import principal_key

logger = logging.getLogger("beammcp_django")

# The group every bearer-serving process listens on to forget its cached grants (streams end
# on the change feed's ``PRINCIPAL_ENDED`` event, ``notify.GROUP``).
GROUP = "beammcp.credentials"
EVENT_TYPE = "beammcp.credentials"
# channels_redis forgets a group's members after a day (its group_expiry): joined again hourly.
REJOIN_SECONDS = 3600.0


# What this process caches per principal, each a function forgetting one principal's entries
# by key (the bearer token cache registers itself when it is imported).
_caches: list[Callable[[str], object]] = []


def caches_grants(forget: Callable[[str], object]) -> Callable[[str], object]:
    """Register ``forget(key)``: called with each ended principal's key in this process."""
    _caches.append(forget)
    return forget


def _forget_locally(key: str) -> None:
    for forget in _caches:
        forget(key)


async def aend_principal(principal: Any) -> None:
    """End ``principal``'s streams and cached grants in every worker sharing the layer."""
    key = principal_key(principal)
    if not key:  # nobody: no stream or grant is anybody's
        return
    _forget_locally(key)
    try:
        await notify.apublish({"kind": PRINCIPAL_ENDED, "principal": key})
        if notify.layer_is_shared():
            layer = notify.channel_layer()
            await layer.group_send(GROUP, {"type": EVENT_TYPE, "principal": key})
    except Exception as error:  # the layer's store is down: never into the host's operation
        _publishing.failed(error)
    else:
        _publishing.worked()


class _Outage:
    """One log line per outage of the layer the ends are published on."""

    def __init__(self) -> None:
        self.down = False

    def failed(self, error: Exception) -> None:
        if not self.down:
            self.down = True
            logger.warning(
                "an ended principal could not be published (%s): other workers forget its "
                "cached grants when they lapse, and its streams at their next re-check",
                type(error).__name__,
            )

    def worked(self) -> None:
        if self.down:
            self.down = False
            logger.warning("ended principals are published again")


_publishing = _Outage()


def end_principal(principal: Any) -> None:
    """``aend_principal``, from sync or async code (scheduled on a running loop)."""
    notify.run_or_schedule(aend_principal(principal))


class _Listener:
    """This process's listener on ``GROUP``: started once per event loop by the first bearer
    request (``ensure_listening``), only where the layer is shared (in process, ``end_principal``
    forgets directly). A layer that fails (Redis down) is logged once per outage and retried."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[None] | None = None

    def ensure(self) -> None:
        loop = asyncio.get_running_loop()
        if self.loop is loop:
            return
        self.loop = loop
        if notify.layer_is_shared():
            self.task = loop.create_task(self._run())

    async def _run(self) -> None:
        failing = False
        while True:
            try:
                layer = notify.channel_layer()
                channel = await layer.new_channel()
                await layer.group_add(GROUP, channel)
                joined = time.monotonic()
                if failing:
                    logger.warning("the credentials feed is back: ended principals are heard")
                    failing = False
                while time.monotonic() - joined < REJOIN_SECONDS:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(REJOIN_SECONDS):
                            event = await layer.receive(channel)
                            key = event.get("principal")
                            if type(key) is str:
                                _forget_locally(key)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the layer's store is down: say so once, retry
                if not failing:
                    logger.warning(
                        "the credentials feed failed (%s); cached grants of ended principals "
                        "lapse with the token cache until it is back",
                        type(error).__name__,
                    )
                    failing = True
                await asyncio.sleep(1.0)


_listener = _Listener()


def ensure_listening() -> None:
    """Start this process's listener on the running loop, once (a dict lookup after that)."""
    _listener.ensure()
