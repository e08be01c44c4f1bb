"""How the clients of the tap proof log in to the broker's SASL listeners: the users of
tools/kafka-broker/sasl-users, and each Python client's settings for SASL over TLS
(SASL_SSL, trusting the test CA) or without it (SASL_PLAINTEXT); or TLS alone (SSL), with a
client certificate from a PKCS12 keystore if given (tap-proof-mtls.sh). Imports no client
library, so check_tap_log.py can read the passwords with the system's python3."""

import dataclasses
import pathlib

USERS = pathlib.Path(__file__).resolve().parent.parent / "kafka-broker" / "sasl-users"
MECHANISMS = ("PLAIN", "SCRAM-SHA-512")
PROTOCOLS = ("SASL_SSL", "SASL_PLAINTEXT", "SSL")


def read_users(path=USERS):
    """[(mechanism, user, password)] of the users file, in its order."""
    users = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            if len(fields) != 3:
                raise ValueError(f"{path}:{number}: want MECHANISM USER PASSWORD")
            users.append(tuple(fields))
    return users


def passwords(path=USERS):
    return [password for _, _, password in read_users(path)]


@dataclasses.dataclass(frozen=True)
class Security:
    protocol: str  # SASL_SSL, SASL_PLAINTEXT or SSL
    mechanism: str | None  # PLAIN or SCRAM-SHA-512; None for SSL
    user: str | None
    password: str | None
    cafile: str | None  # PEM of the CA that signed the broker's certificate (SASL_SSL, SSL)
    keystore: str | None = None  # PKCS12 with the client's certificate and key (SSL)
    keystore_password: str | None = None

    @classmethod
    def for_mechanism(cls, protocol, mechanism, cafile, users=USERS):
        """The settings of the first user of `mechanism` in the users file."""
        if protocol not in PROTOCOLS[:2]:
            raise ValueError(f"protocol {protocol}: want one of {PROTOCOLS[:2]} with SASL")
        if protocol == "SASL_SSL" and not cafile:
            raise ValueError("SASL_SSL needs the CA's PEM file")
        for found, user, password in read_users(users):
            if found == mechanism:
                return cls(protocol, mechanism, user, password, cafile)
        raise ValueError(f"{users}: no {mechanism} user")

    @classmethod
    def tls_only(cls, cafile, keystore=None, keystore_password=None):
        """SSL: TLS trusting `cafile`, presenting the keystore's certificate if given."""
        if not cafile:
            raise ValueError("SSL needs the CA's PEM file")
        if (keystore is None) != (keystore_password is None):
            raise ValueError("a keystore needs its password, and the password a keystore")
        return cls("SSL", None, None, None, cafile, keystore, keystore_password)

    @property
    def tls(self):
        return self.protocol in ("SASL_SSL", "SSL")


def client_config(client, security):
    """The settings that make `client` log in as `security` says, in that client's own
    names: a dict for confluent-kafka's config, keyword arguments for the other two."""
    if security is None:
        return {}
    s = security
    if s.keystore and client != "confluent-kafka":
        raise ValueError(f"{client}: a PKCS12 keystore is read by confluent-kafka only")
    if client == "confluent-kafka":
        config = {"security.protocol": s.protocol}
        if s.mechanism:
            config |= {"sasl.mechanism": s.mechanism, "sasl.username": s.user,
                       "sasl.password": s.password}
        if s.tls:
            config["ssl.ca.location"] = s.cafile
        if s.keystore:
            config |= {"ssl.keystore.location": s.keystore,
                       "ssl.keystore.password": s.keystore_password}
        return config
    config = {"security_protocol": s.protocol}
    if s.mechanism:
        config |= {"sasl_mechanism": s.mechanism, "sasl_plain_username": s.user,
                   "sasl_plain_password": s.password}
    if client == "kafka-python":
        if s.tls:
            config["ssl_cafile"] = s.cafile
        return config
    if client == "aiokafka":
        if s.tls:
            from aiokafka.helpers import create_ssl_context

            config["ssl_context"] = create_ssl_context(cafile=s.cafile)
        return config
    raise ValueError(f"unknown client {client}")
