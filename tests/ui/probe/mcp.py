"""A view whose script tries, at run time, a connection its csp does not declare (the URL is
computed, so no startup check sees it: the host's policy is what stops it), and reports the
browser's verdict to the host as a log message."""

from __future__ import annotations

from beammcp_django import mcp


@mcp.site.register
class CspProbe(mcp.UiResource):
    uri = "ui://probe/csp"
    name = "csp-probe"
    template_name = "probe/probe.html"
    csp = {"connectDomains": ["https://declared.example.com"]}


@mcp.site.register
class ProbeCsp(mcp.Tool):
    name = "probe_csp"
    meta = {"ui": {"resourceUri": "ui://probe/csp"}}

    def call(self, arguments, context):
        return "the probe's view reports what its policy blocked"


@mcp.site.register
class WhoAmIView(mcp.UiResource):
    """A view that shows who the server says is calling: the admin preview's test of record
    that a view's calls reach the endpoint as the logged-in user."""

    uri = "ui://probe/who-am-i"
    name = "who-am-i"
    template_name = "probe/who_am_i.html"


@mcp.site.register
class WhoAmI(mcp.Tool):
    """Who is calling, as the endpoint knows them; for users who may view users."""

    name = "probe_who_am_i"
    permissions = ["auth.view_user"]
    meta = {"ui": {"resourceUri": "ui://probe/who-am-i", "visibility": ["model", "app"]}}

    def call(self, arguments, context):
        principal = context.principal
        return f"you are {principal.get_username() if principal is not None else 'nobody'}"


@mcp.site.register
class ModelOnly(mcp.Tool):
    """A tool the who-am-I view draws but may not call (``visibility: ["model"]``): a host
    refuses the view's call of it."""

    name = "probe_model_only"
    meta = {"ui": {"resourceUri": "ui://probe/who-am-i", "visibility": ["model"]}}

    def call(self, arguments, context):
        return "a host let the view call a model-only tool"
