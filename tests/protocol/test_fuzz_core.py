"""A structure-aware fuzz target for the core: bytes through ``wire.decode``, messages through
``Server.handle`` (both eras, sessions opened or not), URIs through the template matcher,
every reply and every notification held against the ``schema.json`` of its revision.

Messages are built from the shapes the spec defines and then damaged: ids of every JSON
type, ``jsonrpc`` and ``method`` wrong, params and ``_meta`` missing, mistyped or hostile,
arguments and URIs from the hostile alphabets, bytes cut or spliced. Whatever arrives, the
core answers a request with exactly one well-formed response, never a notification, never
raises, and never sends a value the schema refuses. Bounded: a few hundred examples each.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from beammcp_django.protocol import jsonrpc, wire
from beammcp_django.protocol.errors import ProtocolError
from beammcp_django.protocol.request import LegacySession, Unanswered
from beammcp_django.protocol.revisions import LEGACY, MODERN
from tests.support import examples
from tests.wire_schema import problems

from .conftest import make_server, meta
from .test_replies_fit_the_schema import ShapesCatalog

FUZZ = settings(
    max_examples=examples(300),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

METHODS = [
    "server/discover", "initialize", "ping", "logging/setLevel", "tools/list", "tools/call",
    "resources/list", "resources/templates/list", "resources/read", "prompts/list",
    "prompts/get", "completion/complete", "subscriptions/listen", "resources/subscribe",
    "notifications/cancelled", "notifications/initialized", "tasks/get", "", "x" * 200,
    "tools/call\n", "<b>",
]  # fmt: skip
HOSTILE_TEXT = st.text(
    st.characters(exclude_categories=()) | st.sampled_from(list('/\\.%"<>\n\x00')), max_size=40
)
IDS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=20),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
    HOSTILE_TEXT,
)  # fmt: skip
VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["a", "b", "text", "uri", "name", "_meta"]), children, max_size=4
        )
    ),
    max_leaves=10,
)
TOOLS = st.sampled_from(
    ["add", "crash", "echo", "oracle", "order", "refuse", "report", "weather", "nope"]
)
URIS = st.one_of(
    st.sampled_from(["config://app", "config://binary", "config://empty", "users://42/profile"]),
    st.builds(lambda tail: "file:///docs/" + tail, HOSTILE_TEXT),
    st.builds(lambda tail: "users://" + tail + "/profile", HOSTILE_TEXT),
    HOSTILE_TEXT,
)
LEVELS = st.sampled_from(["debug", "info", "error", "loud", 7])


@st.composite
def request_meta(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["modern", "modern", "modern", "none", "legacy", "junk"]))
    if kind == "none":
        return None
    if kind == "junk":
        return draw(VALUES)
    if kind == "legacy":
        return draw(st.fixed_dictionaries({}, optional={"progressToken": IDS}))
    extra: dict[str, Any] = {}
    if draw(st.booleans()):
        extra["progressToken"] = draw(IDS)
    if draw(st.booleans()):
        extra["io.modelcontextprotocol/logLevel"] = draw(LEVELS)
    value = meta(**extra)
    for key in draw(st.sets(st.sampled_from(list(value)), max_size=1)):
        if draw(st.booleans()):
            del value[key]
        else:
            value[key] = draw(VALUES)
    return value


@st.composite
def params_for(draw: st.DrawFn, method: str) -> Any:
    params: dict[str, Any] = {}
    if method == "tools/call":
        params["name"] = draw(TOOLS | HOSTILE_TEXT)
        params["arguments"] = draw(
            st.one_of(
                st.fixed_dictionaries({"a": st.integers(), "b": st.integers()}),
                st.dictionaries(
                    st.sampled_from(["a", "b", "mode", "lines", "code"]), VALUES, max_size=3
                ),
                VALUES,
            )
        )
    elif method == "resources/read":
        params["uri"] = draw(URIS | VALUES)
    elif method == "prompts/get":
        params["name"] = draw(st.sampled_from(["greet", "summary", "nope"]) | HOSTILE_TEXT)
        params["arguments"] = draw(
            st.dictionaries(st.sampled_from(["name", "tone", "x"]), VALUES, max_size=2)
        )
    elif method == "completion/complete":
        params["ref"] = draw(
            st.sampled_from(
                [
                    {"type": "ref/prompt", "name": "greet"},
                    {"type": "ref/resource", "uri": "file:///docs/{name}"},
                ]
            )
            | VALUES
        )
        params["argument"] = draw(
            st.fixed_dictionaries({"name": HOSTILE_TEXT, "value": HOSTILE_TEXT}) | VALUES
        )
    elif method == "initialize":
        params = {
            "protocolVersion": draw(st.sampled_from([LEGACY, "2025-06-18", "1999-01-01"]) | VALUES),
            "capabilities": draw(st.just({}) | VALUES),
            "clientInfo": draw(st.just({"name": "fuzz", "version": "1"}) | VALUES),
        }
    elif method == "logging/setLevel":
        params["level"] = draw(LEVELS)
    elif method.endswith("/list") and draw(st.booleans()):
        params["cursor"] = draw(HOSTILE_TEXT | VALUES)
    if draw(st.booleans()):
        params["_meta"] = draw(request_meta())
    if draw(st.integers(0, 9)) == 0:
        return draw(VALUES)  # params that are not an object at all
    return params


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    method = draw(st.sampled_from(METHODS))
    message: dict[str, Any] = {
        "jsonrpc": draw(st.sampled_from(["2.0", "2.0", "2.0", "1.0"]) | VALUES)
    }
    if draw(st.integers(0, 5)):
        message["id"] = draw(IDS)
    if draw(st.integers(0, 9)):
        message["method"] = method
    else:
        message["method"] = draw(VALUES)
    message["params"] = draw(params_for(method))
    if draw(st.integers(0, 19)) == 0:
        message["_meta"] = {}
    return message


def revision_of(message: dict[str, Any], session: LegacySession) -> str:
    params = message.get("params")
    request_meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(request_meta, dict) and "io.modelcontextprotocol/protocolVersion" in request_meta:
        return MODERN
    if message.get("method") == "initialize" or session.version is not None:
        return LEGACY
    if message.get("method") == "ping" and request_meta is None:
        return LEGACY  # 2025-11-25 lets a client ping before the handshake
    return MODERN


def serve(server: Any, message: Any, session: LegacySession) -> tuple[Any, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []
    reply = asyncio.run(server.handle(message, session=session, emit=sent.append))
    return reply, sent


def check(message: Any, reply: Any, sent: list[dict[str, Any]], revision: str) -> None:
    is_request = isinstance(message, dict) and "id" in message
    is_response = (
        isinstance(message, dict)
        and "method" not in message
        and ("result" in message or "error" in message)
    )
    if not is_request or is_response:
        # A response carries an id; a notification does not (a non-object is refused).
        if isinstance(message, dict):
            reason = "response" if is_response else "notification"
            assert reply == Unanswered(reason, reply.problem), (message, reply)
        assert sent == []
        return
    assert type(reply) is dict, message
    method = message.get("method") if isinstance(message.get("method"), str) else None
    assert problems(revision, method, reply) == [], (message, reply)
    request_id = jsonrpc.readable_id(message)
    if request_id is None:
        assert "id" not in reply
    else:
        assert reply["id"] == request_id
    for notification in sent:
        assert problems(revision, None, notification) == [], notification


@FUZZ
@given(message=messages(), handshake=st.booleans())
@example(message={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, handshake=True)
@example(
    message={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "primes"}},
    handshake=True,
)
@example(message={"jsonrpc": "1.0", "id": 3, "method": "tools/list"}, handshake=False)
@example(message={"jsonrpc": "2.0", "id": None, "method": "ping"}, handshake=True)
@example(message={"jsonrpc": "2.0", "id": 0, "method": "ping", "params": {}}, handshake=False)
def test_any_message_gets_one_answer_that_fits_the_schema_of_its_revision(message, handshake):
    server = make_server(ShapesCatalog(), legacy=True)
    session = LegacySession()
    if handshake:
        opening = {
            "jsonrpc": "2.0",
            "id": "open",
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "f", "version": "1"},
            },
        }
        assert "result" in serve(server, opening, session)[0]
    revision = revision_of(message, session)
    reply, sent = serve(server, message, session)
    check(message, reply, sent, revision)


@FUZZ
@given(
    message=messages(), cut=st.integers(min_value=0, max_value=400), splice=st.binary(max_size=8)
)
def test_any_bytes_are_decoded_and_answered_or_refused_with_an_error_that_fits(
    message, cut, splice
):
    data = wire.encode(message)
    damaged = data[:cut] + splice + data[cut:] if splice else data
    try:
        decoded = wire.decode(damaged)
    except ProtocolError as refused:
        error = jsonrpc.refusal(None, refused)
        for revision in (MODERN, LEGACY):
            assert problems(revision, None, error) == []
        assert len(refused.message) < 200
        return
    server = make_server(ShapesCatalog(), legacy=True)
    session = LegacySession()
    reply, sent = serve(server, decoded, session)
    check(decoded, reply, sent, revision_of(decoded, session))
