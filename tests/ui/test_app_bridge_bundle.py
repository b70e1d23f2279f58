"""The bundle the admin's view preview ships (``static/beammcp_django/vendor/app-bridge.js``
and its licences) is what ``assets/app-bridge/build.sh`` makes from the pinned packages, byte
for byte: no hand edit, no other version, every bundled package's licence beside it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.one_leg]

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "beammcp_django" / "static" / "beammcp_django" / "vendor"


def test_the_shipped_bundle_is_what_the_pinned_packages_build(tmp_path: Path):
    built = subprocess.run(
        ["bash", "assets/app-bridge/build.sh", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    for name in ("app-bridge.js", "app-bridge.LICENSES.txt"):
        assert (tmp_path / name).read_bytes() == (SHIPPED / name).read_bytes(), name
    licences = (SHIPPED / "app-bridge.LICENSES.txt").read_text()
    for package in (
        "@modelcontextprotocol/ext-apps 2.0.4: MIT",
        "@modelcontextprotocol/client 2.4.0",
    ):
        assert f"- {package}" in licences
