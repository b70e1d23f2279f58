"""The sample's settings with the CSP probe app installed (``tests/ui/test_apps_host.py``)."""

from sample_project.settings import *  # noqa: F403

INSTALLED_APPS = [*INSTALLED_APPS, "tests.ui.probe"]  # noqa: F405
