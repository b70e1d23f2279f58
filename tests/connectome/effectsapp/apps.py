from django.apps import AppConfig


class EffectsConfig(AppConfig):
    name = "tests.connectome.effectsapp"
    label = "effectsapp"
    verbose_name = "Tools with effects, for the connectome's effect tests"
