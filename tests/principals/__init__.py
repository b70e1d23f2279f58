"""A test-only Django app whose tools answer who is calling (``context.principal``).

Installed by ``tests.http_settings`` and ``tests.stdio_settings``; the sample never loads it.
"""
