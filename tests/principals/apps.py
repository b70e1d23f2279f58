from django.apps import AppConfig


class PrincipalsConfig(AppConfig):
    name = "tests.principals"
    label = "principals"
    verbose_name = "Who is calling, for the principal tests"
    default_auto_field = "django.db.models.BigAutoField"
