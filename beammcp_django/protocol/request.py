"""Reading a request: its JSON-RPC envelope, the revision it is served at, and its ``_meta``.

What reading gives is data (``Request``), so a transport can hold its carrier's rules (HTTP
headers that mirror the body) against what the core read, before anything is served; and
what the core does not answer (``Unanswered``) says why, so the transport need not sort the
message again.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from . import revisions
from .context import LOG_LEVELS, RequestContext
from .errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    ProtocolError,
)
from .jsonrpc import RequestId

_VERSION_SHAPE = re.compile(r"[A-Za-z0-9._\-]{1,64}")


# The transport's subscriptions/listen stream: (subscription id, honoured filter, context,
# acknowledge). The transport calls ``acknowledge()`` once it would see a change published
# from then on (it has joined the layer's group): the acknowledgment promises exactly that.
Listener = Callable[[Any, Mapping[str, Any], RequestContext, Callable[[], None]], Awaitable[None]]


class LegacySession:
    """What a 2025-11-25 ``initialize`` negotiated; the only state the core ever keeps."""

    __slots__ = ("client_capabilities", "client_info", "log_level", "subscriptions", "version")

    def __init__(self) -> None:
        self.version: str | None = None
        self.client_capabilities: Mapping[str, Any] = {}
        self.client_info: Mapping[str, Any] | None = None
        self.log_level: str | None = None
        # The resource URIs resources/subscribe named (the transport's session stream
        # delivers their notifications/resources/updated), in subscription order.
        self.subscriptions: dict[str, None] = {}

    def snapshot(self) -> LegacySession:
        """The session as it stands now: a request is served under the state in force when
        it arrived, not under a handshake that a later line made before it ran."""
        copy = LegacySession()
        copy.version = self.version
        copy.client_capabilities = self.client_capabilities
        copy.client_info = self.client_info
        copy.log_level = self.log_level
        copy.subscriptions = self.subscriptions  # read only through the snapshot
        return copy


# The requests that change a legacy session: a transport serves them in arrival order, on the
# session itself, and every other request on a snapshot taken when it arrived.
SESSION_METHODS = frozenset(
    {"initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)


@dataclass(frozen=True)
class Unanswered:
    """A message the core does not answer, and why: a ``notification`` (never answered; a
    transport acts on the ones it owns), or a ``response`` (this server sends no request a
    client could answer). ``problem``: why a notification's envelope is malformed, for a
    transport that refuses those (HTTP), else None."""

    reason: Literal["notification", "response"]
    problem: str | None = None


@dataclass(frozen=True)
class Request:
    """A request after its revision was decided and its ``_meta`` validated
    (``Server.receive``); ``Server.serve`` answers it."""

    id: RequestId
    method: str
    params: Mapping[str, Any]
    version: str
    modern: bool
    capabilities: Mapping[str, Any]
    client_info: Mapping[str, Any] | None
    meta: Mapping[str, Any]
    log_level: str | None
    session: LegacySession | None = None
    listener: Listener | None = None
    # A message of wire.LARGE_MESSAGE_BYTES or more: its arguments are validated off the
    # event loop (``offload``), which then serves other requests part of the time
    # (jsonschema-rs holds the GIL for most of its work: docs/threat-model.md, "Validation").
    large: bool = False


def require_string(params: Mapping[str, Any], key: str) -> str:
    value = params.get(key)
    if type(value) is not str:
        raise ProtocolError(INVALID_PARAMS, f"params.{key} must be a string")
    return value


def optional_object(params: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = params.get(key)
    if value is None:
        return {}
    if type(value) is not dict:
        raise ProtocolError(INVALID_PARAMS, f"params.{key} must be an object")
    return value


def is_implementation(value: Any) -> bool:
    return (
        type(value) is dict and type(value.get("name")) is str and type(value.get("version")) is str
    )


def check_progress_token(meta: Mapping[str, Any]) -> None:
    token = meta.get("progressToken")
    if token is not None and type(token) is not str and type(token) is not int:
        raise ProtocolError(
            INVALID_PARAMS, "params._meta.progressToken must be a string or an integer"
        )


def read_request(
    request_id: RequestId | None,
    message: Mapping[str, Any],
    *,
    legacy: bool,
    session: LegacySession | None,
) -> Request:
    """The request ``message`` holds, at the revision it is served at; ``ProtocolError`` for
    an envelope or ``_meta`` the spec refuses. ``legacy``: the server speaks 2025-11-25 too,
    and ``session`` is the 2025-11-25 session the message arrived in (stdio's connection, an
    HTTP request's ``Mcp-Session-Id``), None when it arrived in none: then only ``initialize``
    or modern ``_meta`` establishes an era."""
    if request_id is None:
        raise ProtocolError(INVALID_REQUEST, "id must be a string or an integer")
    if message.get("jsonrpc") != "2.0":
        raise ProtocolError(INVALID_REQUEST, 'the "jsonrpc" member must be "2.0"')
    method = message.get("method")
    if method is None:
        raise ProtocolError(INVALID_REQUEST, "message has no method")
    if type(method) is not str:
        raise ProtocolError(INVALID_REQUEST, "method must be a string")
    if "_meta" in message:
        raise ProtocolError(
            INVALID_PARAMS,
            "_meta belongs in params._meta, not at the top level of the message",
        )
    params = message.get("params")
    if params is None:
        params = {}
    elif type(params) is not dict:
        raise ProtocolError(INVALID_PARAMS, "params must be an object")
    meta = params.get("_meta")
    if type(meta) is dict and revisions.META_PROTOCOL_VERSION in meta:
        # Modern _meta decides the era, whatever the method: an initialize or a ping that
        # carries it is a 2026-07-28 request, answered as a method that revision lacks.
        return _modern_request(request_id, method, params, meta, legacy=legacy)
    if method == "initialize":
        if not legacy or session is None:  # no session to open: the transport has none
            raise ProtocolError(
                METHOD_NOT_FOUND,
                f"initialize is not served: this endpoint speaks {revisions.MODERN} only",
                {"supported": list(revisions.MODERN_VERSIONS)},
            )
        return _legacy_request(request_id, method, params, meta, session, handshake=True)
    if session is not None and legacy:
        if method == "ping" and meta is None:
            # 2025-11-25 lets a client ping before (or without) the handshake.
            return _legacy_request(request_id, method, params, meta, session)
        if session.version is not None:
            return _legacy_request(request_id, method, params, meta, session)
    return _modern_request(request_id, method, params, meta, legacy=legacy)


def _modern_request(
    request_id: RequestId, method: str, params: Mapping[str, Any], meta: Any, *, legacy: bool
) -> Request:
    if meta is None:
        hint = " (a 2025-11-25 client sends initialize first)" if legacy else ""
        raise ProtocolError(INVALID_PARAMS, f"params._meta is required at {revisions.MODERN}{hint}")
    if type(meta) is not dict:
        raise ProtocolError(INVALID_PARAMS, "params._meta must be an object")
    if revisions.META_PROTOCOL_VERSION not in meta:
        raise ProtocolError(
            INVALID_PARAMS, f"params._meta is missing '{revisions.META_PROTOCOL_VERSION}'"
        )
    version = meta[revisions.META_PROTOCOL_VERSION]
    if type(version) is not str or not _VERSION_SHAPE.fullmatch(version):
        raise ProtocolError(
            INVALID_PARAMS, f"params._meta '{revisions.META_PROTOCOL_VERSION}' is not a version"
        )
    if version not in revisions.MODERN_VERSIONS:
        raise ProtocolError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "unsupported protocol version",
            {"supported": revisions.served(legacy), "requested": version},
        )
    if revisions.META_CLIENT_CAPABILITIES not in meta:
        raise ProtocolError(
            INVALID_PARAMS,
            f"params._meta is missing '{revisions.META_CLIENT_CAPABILITIES}'",
        )
    capabilities = meta[revisions.META_CLIENT_CAPABILITIES]
    if type(capabilities) is not dict:
        raise ProtocolError(
            INVALID_PARAMS,
            f"params._meta '{revisions.META_CLIENT_CAPABILITIES}' must be an object",
        )
    client_info = meta.get(revisions.META_CLIENT_INFO)
    if client_info is not None and not is_implementation(client_info):
        raise ProtocolError(
            INVALID_PARAMS,
            f"params._meta '{revisions.META_CLIENT_INFO}' must be an object with string "
            "name and version",
        )
    log_level = meta.get(revisions.META_LOG_LEVEL)
    if log_level is not None and log_level not in LOG_LEVELS:
        raise ProtocolError(
            INVALID_PARAMS, f"params._meta '{revisions.META_LOG_LEVEL}' is not a log level"
        )
    check_progress_token(meta)
    return Request(
        id=request_id,
        method=method,
        params=params,
        version=version,
        modern=True,
        capabilities=capabilities,
        client_info=client_info,
        meta=meta,
        log_level=log_level,
    )


def _legacy_request(
    request_id: RequestId,
    method: str,
    params: Mapping[str, Any],
    meta: Any,
    session: LegacySession | None,
    *,
    handshake: bool = False,
) -> Request:
    if meta is None:
        meta = {}
    elif type(meta) is not dict:
        raise ProtocolError(INVALID_PARAMS, "params._meta must be an object")
    check_progress_token(meta)
    if handshake or session is None:
        return Request(
            request_id, method, params, revisions.LEGACY, False, {}, None, meta, None, session
        )
    return Request(
        id=request_id,
        method=method,
        params=params,
        version=session.version or revisions.LEGACY,
        modern=False,
        capabilities=session.client_capabilities,
        client_info=session.client_info,
        meta=meta,
        log_level=session.log_level,
        session=session,
    )
