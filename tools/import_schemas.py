#!/usr/bin/env python3
"""Import Kafka's message schemas and error table from the kafka-clients jar into schemas/.

Usage:
    python3 tools/import_schemas.py import [--jar PATH]
    python3 tools/import_schemas.py check  [--jar PATH]

`import` rewrites schemas/ from the jar, and the per-API cargo features in
Cargo.toml from the schemas; `check` rebuilds the same output in memory and
fails if the committed schemas/ or the feature list differs from it.  Without --jar the
jar for the version pinned in tools/kafka-version is taken from ~/.m2 (and
fetched with mvn when missing).

The output keeps only the facts the code generator needs: comments and every
"about" key are removed, all other keys and values are kept verbatim and in
source order (Kafka's own generator coerces odd forms such as a numeric
"default", so ours must as well).  A single local overlay, see
apply_local_overlay(), is applied on top.

The error table (schemas/error-codes.tsv: code, name, retriable) is read by
running tools/error-codes/ErrorCodes.java against the same jar (Java's
single-file source mode, with the slf4j-api jar that kafka-clients' pom names).
It is not a .json file, so the generator does not take it for a message schema.
"""

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

TOOLS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TOOLS_DIR.parent
SCHEMAS_DIR = REPO_ROOT / "schemas"
VERSION_FILE = TOOLS_DIR / "kafka-version"
ERROR_TABLE_NAME = "error-codes.tsv"
ERROR_PROGRAM = TOOLS_DIR / "error-codes" / "ErrorCodes.java"

JAR_PREFIX = "common/message/"
JAR_VERSION_ENTRY = "kafka/kafka-version.properties"
DROPPED_KEY = "about"

# Shown in the `check` summary; keep in step with apply_local_overlay().
OVERLAY_SUMMARY = ["DescribeQuorum v3 (unstable)"]

# The block of Cargo.toml this tool writes: one cargo feature per API, and
# `all-apis` naming them all.
CARGO_TOML = REPO_ROOT / "Cargo.toml"
FEATURES_BEGIN = ("# --- One feature per API, written by `python3 tools/import_schemas.py import` "
                  "from schemas/; do not edit. ---")
FEATURES_END = "# --- End of the per-API features. ---"
# APIs compiled whatever the features (the generator's ALWAYS_COMPILED): no feature of their own.
ALWAYS_COMPILED = {"ApiVersions"}
# Features of Cargo.toml that are not APIs; an API's feature name must not take one of them.
OTHER_FEATURES = {"default", "client", "broker", "json", "all-apis", "arbitrary", "tokio",
                  "records", "gzip", "snappy", "lz4", "zstd", "quorum"}

# Maximum number of diff lines shown per differing file by `check`.
MAX_DIFF_LINES = 60


class SchemaImportError(Exception):
    """A problem that should stop the tool with a clear message."""


# --------------------------------------------------------------------------
# Locating the jar
# --------------------------------------------------------------------------

def pinned_version():
    """Return the Kafka version pinned in tools/kafka-version."""
    try:
        version = VERSION_FILE.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise SchemaImportError(f"{VERSION_FILE} is missing")
    if not version:
        raise SchemaImportError(f"{VERSION_FILE} is empty")
    return version


def m2_jar_path(version):
    """Path of the kafka-clients jar for `version` in the local Maven repo."""
    return (Path.home() / ".m2" / "repository" / "org" / "apache" / "kafka"
            / "kafka-clients" / version / f"kafka-clients-{version}.jar")


def locate_jar(version):
    """Find the pinned jar in ~/.m2, asking Maven to fetch it if absent."""
    return m2_fetch(m2_jar_path(version), f"org.apache.kafka:kafka-clients:{version}")


def m2_fetch(jar, artifact):
    """Return `jar` (a path in ~/.m2), asking Maven to fetch `artifact` if it is absent."""
    if jar.is_file():
        return jar
    cmd = ["mvn", "-q", "dependency:get", f"-Dartifact={artifact}",
           "-Dtransitive=false"]
    print(f"{jar} not found; running: {' '.join(cmd)}", file=sys.stderr)
    try:
        subprocess.run(cmd, check=True)
    except FileNotFoundError:
        raise SchemaImportError("mvn is not installed; pass --jar PATH instead")
    except subprocess.CalledProcessError as exc:
        raise SchemaImportError(f"mvn failed with exit code {exc.returncode}")
    if not jar.is_file():
        raise SchemaImportError(f"mvn finished but {jar} still does not exist")
    return jar


# --------------------------------------------------------------------------
# Reading and cleaning the schema files
# --------------------------------------------------------------------------

def strip_comments(text, origin):
    """Remove // and /* */ comments, leaving string literals untouched."""
    out = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            # Copy the whole string literal, honouring backslash escapes.
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise SchemaImportError(f"{origin}: unterminated string literal")
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j  # keep the newline itself
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise SchemaImportError(f"{origin}: unterminated /* comment")
            out.append(" ")
            i = j + 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _no_duplicate_keys(origin):
    """object_pairs_hook that rejects repeated keys instead of dropping one."""
    def hook(pairs):
        obj = {}
        for key, value in pairs:
            if key in obj:
                raise SchemaImportError(f"{origin}: duplicate key {key!r}")
            obj[key] = value
        return obj
    return hook


def drop_key(value, key):
    """Return `value` with `key` removed from every object, at any depth."""
    if isinstance(value, dict):
        return {k: drop_key(v, key) for k, v in value.items() if k != key}
    if isinstance(value, list):
        return [drop_key(v, key) for v in value]
    return value


def parse_schema(text, origin):
    """Turn one upstream schema file into our comment-free, about-free form."""
    try:
        obj = json.loads(strip_comments(text, origin),
                         object_pairs_hook=_no_duplicate_keys(origin))
    except json.JSONDecodeError as exc:
        raise SchemaImportError(f"{origin}: invalid JSON after stripping comments: {exc}")
    if not isinstance(obj, dict) or "name" not in obj:
        raise SchemaImportError(f"{origin}: expected an object with a \"name\" key")
    return drop_key(obj, DROPPED_KEY)


def jar_kafka_version(zf):
    """Kafka version recorded inside the jar, or None if it has none."""
    try:
        props = zf.read(JAR_VERSION_ENTRY).decode("utf-8")
    except KeyError:
        return None
    for line in props.splitlines():
        if line.startswith("version="):
            return line.split("=", 1)[1].strip()
    return None


def read_upstream(jar):
    """Read every common/message/*.json in the jar: ({file name: schema}, version)."""
    schemas = {}
    try:
        zf = zipfile.ZipFile(jar)
    except (OSError, zipfile.BadZipFile) as exc:
        raise SchemaImportError(f"cannot open jar {jar}: {exc}")
    with zf:
        version = jar_kafka_version(zf)
        for entry in sorted(zf.namelist()):
            if not entry.startswith(JAR_PREFIX) or not entry.endswith(".json"):
                continue
            file_name = entry[len(JAR_PREFIX):]
            if "/" in file_name:
                continue  # only the directory itself, not subdirectories
            origin = f"{jar.name}!{entry}"
            schema = parse_schema(zf.read(entry).decode("utf-8"), origin)
            if f"{schema['name']}.json" != file_name:
                raise SchemaImportError(
                    f"{origin}: message name {schema['name']!r} does not match file name")
            schemas[file_name] = schema
    if not schemas:
        raise SchemaImportError(f"{jar} contains no {JAR_PREFIX}*.json files")
    return schemas, version


# --------------------------------------------------------------------------
# Local overlay
# --------------------------------------------------------------------------

def _find_field(fields, name, where):
    """Return (index, field) of the field called `name`, or fail."""
    for index, field in enumerate(fields):
        if field.get("name") == name:
            return index, field
    raise SchemaImportError(f"overlay anchor missing: no field {name!r} in {where}")


def _bump_to_v3(schema, file_name):
    """Raise validVersions' upper bound from 2 to 3, refusing if upstream is past 2."""
    valid = schema.get("validVersions")
    lo, sep, hi = str(valid).partition("-")
    if not (sep and lo.isdigit() and hi.isdigit()):
        raise SchemaImportError(
            f"overlay: {file_name} has unexpected validVersions {valid!r}")
    if int(hi) >= 3:
        raise SchemaImportError(
            f"overlay: upstream {file_name} already defines version {hi} "
            f"(validVersions {valid!r}); review the local DescribeQuorum v3 overlay")
    if int(hi) != 2:
        raise SchemaImportError(
            f"overlay: {file_name} validVersions is {valid!r}, expected an upper bound of 2")
    schema["validVersions"] = f"{lo}-3"


def apply_local_overlay(schemas):
    """Apply our one deliberate divergence from upstream: DescribeQuorum v3.

    Version 3 of DescribeQuorum implements the "committed voter set" proposal
    (KIP-1204, a draft; apache/kafka PR #20712, open).  The request body is
    unchanged; the response's PartitionData gains a nullable, ignorable
    CommittedVoters array (of ReplicaState) between CurrentVoters and
    Observers, where upstream's draft schema puts it (commit 420d331 on the
    KAFKA-17243 branch), so that bytes from a controller running the draft
    decode the same.  The draft gives no default; ours is null, meaning "the
    committed set is unknown".  Version 3 is in development upstream, so the
    request is marked latestVersionUnstable (Kafka's generator accepts that key
    on requests only; the response's version is the request's, so it follows).
    Any surprise in the upstream files (a version 3 already there, anchors
    renamed or gone) stops the import so that a Kafka upgrade forces someone to
    review this overlay rather than silently stacking on top.
    """
    request = schemas.get("DescribeQuorumRequest.json")
    response = schemas.get("DescribeQuorumResponse.json")
    if request is None or response is None:
        raise SchemaImportError("overlay anchor missing: DescribeQuorum request/response schema")

    _bump_to_v3(request, "DescribeQuorumRequest.json")
    _bump_to_v3(response, "DescribeQuorumResponse.json")
    if request.get("latestVersionUnstable", False) is not False:
        raise SchemaImportError(
            "overlay: upstream DescribeQuorumRequest.json already has an unstable latest "
            "version; review the local DescribeQuorum v3 overlay")
    # Replaces upstream's explicit `false` in place, so the key keeps its position.
    request["latestVersionUnstable"] = True

    where = "DescribeQuorumResponse"
    _, topics = _find_field(response.get("fields", []), "Topics", where)
    where += ".Topics"
    _, partitions = _find_field(topics.get("fields", []), "Partitions", where)
    if partitions.get("type") != "[]PartitionData":
        raise SchemaImportError(
            f"overlay anchor changed: {where}.Partitions has type {partitions.get('type')!r}")
    where += ".Partitions"
    part_fields = partitions.get("fields", [])
    index, _ = _find_field(part_fields, "CurrentVoters", where)
    observers_at, _ = _find_field(part_fields, "Observers", where)
    if observers_at != index + 1:
        raise SchemaImportError(
            f"overlay anchor changed: {where}.Observers no longer follows CurrentVoters")
    if any(f.get("name") == "CommittedVoters" for f in part_fields):
        raise SchemaImportError(f"overlay: upstream {where} already has CommittedVoters")
    if not any(s.get("name") == "ReplicaState" for s in response.get("commonStructs", [])):
        raise SchemaImportError(
            "overlay anchor missing: commonStruct ReplicaState in DescribeQuorumResponse")

    part_fields.insert(index + 1, {
        "name": "CommittedVoters",
        "type": "[]ReplicaState",
        "versions": "3+",
        "nullableVersions": "3+",
        "default": "null",
        "ignorable": True,
    })


# --------------------------------------------------------------------------
# The error table
# --------------------------------------------------------------------------

def slf4j_jar(kafka_jar):
    """The slf4j-api jar that kafka-clients needs at run time (its Errors class logs).

    The version comes from the pom Maven stores next to the kafka-clients jar.
    """
    pom = kafka_jar.with_suffix(".pom")
    if not pom.is_file():
        raise SchemaImportError(
            f"{pom} is missing: the error table needs kafka-clients' pom to find the "
            f"slf4j-api version (use a jar from ~/.m2)")
    match = re.search(
        r"<artifactId>slf4j-api</artifactId>\s*<version>([^<]+)</version>",
        pom.read_text(encoding="utf-8"))
    if not match:
        raise SchemaImportError(f"{pom} names no slf4j-api dependency")
    version = match.group(1).strip()
    jar = (Path.home() / ".m2" / "repository" / "org" / "slf4j" / "slf4j-api" / version
           / f"slf4j-api-{version}.jar")
    return m2_fetch(jar, f"org.slf4j:slf4j-api:{version}")


def parse_error_table(text, origin):
    """Check ErrorCodes.java's output: [(code, name, retriable)] sorted by code."""
    rows = []
    codes, names = set(), set()
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split("\t")
        if len(parts) != 3:
            raise SchemaImportError(f"{origin} line {number}: expected 3 columns: {line!r}")
        code, name, retriable = parts
        if not re.fullmatch(r"-?[0-9]+", code) or not -32768 <= int(code) <= 32767:
            raise SchemaImportError(f"{origin} line {number}: code {code!r} is not an int16")
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name):
            raise SchemaImportError(f"{origin} line {number}: odd error name {name!r}")
        if retriable not in ("true", "false"):
            raise SchemaImportError(f"{origin} line {number}: retriable is {retriable!r}")
        if int(code) in codes or name in names:
            raise SchemaImportError(f"{origin} line {number}: {code} {name} given twice")
        codes.add(int(code))
        names.add(name)
        rows.append((int(code), name, retriable == "true"))
    if 0 not in codes:
        raise SchemaImportError(f"{origin}: no code 0 (NONE)")
    return sorted(rows)


def read_error_table(jar):
    """Run ErrorCodes.java against the jar; return the rows."""
    class_path = os.pathsep.join([str(jar), str(slf4j_jar(jar))])
    cmd = ["java", "-cp", class_path, str(ERROR_PROGRAM)]
    try:
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise SchemaImportError("java (17+) is needed to read the error table")
    except subprocess.CalledProcessError as exc:
        raise SchemaImportError(
            f"{ERROR_PROGRAM.name} failed with exit code {exc.returncode}:\n{exc.stderr}")
    return parse_error_table(done.stdout, f"{ERROR_PROGRAM.name} on {jar.name}")


def render_error_table(rows, label):
    """The error table as stored in schemas/: a comment, a header row, one row per code."""
    lines = [f"# Kafka's error codes, imported from kafka-clients {label} by "
             f"tools/import_schemas.py; do not edit.",
             "code\tname\tretriable"]
    lines += [f"{code}\t{name}\t{'true' if retriable else 'false'}"
              for code, name, retriable in rows]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Producing and comparing output
# --------------------------------------------------------------------------

def render(schema):
    """Serialise one schema exactly as it is stored in schemas/."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------
# The per-API cargo features
# --------------------------------------------------------------------------

def snake_case(name):
    """`DescribeQuorum` -> `describe_quorum`, as the generator's snake_case() does."""
    out = []
    for i, c in enumerate(name):
        if c.isascii() and c.isupper():
            prev = name[i - 1] if i > 0 else ""
            nxt = name[i + 1] if i + 1 < len(name) else ""
            prev_lower = i > 0 and (prev.islower() or prev.isdigit())
            acronym_end = i > 0 and prev.isupper() and nxt.islower()
            if prev_lower or acronym_end:
                out.append("_")
            out.append(c.lower())
        else:
            out.append(c)
    return "".join(out)


def api_features(schemas):
    """The feature of every live API but ApiVersions: its name in kebab case."""
    features = []
    for schema in schemas.values():
        if schema.get("type") != "request" or schema.get("validVersions") == "none":
            continue
        api = schema["name"].removesuffix("Request")
        if api in ALWAYS_COMPILED:
            continue
        feature = snake_case(api).replace("_", "-")
        if feature in OTHER_FEATURES:
            raise SchemaImportError(f"API {schema['name']} would take the feature `{feature}`, "
                                    "which Cargo.toml already uses for something else")
        features.append(feature)
    return sorted(features)


def render_features(features):
    """The generated block of Cargo.toml's [features] table."""
    lines = [FEATURES_BEGIN,
             "# Every API; the default features turn them all on.",
             "all-apis = ["]
    lines += [f'    "{feature}",' for feature in features]
    lines.append("]")
    lines += [f"{feature} = []" for feature in features]
    lines.append(FEATURES_END)
    return "\n".join(lines) + "\n"


def cargo_toml_with(features_block):
    """Cargo.toml's text with its per-API block replaced by `features_block`."""
    text = CARGO_TOML.read_text(encoding="utf-8")
    start = text.find(FEATURES_BEGIN)
    end = text.find(FEATURES_END)
    if start < 0 or end < start:
        raise SchemaImportError(f"{CARGO_TOML} lacks the per-API feature markers "
                                f"({FEATURES_BEGIN!r} ... {FEATURES_END!r})")
    end = text.index("\n", end) + 1
    return text, text[:start] + features_block + text[end:]


def build_output(jar_arg):
    """Build {file name: text} for schemas/, plus a label for the source."""
    if jar_arg:
        jar = Path(jar_arg)
        if not jar.is_file():
            raise SchemaImportError(f"jar not found: {jar}")
        expected = None
    else:
        expected = pinned_version()
        jar = locate_jar(expected)
    schemas, jar_version = read_upstream(jar)
    if expected and jar_version and jar_version != expected:
        raise SchemaImportError(
            f"{jar} reports Kafka {jar_version}, but tools/kafka-version pins {expected}")
    apply_local_overlay(schemas)
    output = {name: render(schema) for name, schema in schemas.items()}
    label = jar_version or expected or jar.name
    output[ERROR_TABLE_NAME] = render_error_table(read_error_table(jar), label)
    return output, label, render_features(api_features(schemas))


def committed_files():
    """Current schemas/*.json files and the error table as {file name: Path}."""
    if not SCHEMAS_DIR.is_dir():
        return {}
    files = {p.name: p for p in SCHEMAS_DIR.glob("*.json")}
    table = SCHEMAS_DIR / ERROR_TABLE_NAME
    if table.is_file():
        files[table.name] = table
    return files


def cmd_import(args):
    """Write schemas/ from the jar and remove files upstream no longer has."""
    output, label, features = build_output(args.jar)
    SCHEMAS_DIR.mkdir(exist_ok=True)
    written = 0
    for name, text in sorted(output.items()):
        path = SCHEMAS_DIR / name
        data = text.encode("utf-8")
        if not path.is_file() or path.read_bytes() != data:
            path.write_bytes(data)
            written += 1
    removed = sorted(set(committed_files()) - set(output))
    for name in removed:
        (SCHEMAS_DIR / name).unlink()
    old_toml, new_toml = cargo_toml_with(features)
    if new_toml != old_toml:
        CARGO_TOML.write_text(new_toml, encoding="utf-8")
        print("rewrote the per-API features in Cargo.toml")
    print(f"imported kafka-clients {label}: {len(output) - 1} schemas and the error table "
          f"({written} written, {len(removed)} removed"
          f"{': ' + ', '.join(removed) if removed else ''}), "
          f"{len(OVERLAY_SUMMARY)} local overlay: {', '.join(OVERLAY_SUMMARY)}")
    return 0


def _short_diff(name, old, new):
    """Unified diff of one file, cut down to MAX_DIFF_LINES lines."""
    lines = list(difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True),
        fromfile=f"schemas/{name} (committed)", tofile=f"schemas/{name} (import)", n=2))
    if len(lines) > MAX_DIFF_LINES:
        extra = len(lines) - MAX_DIFF_LINES
        lines = lines[:MAX_DIFF_LINES] + [f"... ({extra} more diff lines)\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def cmd_check(args):
    """Compare schemas/ with a fresh in-memory import; exit 1 on any difference."""
    output, label, features = build_output(args.jar)
    old_toml, new_toml = cargo_toml_with(features)
    features_differ = new_toml != old_toml
    committed = committed_files()
    missing = sorted(set(output) - set(committed))
    extra = sorted(set(committed) - set(output))
    changed = []
    for name in sorted(set(output) & set(committed)):
        if committed[name].read_bytes() != output[name].encode("utf-8"):
            changed.append(name)

    if not (missing or extra or changed or features_differ):
        print(f"schemas/ matches kafka-clients {label} ({len(output) - 1} schemas and the "
              f"error table, "
              f"{len(OVERLAY_SUMMARY)} local overlay: {', '.join(OVERLAY_SUMMARY)}); "
              f"Cargo.toml has its {features.count(' = []')} per-API features")
        return 0

    if features_differ:
        sys.stdout.write("".join(difflib.unified_diff(
            old_toml.splitlines(keepends=True), new_toml.splitlines(keepends=True),
            fromfile="Cargo.toml (committed)", tofile="Cargo.toml (import)", n=1)))

    for name in changed:
        old = committed[name].read_bytes().decode("utf-8", errors="replace")
        sys.stdout.write(_short_diff(name, old, output[name]))
    for name in missing:
        print(f"missing: schemas/{name}")
    for name in extra:
        print(f"extra:   schemas/{name}")
    print(f"schemas/ differs from kafka-clients {label}: {len(changed)} changed, "
          f"{len(missing)} missing, {len(extra)} extra"
          f"{', per-API features of Cargo.toml differ' if features_differ else ''}; "
          f"run `python3 tools/import_schemas.py import` and review `git diff schemas/`",
          file=sys.stderr)
    return 1


def main(argv=None):
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        description="Import Kafka message schemas and error codes from kafka-clients "
                    "into schemas/.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, func, text in (
            ("import", cmd_import, "rewrite schemas/ from the jar"),
            ("check", cmd_check, "verify schemas/ matches the jar")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--jar", help="kafka-clients jar to read "
                       "(default: the version in tools/kafka-version from ~/.m2)")
        p.set_defaults(func=func)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except SchemaImportError as exc:
        print(f"import_schemas: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
