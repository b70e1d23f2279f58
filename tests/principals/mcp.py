"""The principal tools on the default site, beside the sample catalog."""

from beammcp_django import mcp
from tests.principals.tools import WhoAmI, WhoAmIAsync

mcp.site.register(WhoAmI, WhoAmIAsync)
