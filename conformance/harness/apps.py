from __future__ import annotations

from django.apps import AppConfig


class ConformanceHarnessConfig(AppConfig):
    name = "conformance.harness"
    label = "conformance_harness"
    verbose_name = "MCP conformance harness"
