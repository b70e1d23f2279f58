from django.apps import AppConfig


class McpHttpTestAppConfig(AppConfig):
    name = "tests.http.mcphttp_app"
    label = "mcphttp_app"
    verbose_name = "Helpers for the real-server HTTP tests"
    default_auto_field = "django.db.models.BigAutoField"
