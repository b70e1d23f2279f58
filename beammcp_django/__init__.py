"""beammcp-django: a Model Context Protocol server as a Django app.

The public API for hosts lives in ``beammcp_django.mcp`` (classes to declare tools, resources
and prompts, the default site, content builders). This module stays import-light so that
``INSTALLED_APPS`` can name it before Django is set up.
"""

__version__ = "0.1.0"
