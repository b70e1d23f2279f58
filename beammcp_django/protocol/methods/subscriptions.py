"""The subscriptions family: ``subscriptions/listen`` (2026-07-28), the stream a transport
holds open; ``resources/subscribe`` and ``resources/unsubscribe`` (2025-11-25), which
change what a session's stream carries."""

from __future__ import annotations

from typing import Any

from .. import jsonrpc
from ..access import admitted, hides
from ..context import RequestContext
from ..errors import INVALID_PARAMS, METHOD_NOT_FOUND, ProtocolError
from ..listen_filter import (
    MAX_SUBSCRIBED_URI_CHARS,
    MAX_SUBSCRIBED_URIS,
    SUBSCRIPTION_ID,
    listen_filter,
)
from ..request import LegacySession, Request, require_string
from ..results import not_found
from .base import Handler, ServerBase
from .skills import usable
from .tasks import watched_tasks


async def listen(server: ServerBase, request: Request, context: RequestContext) -> dict[str, Any]:
    """Let the transport stream until it ends, acknowledging the filter once it listens,
    then close."""
    stream = request.listener
    if stream is None or not server.options.subscriptions:
        raise ProtocolError(METHOD_NOT_FOUND, server.no_method(request.method, True))
    honoured = listen_filter(request.params)
    if "taskIds" in honoured:
        honoured["taskIds"] = await watched_tasks(server, request, honoured["taskIds"], context)
    delivered = await _deliverable(server, honoured, context)
    tag = {SUBSCRIPTION_ID: request.id}

    def acknowledge() -> None:
        context.send(
            jsonrpc.notification(
                "notifications/subscriptions/acknowledged",
                {"notifications": honoured, "_meta": tag},
            )
        )

    await stream(request.id, delivered, context, acknowledge)
    return {"_meta": tag}


async def _deliverable(
    server: ServerBase, honoured: dict[str, Any], context: RequestContext
) -> dict[str, Any]:
    """The filter the stream is served by: ``honoured`` less the URIs that only entries
    hidden from this caller serve. The acknowledgment still names them, as it names a
    URI nothing serves, so the caller cannot tell a hidden resource from an unknown one;
    and no change of a hidden one reaches it (no oracle). The gates of every URI are
    asked in one batch."""
    uris = honoured.get("resourceSubscriptions")
    if not uris:
        return honoured
    index = server.index()
    matches = {uri: list(index.matches(uri)) for uri in uris}
    accesses = [match.spec.access for found in matches.values() for match in found]
    if not any(hides(access) for access in accesses):
        return honoured
    verdicts = iter(await admitted(accesses, context))
    kept = []
    for uri, found in matches.items():
        shown = [next(verdicts) for _ in found]
        if not found or any(shown):
            kept.append(uri)
    return {**honoured, "resourceSubscriptions": kept}


async def subscribe(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    """2025-11-25 ``resources/subscribe``: the session's stream then carries
    ``notifications/resources/updated`` for the URI. Only a URI the catalog serves (a
    resource, one a template matches, a skill's file the caller may read), at most
    ``MAX_SUBSCRIBED_URIS`` of them, each at most ``MAX_SUBSCRIBED_URI_CHARS`` long: what a
    session holds is bounded."""
    session = _subscribing_session(server, request)
    uri = require_string(request.params, "uri")
    if len(uri) > MAX_SUBSCRIBED_URI_CHARS:
        raise ProtocolError(
            INVALID_PARAMS,
            f"a subscribed URI is at most {MAX_SUBSCRIBED_URI_CHARS} characters",
        )
    index = server.index()
    skill_file = index.skill_files.get(uri)
    served = skill_file is not None and await usable(skill_file[0], index.read_access, context)
    if not served and await server.visible_match(uri, context) is None:
        raise not_found(uri, request.modern)
    if uri not in session.subscriptions:
        if len(session.subscriptions) >= MAX_SUBSCRIBED_URIS:
            raise ProtocolError(
                INVALID_PARAMS,
                f"a session holds at most {MAX_SUBSCRIBED_URIS} resource "
                "subscriptions: unsubscribe from one first",
            )
        session.subscriptions[uri] = None
    return {}


async def unsubscribe(
    server: ServerBase, request: Request, context: RequestContext
) -> dict[str, Any]:
    session = _subscribing_session(server, request)
    session.subscriptions.pop(require_string(request.params, "uri"), None)
    return {}


def _subscribing_session(server: ServerBase, request: Request) -> LegacySession:
    """The session a subscription request changes; only a transport that carries a
    session's notifications (HTTP's GET stream) serves these methods."""
    if not server.options.subscriptions or request.session is None:
        raise ProtocolError(
            METHOD_NOT_FOUND,
            f"{request.method} is not served on this transport: it has no stream to "
            "carry the notifications",
        )
    return request.session


MODERN: dict[str, Handler] = {"subscriptions/listen": listen}
LEGACY_ONLY: dict[str, Handler] = {
    "resources/subscribe": subscribe,
    "resources/unsubscribe": unsubscribe,
}
