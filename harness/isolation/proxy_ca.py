"""The harness's interception CA: how engines that hard-code vendor hosts still reach the proxy.

An engine that ignores base-URL settings calls https://api.openai.com itself. Behind HTTPS_PROXY
it sends `CONNECT api.openai.com:443` to its regular-mode proxy listener, and mitmproxy answers
the TLS handshake with a certificate for that host signed by this CA. The arm trusts it because
the CA is installed in the harness arm image (`harness images build`: the system store and
certifi's bundle) and, for any other image, named at run time by the variables most TLS stacks
read (SSL_CERT_FILE for OpenSSL, Python's ssl and httpx; REQUESTS_CA_BUNDLE; CURL_CA_BUNDLE;
NODE_EXTRA_CA_CERTS).

One CA per machine user, made on first use, kept in HARNESS_CA_DIR or else ~/.harness/ca, in the
file names mitmproxy's `confdir` option reads. The folder is the owner's only: the private key signs
certificates any arm image trusts. Arms and run directories only ever get the public certificate.

Why not let mitmproxy make the CA and its per-host certificates: it dates both from two days ago,
and arms run with their wall clock pinned to the item's date (libfaketime), often years back, so
every handshake would fail as "certificate not yet valid". The harness CA and the one certificate
it signs for the vendor hosts (served for every CONNECT through mitmproxy's `certs` option; other
hosts are refused before TLS by proxy/app/forward_guard.py) are valid from 2000 to 2099 instead.
"""

from __future__ import annotations

import datetime
import hashlib
import os
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.types import CertificateIssuerPrivateKeyTypes
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from filelock import FileLock

from rundir.atomic import write_atomic
from vendors.hosts import VENDOR_HOSTS

# mitmproxy's file names (mitmproxy.options.CONF_BASENAME): `confdir` must find them as they are.
CONF_BASENAME = "mitmproxy"
CA_KEY_FILE = f"{CONF_BASENAME}-ca.pem"  # key + certificate: the proxy's only
CA_CERT_FILE = f"{CONF_BASENAME}-ca-cert.pem"  # public certificate: what arms trust
VENDOR_CERT_FILE = "vendor-hosts.pem"  # key + certificate + CA: what the proxy serves
KEY_SIZE = 2048
VALID_FROM = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
VALID_UNTIL = datetime.datetime(2099, 12, 31, tzinfo=datetime.UTC)
CA_ENV_VARS = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS")


def ca_dir() -> Path:
    configured = os.environ.get("HARNESS_CA_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".harness" / "ca"


def ensure_ca(directory: Path | None = None) -> Path:
    """The CA's public certificate (PEM), creating the CA and the vendor-host certificate first
    if the folder lacks them. Locked, so a study run and an image build agree on one CA."""
    directory = directory or ca_dir()
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    with FileLock(str(directory / ".lock"), timeout=60):
        if not (directory / CA_KEY_FILE).exists() or not (directory / CA_CERT_FILE).exists():
            _write_ca(directory)
        if not _covers_vendor_hosts(directory / VENDOR_CERT_FILE):
            _write_vendor_cert(directory)
        dhparam = directory / f"{CONF_BASENAME}-dhparam.pem"
        if not dhparam.exists():  # mitmproxy writes it on first load: not into a read-only mount
            from mitmproxy.certs import DEFAULT_DHPARAM

            dhparam.write_bytes(DEFAULT_DHPARAM)
    return directory / CA_CERT_FILE


def vendor_cert(directory: Path | None = None) -> Path:
    """The certificate the proxy serves for the vendor hosts (key, certificate, CA)."""
    directory = directory or ca_dir()
    ensure_ca(directory)
    return directory / VENDOR_CERT_FILE


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "harness"),
        ]
    )


def _key_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def _write_private(path: Path, data: bytes) -> None:
    write_atomic(path, data, mode=0o600)  # 0o600 from the first byte: the key signs for vendors


def ca_certificate(
    key: CertificateIssuerPrivateKeyTypes,
    name: x509.Name,
    valid_from: datetime.datetime,
    valid_until: datetime.datetime,
) -> x509.Certificate:
    """A self-signed CA certificate with what strict verification (Python 3.13's
    VERIFY_X509_STRICT) wants: critical basicConstraints and key usage, a key identifier."""
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid_from)
        .not_valid_after(valid_until)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )


def _write_ca(directory: Path) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_SIZE)
    cert = ca_certificate(key, _name("harness proxy CA"), VALID_FROM, VALID_UNTIL)
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    _write_private(directory / CA_KEY_FILE, _key_pem(key) + cert_pem)
    _write_private(directory / CA_CERT_FILE, cert_pem)
    os.chmod(directory / CA_CERT_FILE, 0o644)
    (directory / VENDOR_CERT_FILE).unlink(missing_ok=True)  # signed by the old CA, if any


def _write_vendor_cert(directory: Path) -> None:
    ca_pem = (directory / CA_KEY_FILE).read_bytes()
    ca_key = serialization.load_pem_private_key(ca_pem, password=None)
    assert isinstance(ca_key, rsa.RSAPrivateKey)
    ca_cert = x509.load_pem_x509_certificate(ca_pem)
    key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_SIZE)
    hosts = sorted(VENDOR_HOSTS)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(hosts[0]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(VALID_FROM)
        .not_valid_after(VALID_UNTIL)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in hosts]), False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
    )
    cert = builder.sign(ca_key, hashes.SHA256())
    chain = [c.public_bytes(serialization.Encoding.PEM) for c in (cert, ca_cert)]
    _write_private(directory / VENDOR_CERT_FILE, _key_pem(key) + b"".join(chain))


def _covers_vendor_hosts(path: Path) -> bool:
    """Whether the vendor certificate exists and names every vendor host (a new vendor host in
    vendors/hosts.py gets a new certificate)."""
    try:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except (OSError, ValueError, x509.ExtensionNotFound):
        return False
    return set(VENDOR_HOSTS) <= set(names.value.get_values_for_type(x509.DNSName))


def install_ca_cert(run_dir: Path) -> Path:
    """A copy of the CA's public certificate in the run directory (`ca/harness-ca.pem`): what
    the run's arms trust, mounted or named from there, and a record of which CA that was."""
    target = run_dir / "ca" / "harness-ca.pem"
    write_atomic(target, ensure_ca().read_bytes())
    return target.resolve()


def fingerprint(cert: Path) -> str:
    """SHA-256 of the certificate's DER bytes: which CA an image or a run trusted."""
    parsed = x509.load_pem_x509_certificate(cert.read_bytes())
    return hashlib.sha256(parsed.public_bytes(serialization.Encoding.DER)).hexdigest()


def proxy_env(proxy_url: str, cert_path: str, no_proxy: str) -> dict[str, str]:
    """Environment for an arm: HTTPS traffic to any host goes through `proxy_url`, the CA at
    `cert_path` (as the arm sees it) is trusted, and `no_proxy` (the proxy's own address, where
    base-URL SDKs already go) is reached directly. Both spellings: tools read one or the other."""
    env = {
        "HTTPS_PROXY": proxy_url,
        "https_proxy": proxy_url,
        "NO_PROXY": no_proxy,
        "no_proxy": no_proxy,
    }
    return env | {name: cert_path for name in CA_ENV_VARS}
