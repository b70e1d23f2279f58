"""Client ID Metadata Documents on the django-oauth-toolkit path: the tests' fetcher.

The toolkit serves CIMD itself (``OAUTH2_PROVIDER["CIMD_ENABLED"]``): it fetches the
document of an ``https`` ``client_id`` with its ``SafeMetadataFetcher`` (the resolved
address checked public and connected to directly, no redirect, one deadline, a size cap,
the cache lifetime clamped from ``Cache-Control``, a failure backoff, an in-flight cap),
holds the document's ``client_id`` to the URL and the request's ``redirect_uri`` to the
document's list, and keeps the client as a public ``Application`` it refreshes when stale.
The package adds the consent screen (``beammcp_django/oauth/consent.py``); here is what a
test needs that a production server must never do, so it lives with the tests and is not
shipped: fetch a document from this computer.

``LoopbackDocumentFetcher`` is named by ``OAUTH2_PROVIDER["CIMD_METADATA_FETCHER"]`` in
``loopback_documents_settings.py``. It fetches only from a loopback address, over https
verified against the default trust store (``SSL_CERT_FILE`` names the test's authority),
with the toolkit's timeout for the whole fetch and no redirect, and reads the answer with
the toolkit's own reader (size cap, content type, JSON: ``SafeMetadataFetcher._read_document``,
a private method of 3.4.1's, which this test fetcher may lean on).
"""

from __future__ import annotations

import ipaddress
import ssl
from typing import Any
from urllib.parse import urlsplit

import urllib3
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher, _validate_client_id_url
from oauth2_provider.settings import oauth2_settings


class LoopbackDocumentFetcher(SafeMetadataFetcher):
    """Fetches a client's metadata document from this computer only. For tests."""

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        _validate_client_id_url(client_id)  # the toolkit's rules for the URL, as its fetcher
        parts = urlsplit(client_id)
        host = parts.hostname or ""
        if not _is_loopback(host):
            raise CIMDError("the loopback fetcher fetches https documents from this computer only")
        timeout = oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        pool = urllib3.HTTPSConnectionPool(
            host=host,
            port=parts.port or 443,
            timeout=urllib3.Timeout(connect=timeout, read=timeout, total=timeout),
            retries=False,
            maxsize=1,
            ssl_context=ssl.create_default_context(),
        )
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        try:
            response = pool.urlopen(
                "GET",
                target,
                headers={"Accept": "application/json"},
                redirect=False,
                preload_content=False,
            )
            try:
                return self._read_document(response)
            finally:
                response.release_conn()
        except urllib3.exceptions.HTTPError as error:
            raise CIMDError(f"could not fetch client_id document: {type(error).__name__}") from None
        finally:
            pool.close()


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
