"""Django's ``request_started`` and ``request_finished`` on the MCP path: whether a receiver
other than Django's own listens, and sending them as Django's ASGI handler does
(``RequestSignals``)."""

from __future__ import annotations

import logging
from typing import Any

from django.core.cache import close_caches
from django.core.handlers.base import reset_urlconf
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, reset_queries

logger = logging.getLogger("beammcp_django")


class RequestSignals:
    """Whether ``request_started``/``request_finished`` have a receiver for ``sender`` other
    than Django's own, and sending them as Django's ASGI handler does.

    Django's own receivers (``close_old_connections``, ``reset_queries``, ``close_caches``,
    ``reset_urlconf``) look after the thread that served a request; on the MCP path sync host
    code runs in worker threads that close old connections around every call, and the async
    ORM's connection is tidied after the calls that used it (``runtime.async_orm``). So for them
    alone the signals would buy nothing and cost about 215 µs a request (their
    ``sync_to_async`` hops; 14 to 19 µs even run inline: bench/observability.py,
    docs/performance.md). A host's own receiver (an APM agent's, a metrics counter) makes
    them worth it: then both are sent with ``asend``, the sync receivers in Django's
    thread-sensitive executor.
    """

    DJANGO_OWN = frozenset({close_old_connections, reset_queries, close_caches, reset_urlconf})

    def __init__(self, sender: Any) -> None:
        self.sender = sender
        self._seen: tuple[list[Any], list[Any]] | None = None
        self._wanted = False

    def wanted(self) -> bool:
        started, finished = request_started.receivers, request_finished.receivers
        seen = self._seen
        if seen is not None and seen[0] == started and seen[1] == finished:
            return self._wanted
        self._seen = (list(started), list(finished))
        self._wanted = self._foreign(request_started) or self._foreign(request_finished)
        return self._wanted

    def _foreign(self, signal: Any) -> bool:
        # Django's private ``Signal._live_receivers(sender)``: its (sync, async) receivers for
        # ``sender``, dead weak references dropped. It stays because no public API names a
        # signal's receivers: ``has_listeners`` is always true here (Django connects its own
        # to both signals), and sending is what this spares. Checked against Django 5.2.19
        # and 6.1.3 (requirements/base.txt); tests/observability/test_signal_receivers.py
        # fails if it changes. Should it change anyway, the fallback sends both signals:
        # slower, never a receiver missed. (``receivers``, read in ``wanted``, only decides
        # when to ask again: any change of it asks again.)
        try:
            sync_receivers, async_receivers = signal._live_receivers(self.sender)
        except (AttributeError, TypeError, ValueError):
            return bool(signal.receivers)  # a Django whose internals moved: send them
        return bool(async_receivers) or any(r not in self.DJANGO_OWN for r in sync_receivers)

    async def started(self, scope: Any) -> None:
        try:
            await request_started.asend(sender=self.sender, scope=scope)
        except Exception:
            logger.exception("a request_started receiver raised; the MCP request is served")

    async def finished(self) -> None:
        try:
            await request_finished.asend(sender=self.sender)
        except Exception:
            logger.exception("a request_finished receiver raised")
