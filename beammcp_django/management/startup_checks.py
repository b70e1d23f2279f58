"""The system checks the package's commands run as they start: every one but the annotation
audit (``beammcp.W008``, its own tag).

The audit reads the catalog's source and says where a tool's annotations disagree with what
its code reaches: a finding for whoever maintains the annotations, not a fault that stops a
server. ``manage.py check`` and the admin's connectome page show it; a command that serves or
exports does not open every run with it, nor write it into a stdio client's stderr.
"""

from __future__ import annotations

from django.core.checks.registry import registry

from beammcp_django.checks.entries import ANNOTATIONS_TAG


class StartupChecks:
    """Mixed into a command: its ``requires_system_checks`` is every registered tag but the
    annotation audit's."""

    @property
    def requires_system_checks(self) -> list[str]:
        return sorted(registry.tags_available() - {ANNOTATIONS_TAG})
