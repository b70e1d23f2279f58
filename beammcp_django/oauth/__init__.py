"""The MCP authorization spec, served as an OAuth 2.1 resource server.

``BEAMMCP["AUTHORIZE"] = "beammcp_django.oauth.bearer.authorize"`` serves requests that carry
a bearer token issued for this server (``BEAMMCP["OAUTH"]["RESOURCE"]``), naming the token's
principal and scopes; ``docs/authorization.md`` shows the settings, with django-oauth-toolkit
in the same project or an external issuer's JWTs.
"""
