from django.http import HttpRequest, JsonResponse

from tests.observability.probe import signals


def signal_counts(request: HttpRequest) -> JsonResponse:
    """The request signals counted so far (this request's own request_started included)."""
    return JsonResponse(signals.snapshot())
