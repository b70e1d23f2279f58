"""A test-only Django app for the observability tests (installed by
``tests.observability.settings``): the server process's in-memory span exporter read through
a tool, tools that report the span current in host code, and counters of Django's request
signals read through a view."""
