"""The hosts' ``OAUTH["JWT"]["PRINCIPAL"]`` hooks the tests name: a token's ``sub`` mapped
to an active Django user (run on the validator's worker thread, so it may query the ORM);
None, for a subject with no such user, refuses the token."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model


def user_of(claims: dict[str, Any]) -> Any:
    return get_user_model().objects.filter(username=claims["sub"], is_active=True).first()
