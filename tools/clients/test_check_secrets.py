"""Tests of check_secrets.py on synthetic logs: the tap proof over TLS (tap-proof-tls.sh) trusts
it to find a password in whatever form a log may hold it, so it is tested on its own first.

    python3 tools/clients/test_check_secrets.py [-v]
"""

import base64
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from check_secrets import find_secrets, secret_forms  # noqa: E402
from security import USERS, read_users  # noqa: E402

USER, PASSWORD = next((u, p) for m, u, p in read_users() if m == "PLAIN")
SCRAM_USER, SCRAM_PASSWORD = next((u, p) for m, u, p in read_users() if m == "SCRAM-SHA-512")
SECRETS = [PASSWORD, SCRAM_PASSWORD]


def plain_auth_bytes(authzid, user=USER, password=PASSWORD):
    """A SASL PLAIN client message (RFC 4616): authzid NUL user NUL password."""
    return f"{authzid}\0{user}\0{password}".encode()


def sasl_authenticate_line(auth_bytes_json):
    """One log line as `kafka-codec tap` writes a SaslAuthenticate pair (its shape copied
    from a real log), with `auth_bytes_json` as the request's authBytes."""
    return json.dumps({
        "event": "pair", "time": "2026-12-04T15:30:16.948847Z", "connection": 1,
        "correlationId": 3, "api": "SaslAuthenticate", "apiKey": 36, "apiVersion": 2,
        "latencyMs": 0.537,
        "request": {"header": {"requestApiKey": 36, "requestApiVersion": 2, "correlationId": 3,
                               "clientId": "kafka-python-3.0.12"},
                    "body": {"authBytes": auth_bytes_json}},
        "response": {"apiKey": 36, "apiVersion": 2, "header": {"correlationId": 3},
                     "body": {"errorCode": 0, "errorMessage": "", "authBytes": "",
                              "sessionLifetimeMs": 0}},
    }, separators=(",", ":")) + "\n"


def encodings(data):
    """`data` in base64 of both alphabets, with and without padding."""
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        text = encode(data)
        yield text
        yield text.rstrip(b"=")


class FindsEveryForm(unittest.TestCase):
    def assert_found(self, data, what):
        self.assertTrue(find_secrets(data, SECRETS), f"not found: {what}: {data[:120]!r}")

    def test_plain_login_at_every_alignment(self):
        # authzid and user lengths move the password through all three byte offsets mod 3.
        offsets = set()
        for authzid in ("", "a", "ab", USER):
            for user in (USER, USER + "x", USER + "xy"):
                message = plain_auth_bytes(authzid, user)
                offsets.add(message.index(PASSWORD.encode()) % 3)
                for text in encodings(message):
                    self.assert_found(text, f"PLAIN login, authzid {authzid!r}, user {user!r}")
        self.assertEqual(offsets, {0, 1, 2})

    def test_inside_a_longer_encoded_value(self):
        for before in range(6):
            for after in range(4):
                data = bytes(range(200, 200 + before)) + PASSWORD.encode() + b"\xff" * after
                for text in encodings(data):
                    self.assert_found(b'{"x":"' + text + b'"}', f"{before} bytes before")

    def test_alone(self):
        for secret in SECRETS:
            for text in encodings(secret.encode()):
                self.assert_found(text, "the password alone")

    def test_text_and_hex(self):
        secret = PASSWORD.encode()
        for data in (secret, b"password=" + secret + b"\n", secret.hex().encode(),
                     secret.hex().upper().encode(), secret.hex(" ").encode(),
                     b"hex: 0000" + plain_auth_bytes("").hex().encode()):
            self.assert_found(data, "text or hex")

    def test_every_line_named(self):
        data = b"clean\n" + PASSWORD.encode() + b"\nclean\n" + base64.b64encode(
            plain_auth_bytes("")) + b"\n"
        lines = {line for line, _, _ in find_secrets(data, SECRETS)}
        self.assertEqual(lines, {2, 4})

    def test_nothing_else(self):
        # What a log of logins holds besides the password: the user, the mechanism, a SCRAM
        # exchange (which never carries the password), a redacted PLAIN message.
        nonce = "fyko+d2lbbFgONRv9qkxdawL"
        clean = [
            b"kafka-codec tap: listening on 127.0.0.1:40000, forwarding to 127.0.0.1:19192\n",
            sasl_authenticate_line(base64.b64encode(
                f"n,,n={SCRAM_USER},r={nonce}".encode()).decode()).encode(),
            sasl_authenticate_line(base64.b64encode(
                f"c=biws,r={nonce}3rfcNHYJY1ZVvWVs7j,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
                .encode()).decode()).encode(),
            sasl_authenticate_line("[redacted: 61 bytes]").encode(),
            USER.encode() + b" " + SCRAM_USER.encode() + b" PLAIN SCRAM-SHA-512\n",
        ]
        for data in clean:
            self.assertEqual(find_secrets(data, SECRETS), [], data)

    def test_url_safe_forms_differ(self):
        # The users file's passwords are chosen so: else the URL-safe search would go untested.
        for secret in SECRETS:
            names = [name for name, _ in secret_forms(secret.encode())]
            self.assertEqual(sum(name.startswith("URL-safe") for name in names), 3, names)

    def test_every_form_is_long_enough_not_to_match_by_chance(self):
        for secret in SECRETS:
            for name, needle in secret_forms(secret.encode()):
                self.assertGreaterEqual(len(needle), 16, name)

    def test_short_password_refused(self):
        with self.assertRaises(ValueError):
            secret_forms(b"short")


class TheScriptOnSyntheticLogs(unittest.TestCase):
    """check_secrets.py as tap-proof-tls.sh runs it, with the real users file."""

    def run_check(self, *contents):
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for number, content in enumerate(contents):
                path = os.path.join(tmp, f"file{number}")
                with open(path, "w", encoding="utf-8") as file:
                    file.write(content)
                paths.append(path)
            result = subprocess.run(
                [sys.executable, str(HERE / "check_secrets.py"), "--users", str(USERS), *paths],
                capture_output=True, text=True, check=False)
        return result.returncode, result.stdout + result.stderr

    def test_plain_auth_bytes_in_base64_fail(self):
        log = sasl_authenticate_line(base64.b64encode(plain_auth_bytes(USER)).decode())
        status, output = self.run_check("", log)
        self.assertEqual(status, 1, output)
        self.assertIn("file1:1: password #1 of the users file, as base64", output)
        # The report names where, never what.
        self.assertEqual(find_secrets(output.encode(), SECRETS), [], output)

    def test_redaction_marker_passes(self):
        log = sasl_authenticate_line("[redacted: 61 bytes]")
        status, output = self.run_check(log, "kafka-codec tap: listening on 127.0.0.1:1\n")
        self.assertEqual(status, 0, output)

    def test_password_in_stderr_text_fails(self):
        status, output = self.run_check(sasl_authenticate_line("[redacted]"),
                                        f"error: login failed for {PASSWORD}\n")
        self.assertEqual(status, 1, output)
        self.assertIn("file1:1: password #1 of the users file, as text", output)


if __name__ == "__main__":
    unittest.main()
