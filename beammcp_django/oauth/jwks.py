"""The issuer's public keys (its JWKS, RFC 7517), fetched over HTTP with every wait and size
bounded, and kept for a while.

The policy, in one place (``JwksCache``):

- A fetched key set is trusted for ``JWKS_CACHE_SECONDS``; after that it is fetched again
  before any token is verified with it, so a key the issuer removed stops being accepted.
- A token naming a ``kid`` the set lacks fetches it again (the issuer may have rotated to a
  new key), but never sooner than ``JWKS_REFETCH_SECONDS`` after the last fetch: a flood of
  tokens with forged kids costs the issuer one request per interval, not one per token.
- A failed fetch counts as a fetch for that interval too, and fails closed: no key is
  trusted past its set's expiry because the issuer cannot be reached.

Fetches run on the bearer authorizer's worker threads, one at a time: a token whose set has
expired waits for the fetch under way (bounded by its timeout) instead of making its own; a
token whose ``kid`` a fresh set lacks does not wait, and is refused while another thread
fetches; a token whose key is in a fresh set never waits for a fetch at all. Only the
standard library is used here: the keys are parsed by the validator (``jwt.py``), which owns
the PyJWT import.
"""

from __future__ import annotations

import http.client
import json
import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from beammcp_django.oauth.tokens import InvalidToken

logger = logging.getLogger("beammcp_django.http")

JwkDict = Mapping[str, Any]


class JwksUnavailable(Exception):
    """The key set could not be had; the message says why (for the log)."""


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A JWKS URL names the keys' home: a redirect elsewhere (or down to plain http) is
    answered as the failure it would hide."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirects)


def fetch_jwks(url: str, timeout: float, max_bytes: int) -> list[JwkDict]:
    """The keys ``url`` serves, read within ``timeout`` seconds in all and ``max_bytes``."""
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise JwksUnavailable(f"it declares {declared} bytes, over {max_bytes}")
            body = _read_bounded(response, max_bytes, deadline)
    except urllib.error.HTTPError as error:
        error.close()
        raise JwksUnavailable(f"it answered HTTP {error.code}") from None
    except urllib.error.URLError as error:
        raise JwksUnavailable(f"unreachable ({error.reason})") from None
    except (OSError, http.client.HTTPException) as error:
        raise JwksUnavailable(f"unreachable ({type(error).__name__}: {error})") from None
    return _keys_of(body)


def _read_bounded(response: Any, max_bytes: int, deadline: float) -> bytes:
    """The body, refused once it passes ``max_bytes`` or the deadline (a slow drip too)."""
    body = bytearray()
    while chunk := response.read1(16_384):
        body += chunk
        if len(body) > max_bytes:
            raise JwksUnavailable(f"it is larger than {max_bytes} bytes")
        if time.monotonic() > deadline:
            raise JwksUnavailable("it was not read within the fetch's time bound")
    return bytes(body)


def _keys_of(body: bytes) -> list[JwkDict]:
    """The signature keys of a JWKS document: entries for encryption (``use`` other than
    ``sig``) and shared secrets (``kty`` ``oct``, never public) are left out."""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        raise JwksUnavailable("it is not JSON") from None
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        raise JwksUnavailable('it is not a JWKS (no "keys" list)')
    return [
        key
        for key in keys
        if isinstance(key, dict)
        and isinstance(key.get("kty"), str)
        and key.get("kty") != "oct"
        and key.get("use", "sig") == "sig"
    ]


@dataclass
class KeySet:
    """One fetched set: its keys by ``kid`` (None for a key without one), and when it was
    fetched, on the cache's clock."""

    by_kid: dict[str | None, list[JwkDict]]
    fetched_at: float
    # What the validator built from a key, per (kid, algorithm): parsing is done once.
    parsed: dict[tuple[str | None, str], Any] = field(default_factory=dict)

    @classmethod
    def of(cls, keys: Sequence[JwkDict], fetched_at: float) -> KeySet:
        by_kid: dict[str | None, list[JwkDict]] = {}
        for key in keys:
            kid = key.get("kid")
            by_kid.setdefault(kid if isinstance(kid, str) else None, []).append(key)
        return cls(by_kid, fetched_at)

    def candidates(self, kid: str | None) -> list[JwkDict]:
        """The keys a token naming ``kid`` may be verified with; a token naming none only
        when the set holds exactly one key."""
        if kid is not None:
            return self.by_kid.get(kid, [])
        every = [key for keys in self.by_kid.values() for key in keys]
        return every if len(every) == 1 else []


class JwksCache:
    """The issuer's key set, fetched when needed under the policy above."""

    def __init__(
        self,
        url: str,
        *,
        cache_seconds: float,
        refetch_seconds: float,
        timeout: float,
        max_bytes: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.cache_seconds = cache_seconds
        self.refetch_seconds = refetch_seconds
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.fetches = 0
        self._clock = clock
        self._keys: KeySet | None = None
        self._last_attempt: float | None = None
        self._last_failure: str | None = None
        self._lock = threading.Lock()

    def key_set_for(self, kid: str | None) -> KeySet:
        """A fresh key set holding ``kid``, or InvalidToken naming why there is none."""
        known = self._fresh()
        if known is not None and known.candidates(kid):
            return known
        # A miss against a fresh set never waits for another thread's fetch: a flood of
        # forged kids while the issuer is slow would otherwise hold a worker thread each.
        if not self._lock.acquire(blocking=known is None):
            raise InvalidToken(
                f"{_kid(kid)} is not in the JWKS at {self.url} (a fetch is under way)"
            )
        try:
            known = self._fresh()  # another thread may have fetched while this one waited
            if known is None or not known.candidates(kid):
                known = self._refetch(kid, known)
        finally:
            self._lock.release()
        if not known.candidates(kid):
            raise InvalidToken(f"{_kid(kid)} is not in the JWKS at {self.url}, just fetched")
        return known

    def _refetch(self, kid: str | None, known: KeySet | None) -> KeySet:
        """Under the lock: the set fetched again, unless the last attempt was too recent;
        a failure keeps a still-fresh set (``known``) and drops an expired one."""
        now = self._clock()
        if self._last_attempt is not None and now - self._last_attempt < self.refetch_seconds:
            raise InvalidToken(self._why_not(kid, known, now))
        self._last_attempt = now
        self.fetches += 1
        try:
            keys = fetch_jwks(self.url, self.timeout, self.max_bytes)
        except JwksUnavailable as failure:
            self._last_failure = str(failure)
            if known is None:
                self._keys = None  # expired, and not renewed: no key is trusted
            logger.warning("The JWKS at %s could not be fetched: %s", self.url, failure)
            raise InvalidToken(f"the JWKS at {self.url} could not be fetched: {failure}") from None
        self._last_failure = None
        self._keys = KeySet.of(keys, now)
        return self._keys

    def _fresh(self) -> KeySet | None:
        keys = self._keys
        if keys is None or self._clock() - keys.fetched_at >= self.cache_seconds:
            return None
        return keys

    def _why_not(self, kid: str | None, known: KeySet | None, now: float) -> str:
        since = now - (self._last_attempt or now)
        again = f"fetched {since:.0f} s ago, at most every {self.refetch_seconds:g} s"
        if self._last_failure is not None:
            return f"the JWKS at {self.url} could not be fetched ({again}): {self._last_failure}"
        if known is None:
            return f"the JWKS at {self.url} has expired and is not due to be fetched ({again})"
        return f"{_kid(kid)} is not in the JWKS at {self.url} ({again})"


def _kid(kid: str | None) -> str:
    return (
        "the token names no kid, and the JWKS holds more than one key"
        if kid is None
        else (f"kid {kid[:64]!r}")
    )
