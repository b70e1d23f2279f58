"""The sample's routes with django-oauth-toolkit's own URLs under ``o/`` (its authorize view,
not the consent view of ``beammcp_django.oauth.server_urls``): what ``beammcp.W011`` finds."""

from django.urls import include, path

from sample_project.urls import urlpatterns as sample

urlpatterns = [*sample, path("o/", include("oauth2_provider.urls"))]
