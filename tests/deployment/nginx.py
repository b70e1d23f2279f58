"""Debian's nginx as a test process, a certificate for it, and TLS connections to it.

``start_nginx`` runs ``nginx -p <dir> -c <conf> -g 'daemon off;'`` in the foreground with
its pid, logs and temporary files in the test's directory, the page's server block inside an
``http`` block like Debian's ``nginx.conf``. A missing nginx skips the tests outside CI and
fails them in CI (``CI=true``), where ``tests/run.sh`` installs it.
"""

from __future__ import annotations

import datetime
import os
import pwd
import shutil
import ssl
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.http.mcphttp_support import REPLY_TIMEOUT, ServerProcess, Wire, start_server

MIME_TYPES = Path("/etc/nginx/mime.types")


def nginx_binary() -> str:
    """The nginx executable (Debian installs it in /usr/sbin, not always on PATH)."""
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    if found is None or not MIME_TYPES.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("nginx is missing in CI: tests/run.sh installs Debian's nginx")
        pytest.skip("no nginx on this machine (tests/run.sh installs Debian's)")
    return found


def self_signed(directory: Path, host: str) -> tuple[Path, Path]:
    """A certificate and key for ``host``, valid for a day (cryptography comes with daphne)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path = directory / "fullchain.pem"
    key_path = directory / "privkey.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def main_config(directory: Path, server_block: str) -> str:
    """nginx.conf around the page's block: what Debian's main file gives conf.d files."""
    # As root the master would hand its workers to an unprivileged user, who cannot read the
    # test's directories; the test's own user keeps them readable.
    user = f"user {pwd.getpwuid(os.getuid()).pw_name};\n" if os.getuid() == 0 else ""
    temp = "\n".join(
        f"    {kind}_temp_path {directory / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return (
        f"{user}worker_processes 1;\n"
        f"pid {directory / 'nginx.pid'};\n"
        f"error_log {directory / 'error.log'} info;\n"
        "events { worker_connections 1024; }\n"
        "http {\n"
        f"    include {MIME_TYPES};\n"
        "    default_type application/octet-stream;\n"
        "    sendfile on;\n"
        f"{temp}\n"
        f"    access_log {directory / 'access.log'};\n"
        f"{server_block}\n"
        "}\n"
    )


def start_nginx(
    directory: Path, env: dict[str, str], server_block: Callable[[int], str]
) -> ServerProcess:
    """nginx in the foreground as a ``ServerProcess`` (its port, log, readiness poll and
    stop): ``server_block(port)`` is the configuration for the port it is given, which the
    readiness poll then waits on. The configuration is checked (``nginx -t``) first."""
    binary = nginx_binary()
    config = directory / "nginx.conf"

    def command(port: int) -> list[str]:
        config.write_text(main_config(directory, server_block(port)))
        arguments = [binary, "-p", str(directory), "-c", str(config)]
        checked = subprocess.run(
            [*arguments, "-t"], capture_output=True, text=True, timeout=30, check=False
        )
        assert checked.returncode == 0, checked.stderr
        return [*arguments, "-g", "daemon off;"]

    return start_server("nginx", env, directory, command=command)


def error_log(directory: Path) -> str:
    path = directory / "error.log"
    return path.read_text(errors="replace") if path.exists() else ""


def client_context(certificate: Path) -> ssl.SSLContext:
    """A client context that trusts the test's certificate only."""
    return ssl.create_default_context(cafile=str(certificate))


class TlsWire(Wire):
    """``Wire`` over TLS: one connection to nginx with exact control over the request bytes."""

    def __init__(
        self,
        port: int,
        context: ssl.SSLContext,
        server_name: str = "localhost",
        timeout: float = REPLY_TIMEOUT,
    ) -> None:
        super().__init__(port, timeout)
        self.sock = context.wrap_socket(self.sock, server_hostname=server_name)

    def has_data(self, timeout: float) -> bool:
        """As ``Wire.has_data``, counting bytes TLS has decrypted but not yet handed over."""
        pending = isinstance(self.sock, ssl.SSLSocket) and self.sock.pending() > 0
        return pending or super().has_data(timeout)
