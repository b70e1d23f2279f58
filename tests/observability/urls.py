from django.urls import path

from sample_project.urls import urlpatterns as sample_urlpatterns
from tests.observability.probe.views import signal_counts

urlpatterns = [*sample_urlpatterns, path("probe/signals", signal_counts)]
