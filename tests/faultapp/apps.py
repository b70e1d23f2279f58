from django.apps import AppConfig


class FaultAppConfig(AppConfig):
    name = "tests.faultapp"
    label = "faultapp"
    verbose_name = "Fault injection for the stdio tests"
    default_auto_field = "django.db.models.BigAutoField"
