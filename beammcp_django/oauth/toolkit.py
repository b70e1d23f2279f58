"""django-oauth-toolkit's access tokens, in this project's database: the embedded default,
with which a Django project is its own authorization server (``oauth2_provider`` installed,
its URLs included; docs/authorization.md).

The token's audience is the RFC 8707 ``resource`` the client asked for and the toolkit
recorded on it. A token issued with no ``resource`` names no audience, and the bearer
authorizer refuses it: the toolkit calls such a token unrestricted, but the MCP spec has the
server accept only tokens issued for itself.
"""

from __future__ import annotations

import hashlib
from types import MappingProxyType

from beammcp_django.oauth.tokens import AccessToken, InvalidToken
from beammcp_django.protocol.context import EMPTY


class ToolkitTokens:
    """Looks tokens up as the toolkit stores them (by their SHA-256 checksum)."""

    def validate(self, token: str) -> AccessToken:
        from oauth2_provider.models import get_access_token_model

        checksum = hashlib.sha256(token.encode("utf-8")).hexdigest()
        found = (
            get_access_token_model()
            .objects.select_related("user", "application")
            .filter(token_checksum=checksum)
            .first()
        )
        if found is None:
            raise InvalidToken("no such access token (unknown or revoked)")
        if found.expires is None:
            raise InvalidToken(f"access token {found.pk} has no expiry")
        user = found.user
        if user is not None and not user.is_active:
            raise InvalidToken(f"access token {found.pk} belongs to an inactive user")
        principal = user if user is not None else found.application
        application = found.application
        return AccessToken(
            principal=principal,
            scopes=frozenset(found.scope.split()),
            audiences=frozenset(found.resource or ()),
            expires_at=found.expires.timestamp(),
            subject=f"access token {found.pk}",
            # The client the token was issued to (a metadata document's URL, for a client
            # that registered itself that way).
            claims=MappingProxyType({"client_id": application.client_id}) if application else EMPTY,
        )
