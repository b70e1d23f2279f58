"""The consent screen of the project's own authorization server: django-oauth-toolkit's
authorize view, saying what a person needs to tell a client from a look-alike.

A client that registered itself through a Client ID Metadata Document chose its own name.
The screen shows that name *and the host its document came from* (the ``client_id`` URL's,
which the toolkit fetched and held to equal the document's ``client_id``): a look-alike
can copy a name, not a host. It names the host the browser is sent to after the answer
(the spec: the redirect URI's host MUST be clearly displayed), and warns when that host is
this computer, where any program could have claimed the name (the spec: SHOULD warn for
``localhost``-only redirect URIs). Internationalised host names are shown in their ASCII
(``xn--``) form, where a homograph cannot pass for the host it imitates.

The toolkit decides everything else (which client, which redirect URI, PKCE, the grant);
the view (``server_urls.ConsentView``, where the toolkit is imported) only adds these words
to its page.
"""

from __future__ import annotations

import ipaddress
import unicodedata
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

TEMPLATE = "beammcp_django/oauth/authorize.html"


@dataclass(frozen=True)
class ClientShown:
    """What the consent screen says of the client asking."""

    name: str
    # How the client came to be known here: "document" (it registered itself through its
    # metadata document), "registered itself" (dynamic registration), or "registered".
    origin: str
    # The host the client's metadata document came from; None for the other two.
    document_host: str | None
    # Where the browser goes after the answer: a host, or the scheme of an app's own URI.
    redirect_host: str
    # Whether that is this computer (a loopback address or ``localhost``).
    on_this_computer: bool


# The toolkit's ``Application.registration_source`` values, and what the screen calls each.
_ORIGINS = {"cimd": "document", "dcr": "registered itself"}


def shown_client(application: Any, redirect_uri: str) -> ClientShown:
    """The words for ``application`` asking to be answered at ``redirect_uri``."""
    origin = _ORIGINS.get(application.registration_source, "registered")
    redirect = urlsplit(redirect_uri)
    host = redirect.hostname
    return ClientShown(
        name=_printable(application.name),
        origin=origin,
        document_host=_host_of(application.client_id) if origin == "document" else None,
        redirect_host=_readable_host(host, redirect.port) if host else f"{redirect.scheme}:",
        on_this_computer=host is not None and is_this_computer(host),
    )


def asks_every_time(client_id: str, redirect_uri: str) -> bool:
    """Whether a request must show the consent screen even to a person who approved this
    client before (the toolkit skips it for ``approval_prompt=auto``): a client that named
    itself through a document, or whose answer goes to this computer, where any program
    could send the same request and take the code silently."""
    host = urlsplit(redirect_uri).hostname
    return client_id[:8].lower() == "https://" or (host is not None and is_this_computer(host))


def _printable(text: str) -> str:
    """``text`` without control or format characters (a right-to-left override in a name
    would reorder the sentence around it)."""
    return "".join(ch for ch in text if unicodedata.category(ch) not in ("Cc", "Cf"))


def _host_of(url: str) -> str:
    parts = urlsplit(url)
    return _readable_host(parts.hostname or "", parts.port)


def _readable_host(host: str, port: int | None) -> str:
    """``host`` as the address bar shows it: IPv6 in brackets, a port when the URL names
    one, non-ASCII labels in their ``xn--`` form (IDNA 2003, Python's codec: the form the
    server's own fetch resolved)."""
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        ascii_host = host.encode("ascii", "backslashreplace").decode("ascii")
    if ":" in ascii_host:
        ascii_host = f"[{ascii_host}]"
    return f"{ascii_host}:{port}" if port is not None else ascii_host


def is_this_computer(host: str) -> bool:
    """Whether ``host`` names this computer: ``localhost`` (and its subdomains), a loopback
    address (IPv4 mapped into IPv6 included), or the unspecified address."""
    name = host.rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified
