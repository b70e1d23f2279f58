from django.apps import AppConfig


class ProbeConfig(AppConfig):
    name = "tests.observability.probe"
    label = "observability_probe"
    verbose_name = "Probes for the observability tests"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from tests.observability.probe import signals

        signals.connect()
