"""Multi-round-trip requests (2026-07-28): a host answers ``InputRequired``, the client
retries with ``inputResponses`` and the sealed ``requestState``. In a 2025-11-25 session the
same ``InputRequired`` is served as that revision serves input: server-to-client requests
the transport sends on the call's stream (``ask_in_session``), after which the host is called
again with the answers, so a host asks once and works at both eras.

The core seals and opens states through the transport's ``StateCodec`` (the Django layer
signs them with the host's keys) and binds each to the request it belongs to, so a state
cannot be replayed on another tool, prompt, resource or set of arguments.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from . import revisions
from .catalog import InputRequired
from .context import RequestContext
from .errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MISSING_CLIENT_CAPABILITY,
    HostContractError,
    ProtocolError,
)
from .inputs import CAPABILITY_OF
from .request import Request, optional_object

# The arguments as a request binding digests them (what json.dumps with these options writes),
# built once: json.dumps with options builds a new encoder on every call.
_canonical_json = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


class InvalidState(Exception):
    """A ``requestState`` that fails its integrity check, has expired, or belongs elsewhere."""


class StateCodec(Protocol):
    """Seals a host's ``InputRequired.state`` into ``requestState`` and opens it on retry.

    ``binding`` names the request the state belongs to (method, name or URI, a digest of the
    arguments); ``open`` must refuse a token sealed for another binding.
    """

    def seal(self, state: Any, binding: str) -> str: ...

    def open(self, token: str, binding: str) -> Any: ...


def binding(request: Request, target: str, arguments: Any) -> str:
    """What a ``requestState`` is sealed to: the method, the tool, prompt or URI, and a
    digest of the arguments. Computed only when a state is opened or sealed: encoding
    the arguments costs 30 ms a MiB, which most calls never need."""
    digest = hashlib.sha256(_canonical_json.encode(arguments).encode("utf-8")).hexdigest()[:32]
    return f"{request.method}\x00{target}\x00{digest}"


def receive_inputs(
    states: StateCodec | None,
    request: Request,
    context: RequestContext,
    target: str,
    arguments: Any,
) -> None:
    """Check a retry's inputResponses and requestState, and hand them to the context."""
    params = request.params
    if not request.modern:
        return
    responses = optional_object(params, "inputResponses")
    for value in responses.values():
        if type(value) is not dict:
            raise ProtocolError(
                INVALID_PARAMS, "params.inputResponses holds an answer that is not an object"
            )
    context.input_responses = responses
    token = params.get("requestState")
    if token is not None:
        if type(token) is not str:
            raise ProtocolError(INVALID_PARAMS, "params.requestState must be a string")
        if states is None:
            raise ProtocolError(INVALID_PARAMS, "params.requestState was not issued here")
        try:
            context.request_state = states.open(token, binding(request, target, arguments))
        except InvalidState as refusal:
            raise ProtocolError(INVALID_PARAMS, f"params.requestState {refusal}") from None


def input_required(
    states: StateCodec | None,
    value: InputRequired,
    request: Request,
    target: str,
    arguments: Any,
) -> dict[str, Any]:
    """The ``input_required`` result for what the host asked, its state sealed to this
    request; -32021 when the client declared none of the capabilities the inputs need."""
    if not request.modern:
        raise HostContractError(
            "a handler returned InputRequired to a 2025-11-25 request, which cannot "
            "carry it; check context.protocol_version first"
        )
    kept, missing = askable(value, request.capabilities)
    result: dict[str, Any] = {"resultType": "input_required"}
    if kept:
        result["inputRequests"] = kept
    if value.state is not None:
        if states is None:
            raise HostContractError("InputRequired.state needs a state codec on the server")
        # Sealed to the arguments as the retry will carry them: a handler reads its
        # arguments, it does not change them (docs/host-contract.md).
        result["requestState"] = states.seal(value.state, binding(request, target, arguments))
    if len(result) == 1:
        # Every input needs a capability this client lacks: nothing could be asked.
        raise ProtocolError(
            MISSING_CLIENT_CAPABILITY,
            "the request needs client capabilities it did not declare",
            {"requiredCapabilities": missing},
        )
    return result


# An asker sends one server-to-client request and returns the client's result for it.
Ask = Callable[[str, Mapping[str, Any]], Awaitable[Mapping[str, Any]]]
# Rounds of input one 2025-11-25 call may ask for before its host code is taken as looping.
MAX_SESSION_ROUNDS = 8


async def ask_in_session(
    ask: Ask,
    value: InputRequired,
    request: Request,
    context: RequestContext,
    again: Callable[[], Awaitable[Any]],
) -> Any:
    """What the host answers once its ``InputRequired`` rounds are served in a 2025-11-25
    session: each input request the session's client declared a capability for is sent as
    a server-to-client request (``ask``), and the host is called again with the answers as
    ``context.input_responses`` and its ``state`` as ``context.request_state``, as a
    2026-07-28 retry would bring them; the state never leaves the server, so nothing is
    sealed."""
    for _ in range(MAX_SESSION_ROUNDS):
        kept, missing = askable(value, request.capabilities)
        if not kept:
            raise ProtocolError(
                INVALID_REQUEST,
                "the request needs client capabilities the session did not declare",
                {"requiredCapabilities": missing},
            )
        answers = {}
        for key, input_request in kept.items():
            params = _params_at(input_request, request.version)
            answers[key] = await ask(input_request["method"], params)
        context.input_responses = answers
        context.request_state = value.state
        value = await again()
        if not isinstance(value, InputRequired):
            return value
    raise HostContractError(
        f"a handler still answered InputRequired after {MAX_SESSION_ROUNDS} rounds of input"
    )


def _params_at(input_request: Mapping[str, Any], version: str) -> Mapping[str, Any]:
    """An input request's params as ``version`` carries them: 2025-06-18's
    ``elicitation/create`` is a form with no ``mode`` member, and has no URL mode."""
    params = input_request.get("params") or {}
    if (
        version != revisions.LEGACY_2025_06_18
        or input_request.get("method") != "elicitation/create"
    ):
        return params
    if params.get("mode", "form") != "form":
        raise ProtocolError(
            INVALID_REQUEST,
            f"the request asks for a {params.get('mode')!s:.16} elicitation, which a "
            f"{version} session cannot carry",
        )
    return {name: value for name, value in params.items() if name != "mode"}


def askable(
    value: InputRequired, declared: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The input requests the client's declared capabilities can answer, by key, and the
    capabilities the others need; a request that is no input request is a host fault."""
    kept: dict[str, Any] = {}
    missing: dict[str, Any] = {}
    for key, input_request in value.requests.items():
        needed = CAPABILITY_OF.get(input_request.get("method"))  # type: ignore[arg-type]
        if needed is None:
            raise HostContractError(
                f"input request '{key}' is not elicitation/create, sampling/createMessage "
                "or roots/list (use beammcp_django.protocol.inputs)"
            )
        if needed in declared:
            kept[key] = dict(input_request)
        else:
            missing[needed] = {}
    return kept, missing
