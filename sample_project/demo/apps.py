from django.apps import AppConfig


class DemoConfig(AppConfig):
    name = "sample_project.demo"
    label = "demo"
    verbose_name = "Demo weather catalog"
    default_auto_field = "django.db.models.BigAutoField"
