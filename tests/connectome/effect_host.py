"""Host functions for tests/connectome/test_effect_observer.py: the observer's scope is this
module alone, so the test's own frames are never on a counted chain."""

from __future__ import annotations

from typing import Any

from beammcp_django.connectome.core.effects import MAIL, Effect
from sample_project.demo.models import Observation


def helper(observer: Any) -> None:
    observer.note(Effect(MAIL), "mail")


def handler(observer: Any) -> None:
    helper(observer)


def read_and_write() -> None:
    list(Observation.objects.filter(city="oslo"))
    Observation.objects.create(city="oslo", temperature_c=1.0)


def first(observer: Any) -> None:
    helper(observer)


def second(observer: Any) -> None:
    helper(observer)
