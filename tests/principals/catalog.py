"""The principal tools alone, as a catalog a test names in ``BEAMMCP["CATALOG"]``: who is
calling, a tool that needs a scope, and everything host code is handed."""

from beammcp_django.registry import Site
from tests.principals.tools import WhatHostCodeSees, WhoAmI, WhoAmIAsync, WriteNote

site = Site()
site.register(WhoAmI, WhoAmIAsync, WriteNote, WhatHostCodeSees)
