"""The URLs of the project's own authorization server: django-oauth-toolkit's, with its
authorize view replaced by the consent screen of ``consent.py``.

Include it where the toolkit's URLs would go, under the toolkit's namespace, which its
views reverse: ``path("o/", include("beammcp_django.oauth.server_urls"))``. Imported only
there: the toolkit's views need ``oauth2_provider`` installed.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import path
from oauth2_provider import urls as toolkit
from oauth2_provider.views import AuthorizationView

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


app_name = toolkit.app_name

urlpatterns = [
    path("authorize/", ConsentView.as_view(), name="authorize"),
    *(pattern for pattern in toolkit.urlpatterns if getattr(pattern, "name", None) != "authorize"),
]
