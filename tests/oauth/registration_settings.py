"""The sample as its own authorization server (``BEAMMCP_SAMPLE_AUTH=oauth``, set by the
test before these settings load) with dynamic client registration open to anyone, as an
MCP client needs it, and its bounds from the environment, so a test can reach each."""

import os

from sample_project.settings import *  # noqa: F403 - the sample's settings, then these
from sample_project.settings import BEAMMCP, OAUTH2_PROVIDER

OAUTH2_PROVIDER = {
    **OAUTH2_PROVIDER,
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
}
BEAMMCP["CLIENT_REGISTRATION"] = {
    "PER_ADDRESS": int(os.environ["TEST_REGISTRATIONS_PER_ADDRESS"]),
    "CLIENTS": int(os.environ["TEST_REGISTERED_CLIENTS"]),
    "METADATA_BYTES": 2048,
    # One window for the whole test: a count that straddled two windows would reset.
    "WINDOW_SECONDS": 10**8,
}
