"""The events that end a principal's credentials, connected to ``credentials.end_principal``:
django-oauth-toolkit deleting an access token (its ``revoke()``, the revocation endpoint, a
refresh token's family revoked), a user saved inactive, and a user losing a permission or a
group, or a group losing a permission (its users). Each ends the principal's open streams and
the grants cached for it, in every worker sharing the Channels layer (``credentials.py``).

Connected by ``apps.py`` at startup; the toolkit's receiver only where it is installed.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.db.models.signals import m2m_changed, post_delete, post_save

from beammcp_django.credentials import end_principal

# An m2m change that can take a permission away (an addition cannot).
_TAKING = frozenset({"post_remove", "post_clear"})


def _token_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    user = getattr(instance, "user", None)
    if user is not None:
        end_principal(user)


def _user_saved(sender: Any, instance: Any, **kwargs: Any) -> None:
    if getattr(instance, "is_active", True) is False:
        end_principal(instance)


def _user_lost_something(
    sender: Any, instance: Any, action: str, reverse: bool, pk_set: Any, **kwargs: Any
) -> None:
    """A user's permissions or groups changed: from the user's side (``instance`` is the
    user) or from the permission's or group's side (``pk_set`` names the users)."""
    if action not in _TAKING:
        return
    user_model = get_user_model()
    if isinstance(instance, user_model):
        end_principal(instance)
    elif pk_set:
        for user in user_model._default_manager.filter(pk__in=pk_set):
            end_principal(user)


def _group_lost_a_permission(
    sender: Any, instance: Any, action: str, reverse: bool, **kwargs: Any
) -> None:
    if action not in _TAKING:
        return
    from django.contrib.auth.models import Group

    groups = (
        [instance]
        if isinstance(instance, Group)
        else Group.objects.filter(pk__in=kwargs.get("pk_set") or ())
    )
    user_model = get_user_model()
    for user in user_model._default_manager.filter(groups__in=groups).distinct():
        end_principal(user)


def connect() -> None:
    """Connect the receivers (once: ``dispatch_uid``)."""
    user_model = get_user_model()
    post_save.connect(_user_saved, sender=user_model, dispatch_uid="beammcp.user_saved")
    for field in ("user_permissions", "groups"):
        through = getattr(getattr(user_model, field, None), "through", None)
        if through is not None:
            m2m_changed.connect(
                _user_lost_something, sender=through, dispatch_uid=f"beammcp.user_{field}"
            )
    if apps.is_installed("django.contrib.auth"):
        from django.contrib.auth.models import Group

        m2m_changed.connect(
            _group_lost_a_permission,
            sender=Group.permissions.through,
            dispatch_uid="beammcp.group_permissions",
        )
    if apps.is_installed("oauth2_provider"):
        from oauth2_provider.models import get_access_token_model

        post_delete.connect(
            _token_deleted, sender=get_access_token_model(), dispatch_uid="beammcp.token_deleted"
        )
