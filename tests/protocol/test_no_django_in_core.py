"""The protocol core is sans-IO: importing it pulls in no web framework, socket or event loop.

The check runs in a fresh interpreter, since this test process has pytest (and possibly
pytest-django) loaded already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Modules the core must never import, directly or through its dependencies (jsonschema and
# referencing). Checked against the modules the import adds to a bare interpreter.
# ``urllib.parse`` is pulled in (by uritemplate.py and jsonschema), which is fine. The C
# module ``_socket`` is left off the list: typing_extensions (imported by referencing)
# imports it on Python < 3.13 only to find ``CapsuleType``; it opens nothing, and the
# ``socket`` module itself is still forbidden.
FORBIDDEN = (
    "django",
    "channels",
    "daphne",
    "socket",
    "ssl",
    "_ssl",
    "http",
    "urllib.request",
    "asyncio",
    "selectors",
)

PROBE = """
import importlib, json, pkgutil, sys
before = set(sys.modules)
import beammcp_django.protocol as core
names = sorted(
    "beammcp_django.protocol." + info.name for info in pkgutil.iter_modules(core.__path__)
)
for name in names:
    importlib.import_module(name)
print(json.dumps({"modules": names, "added": sorted(set(sys.modules) - before)}))
"""


def probe() -> dict:
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    completed = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(completed.stdout)


def test_importing_every_protocol_module_pulls_in_no_framework_socket_or_event_loop():
    report = probe()
    assert "beammcp_django.protocol.server" in report["modules"]
    assert "beammcp_django.protocol.wire" in report["modules"]
    assert len(report["modules"]) >= 10
    offenders = [
        module
        for module in report["added"]
        if any(module == name or module.startswith(name + ".") for name in FORBIDDEN)
    ]
    assert offenders == []
