import pytest


@pytest.fixture(autouse=True)
def _no_http_endpoint_unless_asked(request, settings):
    if "with_http_endpoint" not in request.keywords:
        settings.ROOT_URLCONF = f"{__package__}.urls_no_endpoint"
