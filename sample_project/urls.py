from django.conf import settings
from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.urls import include, path
from django.views.generic import TemplateView

urlpatterns = [
    path("", TemplateView.as_view(template_name="index.html"), name="home"),
    path("admin/", admin.site.urls),
    path("mcp", include("beammcp_django.urls")),
]

if settings.SAMPLE_AUTH == "oauth":
    # The authorization server (BEAMMCP_SAMPLE_AUTH=oauth): django-oauth-toolkit's
    # endpoints under /o/ (its consent screen the package's, which shows where a client
    # that registered itself came from), its RFC 8414 metadata where clients look for the
    # issuer /o, and the login page its authorize view sends a signed-out user to.
    from oauth2_provider.views import OAuthServerMetadataView

    urlpatterns += [
        path("o/", include("beammcp_django.oauth.server_urls")),
        path(".well-known/oauth-authorization-server/o", OAuthServerMetadataView.as_view()),
        path("accounts/login/", LoginView.as_view(), name="login"),
    ]
