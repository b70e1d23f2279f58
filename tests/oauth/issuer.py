"""A test issuer of JWT access tokens: key pairs made here with ``cryptography``, a JWKS
served by a real ``http.server`` on a loopback thread (the validator fetches it over HTTP,
as from any issuer), and ``mint`` signing the claims a test names.

The server's answer is the test's to change while it runs: rotate the keys, take it down
(503), redirect, make it oversized or drip it, count its requests (so a test sees every
fetch the validator made).
Shared by the validator's own tests and the real ``mcp_serve`` test, whose server process
fetches from this thread.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa

ISSUER = "http://127.0.0.1:8000/o"
RESOURCE = "http://127.0.0.1:8000/mcp"


@dataclass(frozen=True)
class KeyPair:
    """A signing key, the ``kid`` it is published under and the algorithm it signs with."""

    kid: str
    algorithm: str
    private: Any

    @classmethod
    def rsa(cls, kid: str, algorithm: str = "RS256", bits: int = 2048) -> KeyPair:
        return cls(kid, algorithm, rsa.generate_private_key(public_exponent=65537, key_size=bits))

    @classmethod
    def ec(cls, kid: str) -> KeyPair:
        return cls(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))

    def jwk(self) -> dict[str, Any]:
        """The public key as its JWKS entry."""
        algorithm = jwt.get_algorithm_by_name(self.algorithm)
        public = json.loads(algorithm.to_jwk(self.private.public_key()))
        return {**public, "kid": self.kid, "use": "sig", "alg": self.algorithm}


def claims(
    subject: str = "ada",
    scopes: Sequence[str] = ("notes.read",),
    *,
    audience: str | Sequence[str] = RESOURCE,
    issuer: str = ISSUER,
    expires_in: float = 600,
    **more: Any,
) -> dict[str, Any]:
    """An access token's claims, RFC 9068's shape, valid now unless a test says otherwise."""
    now = int(time.time())
    value = {
        "iss": issuer,
        "sub": subject,
        "aud": audience if isinstance(audience, str) else list(audience),
        "exp": now + int(expires_in),
        "iat": now,
        "jti": f"{subject}-{time.monotonic_ns()}",
        "client_id": "test-client",
        "scope": " ".join(scopes),
    }
    value.update(more)
    return value


def mint(
    key: KeyPair,
    payload: Mapping[str, Any] | None = None,
    *,
    typ: str | None = "at+jwt",
    kid: str | None = None,
    algorithm: str | None = None,
) -> str:
    """``payload`` (default: ``claims()``) signed by ``key``, under its kid unless another is
    named, with RFC 9068's ``typ`` unless another (or None, none at all) is named."""
    # PyJWT writes "typ": "JWT" unless told otherwise; None drops the header.
    headers: dict[str, Any] = {"kid": kid or key.kid, "typ": typ}
    return jwt.encode(
        dict(payload or claims()),
        key.private,
        algorithm=algorithm or key.algorithm,
        headers=headers,
    )


class JwksServer:
    """The issuer's JWKS endpoint on 127.0.0.1, on a free port, in a daemon thread."""

    def __init__(self, keys: Sequence[KeyPair] = ()) -> None:
        self.requests = 0
        self.status = 200
        self.drip = 0.0  # seconds between the body's bytes; 0 sends it at once
        self.body = b""
        self.publish(keys)
        served = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                served.requests += 1
                body = served.body if served.status == 200 else b'{"error":"down"}'
                self.send_response(served.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                if 300 <= served.status < 400:
                    self.send_header("Location", "http://127.0.0.1:9/elsewhere.json")
                self.end_headers()
                if not served.drip:
                    self.wfile.write(body)
                    return
                for byte in body:  # a stalling issuer: one byte, then a wait
                    try:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                    except OSError:
                        return
                    time.sleep(served.drip)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # shutdown() waits for the loop's next poll: at the default 0.5 s, most of a test.
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/jwks.json"

    def publish(self, keys: Sequence[KeyPair], *, padding: int = 0) -> None:
        """Serve these keys from now on (``padding`` extra bytes make the document big)."""
        document: dict[str, Any] = {"keys": [key.jwk() for key in keys]}
        if padding:
            document["padding"] = "x" * padding
        self.body = json.dumps(document).encode()
        self.status = 200

    def start(self) -> JwksServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(timeout=5)


@contextmanager
def jwks_server(keys: Sequence[KeyPair]) -> Iterator[JwksServer]:
    server = JwksServer(keys).start()
    try:
        yield server
    finally:
        server.stop()
