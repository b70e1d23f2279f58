"""The observed graph's mail hook: an email backend that counts what host calls send.

Set ``EMAIL_BACKEND = "beammcp_django.connectome.mail.ObservingEmailBackend"`` and name the
backend that really sends in ``BEAMMCP["CONNECTOME_EMAIL_BACKEND"]``: every message it
sends during a host call is counted as the ``mail`` effect of that call (and of the host
functions on the stack, ``effect_observer``). Outside a host call, and with observing off,
it only hands the messages on. Nothing of a message (recipients, subject, body) is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.mail.backends.base import BaseEmailBackend
from django.core.mail.message import EmailMessage
from django.utils.module_loading import import_string

from beammcp_django.conf import get_settings
from beammcp_django.connectome.core.effects import MAIL, Effect

from .exports import effect_slot


class ObservingEmailBackend(BaseEmailBackend):
    """Hands every call to the backend ``BEAMMCP["CONNECTOME_EMAIL_BACKEND"]`` names."""

    def __init__(self, fail_silently: bool = False, **kwargs: Any) -> None:
        super().__init__(fail_silently=fail_silently)
        path = get_settings()["CONNECTOME_EMAIL_BACKEND"]
        if not path:
            raise ValueError(
                "ObservingEmailBackend needs BEAMMCP['CONNECTOME_EMAIL_BACKEND']: the dotted "
                "path of the backend that sends (beammcp.E140 says so at startup)"
            )
        self.wrapped = import_string(path)(fail_silently=fail_silently, **kwargs)

    def open(self) -> Any:
        return self.wrapped.open()

    def close(self) -> None:
        self.wrapped.close()

    def send_messages(self, email_messages: Sequence[EmailMessage]) -> int:
        sent = self.wrapped.send_messages(email_messages) or 0
        observer = effect_slot.observer
        if observer is not None:
            for _ in range(sent):  # one effect a message
                observer.note(Effect(MAIL), MAIL, depth=2)
        return sent
