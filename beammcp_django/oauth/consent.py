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
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

TEMPLATE = "beammcp_django/oauth/authorize.html"


@dataclass(frozen=True)
class ClientShown:
    """What the consent screen says of the client asking."""

    name: str
    # The host the client's metadata document came from; None for a client registered on
    # this server (by an administrator or dynamic registration).
    document_host: str | None
    # Where the browser goes after the answer: a host, or the scheme of an app's own URI.
    redirect_host: str
    # Whether that is this computer (a loopback address or ``localhost``).
    on_this_computer: bool


def shown_client(application: Any, redirect_uri: str) -> ClientShown:
    """The words for ``application`` asking to be answered at ``redirect_uri``."""
    registered_by_document = application.registration_source == "cimd"
    redirect = urlsplit(redirect_uri)
    host = redirect.hostname
    return ClientShown(
        name=application.name,
        document_host=_host_of(application.client_id) if registered_by_document else None,
        redirect_host=_readable_host(host, redirect.port) if host else f"{redirect.scheme}:",
        on_this_computer=host is not None and _is_this_computer(host),
    )


def _host_of(url: str) -> str:
    parts = urlsplit(url)
    return _readable_host(parts.hostname or "", parts.port)


def _readable_host(host: str, port: int | None) -> str:
    """``host`` (with a port other than the scheme's), non-ASCII labels as ``xn--``."""
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        ascii_host = host.encode("ascii", "backslashreplace").decode("ascii")
    return f"{ascii_host}:{port}" if port is not None else ascii_host


def _is_this_computer(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
