"""Signing with a key on a PKCS#11 token (SoftHSM, from Debian's softhsm2), as production would
with a hardware token: the report is signed by the token's key and validates."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from casino.reports.signing import verify_pdf
from tests.conftest import REQUIRE_SERVICES
from tests.reports.test_shift_report import closed_seance, rendered

MODULE = Path("/usr/lib/softhsm/libsofthsm2.so")


@pytest.fixture
def token(tmp_path, monkeypatch, signing_keys, settings):
    if shutil.which("softhsm2-util") is None or not MODULE.exists():
        message = "SoftHSM (Debian's softhsm2) is not installed"
        if REQUIRE_SERVICES:
            pytest.fail(message)
        pytest.skip(message)
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    conf = tmp_path / "softhsm2.conf"
    conf.write_text(f"directories.tokendir = {tokens}\nobjectstore.backend = file\n")
    monkeypatch.setenv("SOFTHSM2_CONF", str(conf))
    key, cert, _ = pkcs12.load_key_and_certificates(
        signing_keys["pkcs12"].read_bytes(), signing_keys["passphrase"].read_bytes().strip()
    )
    key_file = tmp_path / "key.pem"
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    cert_file = tmp_path / "cert.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    util = ["softhsm2-util", "--pin", "1234"]
    subprocess.run(
        [*util, "--init-token", "--free", "--label", "casino", "--so-pin", "5678"],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [*util, "--import", str(key_file), "--token", "casino", "--label", "reports", "--id", "01"],
        check=True,
        capture_output=True,
    )
    key_file.unlink()  # the key now lives on the token only
    pin = tmp_path / "pin"
    pin.write_text("1234")
    settings.REPORT_SIGNING_PKCS12 = str(tmp_path / "absent.p12")  # the token, not a file
    settings.REPORT_SIGNING_PKCS11_MODULE = str(MODULE)
    settings.REPORT_SIGNING_PKCS11_TOKEN = "casino"
    settings.REPORT_SIGNING_PKCS11_KEY = "reports"
    settings.REPORT_SIGNING_PKCS11_PIN_FILE = str(pin)
    settings.REPORT_SIGNING_PKCS11_CERT = str(cert_file)
    settings.REPORT_SIGNING_PKCS11_RAW = True  # SoftHSM signs raw ECDSA only


def test_a_report_is_signed_by_the_key_on_the_token(cast, posted, token):
    report = rendered(closed_seance(hours=0.1))
    verdict = verify_pdf(Path(report.pdf.path).read_bytes())
    assert verdict.ok, verdict.findings
    assert "Casino des tests" in report.signer
