"""The principal tools alone, as a catalog a test names in ``BEAMMCP["CATALOG"]``."""

from beammcp_django.registry import Site
from tests.principals.tools import WhoAmI, WhoAmIAsync

site = Site()
site.register(WhoAmI, WhoAmIAsync)
