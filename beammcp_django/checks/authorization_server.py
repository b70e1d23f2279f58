"""The project's own authorization server (django-oauth-toolkit), where it serves clients
that register themselves: what a person approving one must be shown, and the fetcher that
must not reach production.

Checked only with ``oauth2_provider`` installed; the toolkit's own checks cover the rest of
its settings.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.checks import CheckMessage, Warning, register
from django.urls import NoReverseMatch, resolve, reverse

from beammcp_django.checks.ids import check_id

LOOPBACK_FETCHER = "beammcp_django.oauth.client_documents.LoopbackDocumentFetcher"


@register("beammcp")
def check_authorization_server(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    if not apps.is_installed("oauth2_provider"):
        return []
    from oauth2_provider.settings import oauth2_settings

    found: list[CheckMessage] = []
    fetcher = oauth2_settings.CIMD_METADATA_FETCHER
    if f"{fetcher.__module__}.{fetcher.__qualname__}" == LOOPBACK_FETCHER:
        found.append(
            Warning(
                "OAUTH2_PROVIDER['CIMD_METADATA_FETCHER'] is the loopback fetcher: client "
                "metadata documents are fetched from this computer only, for tests",
                hint="Leave the setting out in production: the toolkit's SafeMetadataFetcher "
                "fetches from public addresses only.",
                id=check_id("loopback_client_documents"),
            )
        )
    if oauth2_settings.CIMD_ENABLED and not _consent_shows_the_document_host():
        found.append(
            Warning(
                "OAUTH2_PROVIDER['CIMD_ENABLED'] is on, but the toolkit's authorize URL is not "
                "served by the consent view that shows where a client's document came from: "
                "a person cannot tell a client from a look-alike that copied its name",
                hint="Include 'beammcp_django.oauth.server_urls' in place of "
                "'oauth2_provider.urls'.",
                id=check_id("consent_without_document_host"),
            )
        )
    return found


def _consent_shows_the_document_host() -> bool:
    try:
        view = resolve(reverse("oauth2_provider:authorize")).func
    except NoReverseMatch:
        return True  # no authorize endpoint: nobody is asked to consent here
    served = getattr(view, "view_class", None)
    from beammcp_django.oauth.server_urls import ConsentView

    return isinstance(served, type) and issubclass(served, ConsentView)
