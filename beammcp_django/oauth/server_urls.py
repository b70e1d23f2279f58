"""The URLs of the project's own authorization server: django-oauth-toolkit's, with its
authorize view replaced by the consent screen of ``consent.py`` and its registration
endpoint held to the bounds of ``registration.py``.

Include it where the toolkit's URLs would go, under the toolkit's namespace, which its
views reverse: ``path("o/", include("beammcp_django.oauth.server_urls"))``. Imported only
there: the toolkit's views need ``oauth2_provider`` installed.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path
from oauth2_provider import urls as toolkit
from oauth2_provider.models import get_application_model
from oauth2_provider.views import (
    AuthorizationView,
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
)

from beammcp_django.oauth import registration
from beammcp_django.oauth.consent import TEMPLATE, asks_every_time, shown_client


class ConsentView(AuthorizationView):
    """The toolkit's authorize view, its page saying who asks, where their description came
    from and where the answer goes (``consent.shown_client``)."""

    template_name = TEMPLATE

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        asked = request.GET
        if asks_every_time(asked.get("client_id", ""), asked.get("redirect_uri", "")):
            query = asked.copy()
            query["approval_prompt"] = "force"
            request.GET = query
        return super().get(request, *args, **kwargs)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        application, redirect_uri = context.get("application"), context.get("redirect_uri")
        if application is not None and redirect_uri:
            context["client"] = shown_client(application, redirect_uri)
        return context


class BoundedRegistrationView(DynamicClientRegistrationView):
    """The toolkit's RFC 7591 endpoint (``DCR_ENABLED``), each registration first held to
    ``BEAMMCP["CLIENT_REGISTRATION"]``: size, rate per address, count, and what its
    ``application_type`` admits (``registration.py``)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        refused = registration.size_refusal(_declared_length(request))
        if refused is None:
            refused = registration.rate_refusal(request.META.get("REMOTE_ADDR", ""))
        if refused is None:
            model = get_application_model()
            source = model.RegistrationSource.DCR
            registered = model.objects.filter(registration_source=source).count()
            refused = registration.count_refusal(registered)
        if refused is None:
            refused = _metadata_refusal(request)
        if refused is not None:
            return _refusal(refused)
        return super().post(request, *args, **kwargs)


class BoundedRegistrationManagementView(DynamicClientRegistrationManagementView):
    """The toolkit's RFC 7592 endpoint: a client holding its registration token replaces
    its metadata (``PUT``) within the same size and ``application_type`` rules as it
    registered with."""

    def put(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        refused = registration.size_refusal(_declared_length(request))
        if refused is None:
            refused = _metadata_refusal(request)
        if refused is not None:
            return _refusal(refused)
        return super().put(request, *args, **kwargs)


def _metadata_refusal(request: HttpRequest) -> registration.Refused | None:
    """The body's size, then what its ``application_type`` admits."""
    refused = registration.size_refusal(len(request.body))
    if refused is None:
        refused = registration.application_type_refusal(_json_or_none(request.body))
    return refused


def _declared_length(request: HttpRequest) -> int:
    """The body's declared length, read before the body is (0 when absent or unreadable:
    the body's own length is checked next)."""
    try:
        return max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0


def _json_or_none(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None  # the toolkit names a body that is not JSON (or nested past reading)


def _refusal(refused: registration.Refused) -> JsonResponse:
    response = JsonResponse(
        {"error": refused.error, "error_description": refused.description},
        status=refused.status,
    )
    if refused.retry_after is not None:
        response["Retry-After"] = str(refused.retry_after)
    return response


app_name = toolkit.app_name

# The toolkit's patterns these views replace, by URL name.
_REPLACED = {"authorize", "dcr-register", "dcr-register-management"}
urlpatterns = [
    path("authorize/", ConsentView.as_view(), name="authorize"),
    path("register/", BoundedRegistrationView.as_view(), name="dcr-register"),
    path(
        "register/<str:client_id>/",
        BoundedRegistrationManagementView.as_view(),
        name="dcr-register-management",
    ),
    *(
        pattern
        for pattern in toolkit.urlpatterns
        if getattr(pattern, "name", None) not in _REPLACED
    ),
]
