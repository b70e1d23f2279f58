"""The sample as its own authorization server (``BEAMMCP_SAMPLE_AUTH=oauth``, set by the
test before these settings load), fetching client metadata documents from this computer:
the tests' own https server on loopback, its authority named by ``SSL_CERT_FILE``, through
the tests' own fetcher (``tests/oauth/loopback_fetcher.py``): never a setting of the
package's."""

from sample_project.settings import *  # noqa: F403 - the sample's settings, then one more
from sample_project.settings import OAUTH2_PROVIDER

OAUTH2_PROVIDER = {
    **OAUTH2_PROVIDER,
    "CIMD_METADATA_FETCHER": "tests.oauth.loopback_fetcher.LoopbackDocumentFetcher",
}
