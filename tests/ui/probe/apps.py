from django.apps import AppConfig


class ProbeConfig(AppConfig):
    """A view that tries a load its CSP does not declare, for the host test."""

    name = "tests.ui.probe"
    label = "mcp_apps_probe"
