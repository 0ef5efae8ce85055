"""The casino's signing key and PAdES signatures (pyHanko).

Development: ``manage.py init_signing`` makes a CA and a signing certificate under ``var/keys/``
(never committed). Production: ``REPORT_SIGNING_PKCS12`` (a PKCS#12 file, its passphrase in
``REPORT_SIGNING_PASSPHRASE_FILE``) or a PKCS#11 token (``REPORT_SIGNING_PKCS11_MODULE``,
``…_TOKEN``, ``…_KEY``, ``…_PIN_FILE``, and ``…_CERT`` when the certificate is not on the token);
``REPORT_TRUST_ROOTS``: the CA certificates a report's
signature must chain to.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from casino import clock

SIGNATURE_FIELD = "Signature"


def keys_dir() -> Path:
    return Path(settings.VAR_DIR) / "keys"


def init_signing(directory: Path, *, organisation: str, force: bool = False) -> dict[str, Path]:
    """A development CA and a signing certificate issued by it: ``ca.pem`` (the trust root),
    ``signer.p12`` and its passphrase ``signer.pass`` (mode 600)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import NameOID

    paths = {
        "ca": directory / "ca.pem",
        "pkcs12": directory / "signer.p12",
        "passphrase": directory / "signer.pass",
    }
    if paths["pkcs12"].exists() and not force:
        return paths
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    # The machine's time: certificates are checked against the world's clock, not a simulation's.
    now = clock.wall()

    def name(common: str) -> x509.Name:
        return x509.Name(
            [
                x509.NameAttribute(NameOID.COMMON_NAME, common),
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, organisation),
            ]
        )

    def usage(*, signs_certificates: bool) -> x509.KeyUsage:
        return x509.KeyUsage(
            digital_signature=not signs_certificates,
            content_commitment=not signs_certificates,
            key_encipherment=False,
            data_encipherment=False,
            key_agreement=False,
            key_cert_sign=signs_certificates,
            crl_sign=signs_certificates,
            encipher_only=False,
            decipher_only=False,
        )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name(f"{organisation} development CA"))
        .issuer_name(name(f"{organisation} development CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(usage(signs_certificates=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(name(f"{organisation} - rapports de jeu / gaming reports"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=825))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(usage(signs_certificates=False), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    passphrase = secrets.token_urlsafe(24)
    for path, content in (
        (paths["ca"], ca.public_bytes(serialization.Encoding.PEM)),
        (
            paths["pkcs12"],
            pkcs12.serialize_key_and_certificates(
                b"casino-reports",
                key,
                cert,
                [ca],
                serialization.BestAvailableEncryption(passphrase.encode()),
            ),
        ),
        (paths["passphrase"], passphrase.encode()),
    ):
        path.write_bytes(content)
        path.chmod(0o600 if path != paths["ca"] else 0o644)
    # The CA's key is not kept: nothing else is ever issued by a development CA.
    return paths


@contextlib.contextmanager
def _signer() -> Iterator[Any]:
    """The configured signer: a key on a PKCS#11 token, else the PKCS#12 file."""
    from pyhanko.sign import signers

    module = settings.REPORT_SIGNING_PKCS11_MODULE
    if module:
        from pyhanko.config.pkcs11 import TokenCriteria
        from pyhanko.keys import load_cert_from_pemder
        from pyhanko.sign import pkcs11

        pin = Path(settings.REPORT_SIGNING_PKCS11_PIN_FILE).read_text().strip()
        session = pkcs11.open_pkcs11_session(
            module,
            token_criteria=TokenCriteria(label=settings.REPORT_SIGNING_PKCS11_TOKEN),
            user_pin=pin,
        )
        cert_file = settings.REPORT_SIGNING_PKCS11_CERT
        try:
            yield pkcs11.PKCS11Signer(
                session,
                key_label=settings.REPORT_SIGNING_PKCS11_KEY,
                # The certificate on the token under the key's label, or given as a file.
                signing_cert=load_cert_from_pemder(cert_file) if cert_file else None,
                cert_label=None if cert_file else settings.REPORT_SIGNING_PKCS11_KEY,
                # Many tokens (SoftHSM among them) only do raw ECDSA: the digest is made here.
                use_raw_mechanism=settings.REPORT_SIGNING_PKCS11_RAW,
            )
        finally:
            session.close()
        return
    path = Path(settings.REPORT_SIGNING_PKCS12)
    if not path.exists():
        raise ImproperlyConfigured(
            f"no signing key at {path}: run `python manage.py init_signing` (development) or set "
            "REPORT_SIGNING_PKCS12 / REPORT_SIGNING_PKCS11_MODULE"
        )
    passphrase_file = Path(settings.REPORT_SIGNING_PASSPHRASE_FILE)
    passphrase = passphrase_file.read_bytes().strip() if passphrase_file.exists() else None
    signer = signers.SimpleSigner.load_pkcs12(str(path), passphrase=passphrase)
    if signer is None:
        raise ImproperlyConfigured(f"{path} could not be opened with its passphrase")
    yield signer


def sign_pdf(
    pdf: bytes, *, box: tuple[float, float, float, float], page: int, reason: str
) -> tuple[bytes, str]:
    """PAdES-sign ``pdf`` with a visible signature in ``box`` on ``page`` (0-based).
    Returns the signed bytes and the signer's name."""
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign import fields, signers
    from pyhanko.stamp import TextStampStyle

    writer = IncrementalPdfFileWriter(io.BytesIO(pdf))
    fields.append_signature_field(
        writer, fields.SigFieldSpec(sig_field_name=SIGNATURE_FIELD, on_page=page, box=box)
    )
    meta = signers.PdfSignatureMetadata(
        field_name=SIGNATURE_FIELD,
        subfilter=fields.SigSeedSubFilter.PADES,
        md_algorithm="sha256",
        reason=reason,
        location=settings.CASINO_NAME,
    )
    style = TextStampStyle(stamp_text="Signé par / signed by: %(signer)s\n%(ts)s")
    with _signer() as signer:
        out = signers.PdfSigner(meta, signer=signer, stamp_style=style).sign_pdf(writer)
        name = signer.signing_cert.subject.human_friendly
    return out.getvalue(), name


@dataclass(frozen=True)
class Verification:
    ok: bool
    findings: list[str]


def verify_pdf(data: bytes, trust_roots: list[Path] | None = None) -> Verification:
    """Validate every signature of a report: intact, cryptographically valid, chained to a trust
    root, covering the whole file. What was found is said in ``findings``."""
    from pyhanko.keys import load_cert_from_pemder
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation import validate_pdf_signature
    from pyhanko.sign.validation.status import SignatureCoverageLevel
    from pyhanko_certvalidator import ValidationContext

    roots = trust_roots or [Path(p) for p in settings.REPORT_TRUST_ROOTS]
    findings: list[str] = []
    try:
        context = ValidationContext(
            trust_roots=[load_cert_from_pemder(str(p)) for p in roots], allow_fetching=False
        )
        reader = PdfFileReader(io.BytesIO(data), strict=False)
        signatures = reader.embedded_signatures
        if not signatures:
            return Verification(False, ["the file carries no signature"])
        ok = True
        for signature in signatures:
            status = validate_pdf_signature(signature, context)
            whole = status.coverage == SignatureCoverageLevel.ENTIRE_FILE
            findings.append(
                f"signature {signature.field_name!r} by "
                f"{status.signing_cert.subject.human_friendly}: "
                f"intact={status.intact} valid={status.valid} trusted={status.trusted} "
                f"covers the whole file={whole}"
            )
            ok = ok and status.intact and status.valid and status.trusted and whole
        return Verification(ok, findings)
    except Exception as exc:  # a damaged file is a failed verification, said plainly
        return Verification(False, [*findings, f"cannot be validated: {exc!r}"])
