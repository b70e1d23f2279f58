"""The project's own authorization server (django-oauth-toolkit), where it serves clients
that register themselves: what a person approving one must be shown.

Checked only with ``oauth2_provider`` installed; the toolkit's own checks cover the rest of
its settings.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.checks import CheckMessage, Warning, register
from django.urls import NoReverseMatch, resolve, reverse

from beammcp_django.checks.ids import check_id


@register("beammcp")
def check_authorization_server(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """With clients' metadata documents served (``CIMD_ENABLED``), a client names itself:
    the consent page must say where it came from, which the toolkit's own page does not."""
    if not apps.is_installed("oauth2_provider"):
        return []
    from oauth2_provider.settings import oauth2_settings

    if not oauth2_settings.CIMD_ENABLED or _consent_shows_the_document_host():
        return []
    return [
        Warning(
            "OAUTH2_PROVIDER['CIMD_ENABLED'] is on, but the toolkit's authorize URL is not "
            "served by the consent view that shows where a client's document came from: "
            "a person cannot tell a client from a look-alike that copied its name",
            hint="Include 'beammcp_django.oauth.server_urls' in place of 'oauth2_provider.urls'.",
            id=check_id("consent_without_document_host"),
        )
    ]


def _consent_shows_the_document_host() -> bool:
    """Whether the URL the toolkit sends a person to for consent is the package's view (no
    such URL at all: nobody is asked to consent here)."""
    try:
        view = resolve(reverse("oauth2_provider:authorize")).func
    except NoReverseMatch:
        return True
    served = getattr(view, "view_class", None)
    from beammcp_django.oauth.server_urls import ConsentView

    return isinstance(served, type) and issubclass(served, ConsentView)
