"""Fails if a SASL password shows in any of the given files (a tap's log, its stderr), in any
form a logger might have put it in.

    python3 check_secrets.py [--users FILE] FILE...

The passwords are those of tools/kafka-broker/sasl-users (--users overrides). A password is
found if a file holds:
- its text;
- its base64, standard or URL-safe alphabet, padded or not, alone or inside a longer encoded
  value. A PLAIN login is base64 of "\\0user\\0password": where the password starts within
  the encoded bytes decides how its bytes fall into base64's 3-byte groups, and so which
  characters encode it. For each of the three alignments the search takes the part of the
  password that fills whole groups (dropping 0, 2 or 1 leading bytes, and the tail that does
  not fill a group): those characters are the same in every base64 text that holds the
  password at that alignment, padded or not, so they also find the password encoded alone;
- its hex, lower or upper case, plain or with a space between bytes.

Exit 0 if no file holds any, 1 listing the finds (per file, password and form: the lines,
never the password itself), 2 on a usage error.
"""

import argparse
import base64
import collections
import sys

from security import USERS, passwords


def base64_forms(secret):
    """(name, text) for each way the base64 of a text holding `secret` must contain, one
    per alphabet and byte alignment."""
    forms = []
    for skip in range(3):
        # The password at offset o within the encoded bytes: its byte `skip` starts a group
        # when (o + skip) % 3 == 0, so skips 0, 2 and 1 cover offsets 0, 1 and 2 (mod 3).
        whole = secret[skip:]
        whole = whole[:len(whole) // 3 * 3]
        if len(whole) < 6:
            raise ValueError("a password shorter than 8 bytes cannot be searched for in base64 "
                             "without matching by chance")
        offset = (3 - skip) % 3
        forms.append((f"base64 (at offset {offset} mod 3)", base64.b64encode(whole)))
        forms.append((f"URL-safe base64 (at offset {offset} mod 3)",
                      base64.urlsafe_b64encode(whole)))
    return forms


def secret_forms(secret):
    """(name, bytes to search for) for every form of `secret` (bytes) the check knows."""
    forms = [("text", secret)]
    forms += base64_forms(secret)
    forms.append(("hex", secret.hex().encode()))
    forms.append(("HEX", secret.hex().upper().encode()))
    forms.append(("hex with spaces", secret.hex(" ").encode()))
    forms.append(("HEX with spaces", secret.hex(" ").upper().encode()))
    # Distinct search strings only (a URL-safe form equals the standard one when the encoded
    # bytes need neither '+' nor '/').
    seen, unique = set(), []
    for name, needle in forms:
        if needle not in seen:
            seen.add(needle)
            unique.append((name, needle))
    return unique


def find_secrets(data, secrets):
    """[(line number, form name, index of the secret)] of every form of every secret (a
    list of str) found in `data` (bytes), in order of line."""
    found = []
    for index, secret in enumerate(secrets):
        for name, needle in secret_forms(secret.encode()):
            start = data.find(needle)
            while start != -1:
                found.append((data.count(b"\n", 0, start) + 1, name, index))
                start = data.find(needle, start + 1)
    return sorted(found)


def check_files(paths, secrets):
    """Problems (strings that never hold a secret), one per file, password and form found,
    with the lines it is on."""
    problems = []
    for path in paths:
        with open(path, "rb") as file:
            data = file.read()
        lines = collections.defaultdict(list)
        for line, form, index in find_secrets(data, secrets):
            lines[(index, form)].append(line)
        for (index, form), found in sorted(lines.items()):
            where = f"line {found[0]}" if len(found) == 1 else \
                f"{len(found)} times, lines {', '.join(map(str, found[:5]))}" + \
                (", ..." if len(found) > 5 else "")
            problems.append(f"{path}:{found[0]}: password #{index + 1} of the users file, as "
                            f"{form} ({where})")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", default=USERS, help="MECHANISM USER PASSWORD lines")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    secrets = passwords(args.users)
    if not secrets:
        parser.error(f"{args.users} names no password")
    problems = check_files(args.files, secrets)
    for problem in problems:
        print(f"FAIL: {problem}")
    if problems:
        print(f"secrets: FAILED, passwords found in {len({p.split(':')[0] for p in problems})} "
              f"of {len(args.files)} files")
        sys.exit(1)
    print(f"secrets: none of the {len(secrets)} passwords in {len(args.files)} files, as text, "
          "base64 (either alphabet, any alignment) or hex")


if __name__ == "__main__":
    main()
