"""How the clients of the tap proof log in to the broker's SASL listeners: the users of
tools/kafka-broker/sasl-users, and each Python client's settings for SASL over TLS
(SASL_SSL, trusting the test CA) or without it (SASL_PLAINTEXT). Imports no client library,
so check_tap_log.py can read the passwords with the system's python3."""

import dataclasses
import pathlib

USERS = pathlib.Path(__file__).resolve().parent.parent / "kafka-broker" / "sasl-users"
MECHANISMS = ("PLAIN", "SCRAM-SHA-512")
PROTOCOLS = ("SASL_SSL", "SASL_PLAINTEXT")


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
    protocol: str  # SASL_SSL or SASL_PLAINTEXT
    mechanism: str  # PLAIN or SCRAM-SHA-512
    user: str
    password: str
    cafile: str | None  # PEM of the CA that signed the broker's certificate (SASL_SSL)

    @classmethod
    def for_mechanism(cls, protocol, mechanism, cafile, users=USERS):
        """The settings of the first user of `mechanism` in the users file."""
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol {protocol}: want one of {PROTOCOLS}")
        if protocol == "SASL_SSL" and not cafile:
            raise ValueError("SASL_SSL needs the CA's PEM file")
        for found, user, password in read_users(users):
            if found == mechanism:
                return cls(protocol, mechanism, user, password, cafile)
        raise ValueError(f"{users}: no {mechanism} user")

    @property
    def tls(self):
        return self.protocol == "SASL_SSL"


def client_config(client, security):
    """The settings that make `client` log in as `security` says, in that client's own
    names: a dict for confluent-kafka's config, keyword arguments for the other two."""
    if security is None:
        return {}
    s = security
    if client == "confluent-kafka":
        config = {"security.protocol": s.protocol, "sasl.mechanism": s.mechanism,
                  "sasl.username": s.user, "sasl.password": s.password}
        if s.tls:
            config["ssl.ca.location"] = s.cafile
        return config
    config = {"security_protocol": s.protocol, "sasl_mechanism": s.mechanism,
              "sasl_plain_username": s.user, "sasl_plain_password": s.password}
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
