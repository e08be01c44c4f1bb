#!/usr/bin/env python3
"""Import Kafka's message schemas and error table from kafka-clients jars into schemas/.

Usage:
    python3 tools/import_schemas.py import [--jar PATH] [--release X.Y.Z]
    python3 tools/import_schemas.py check  [--jar PATH]

The schemas are the merge of several releases: the one pinned in tools/kafka-version and
the older ones listed in tools/kafka-older-releases (the last release of each earlier major
line), so that every version any of them speaks is kept (tools/schema_merge.py has the
rules).  `import` rewrites schemas/ from the jars, and the per-API cargo features in
Cargo.toml from the schemas; `check` rebuilds the same output in memory and fails if the
committed schemas/ or the feature list differs from it.  The jars are taken from ~/.m2
(fetched with mvn when missing); --jar names the pinned release's jar instead.
`import --release X.Y.Z` first records X.Y.Z: it replaces the pin when it is of the pin's
major line or newer (a newer major keeps the old pin as its line's older release), else
the older release of its own major line.

Besides the schemas, the import writes schemas/releases.tsv (the versions each release
defines, per schema) and schemas/header-versions.tsv (the header versions Kafka uses that
do not follow from the flexible versions), both read by the generator.

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

import schema_merge
from schema_merge import MergeError, Side, versions_of

TOOLS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TOOLS_DIR.parent
SCHEMAS_DIR = REPO_ROOT / "schemas"
VERSION_FILE = TOOLS_DIR / "kafka-version"
OLDER_RELEASES_FILE = TOOLS_DIR / "kafka-older-releases"
ERROR_TABLE_NAME = "error-codes.tsv"
ERROR_PROGRAM = TOOLS_DIR / "error-codes" / "ErrorCodes.java"
RELEASES_TABLE_NAME = "releases.tsv"
HEADERS_TABLE_NAME = "header-versions.tsv"
HEADERS_PROGRAM = TOOLS_DIR / "header-versions" / "HeaderVersions.java"
# Files of schemas/ the import writes besides the schemas themselves.
TABLES = (ERROR_TABLE_NAME, RELEASES_TABLE_NAME, HEADERS_TABLE_NAME)

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


def older_releases():
    """The older releases of tools/kafka-older-releases, oldest first."""
    try:
        text = OLDER_RELEASES_FILE.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    releases = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    releases = [r for r in releases if r]
    for release in releases:
        release_key(release)
    if sorted(releases, key=release_key) != releases or len(set(releases)) != len(releases):
        raise SchemaImportError(f"{OLDER_RELEASES_FILE}: releases must be listed once each, "
                                f"oldest first")
    return releases


def release_key(release):
    """`3.9.1` -> (3, 9, 1), for ordering; refuses anything else."""
    if not re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", release):
        raise SchemaImportError(f"{release!r} is not a Kafka release number (X.Y.Z)")
    return tuple(int(part) for part in release.split("."))


def record_release(release):
    """Puts `release` in tools/kafka-version or tools/kafka-older-releases (see the module's
    documentation); returns what it did, in words."""
    new = release_key(release)
    pin = pinned_version()
    older = older_releases()
    if new[0] >= release_key(pin)[0]:
        if new < release_key(pin):
            raise SchemaImportError(f"{release} is older than the pinned {pin}")
        if new[0] > release_key(pin)[0]:
            older = [r for r in older if release_key(r)[0] != release_key(pin)[0]] + [pin]
        VERSION_FILE.write_text(release + "\n", encoding="utf-8")
        done = f"pinned {release} (was {pin})"
    else:
        same_line = [r for r in older if release_key(r)[0] == new[0]]
        older = [r for r in older if release_key(r)[0] != new[0]] + [release]
        done = (f"{release} replaces {same_line[0]} as the last {new[0]}.x" if same_line
                else f"{release} added as the last {new[0]}.x")
    lines = [line for line in OLDER_RELEASES_FILE.read_text(encoding="utf-8").splitlines()
             if line.startswith("#")]
    lines += sorted(set(older), key=release_key)
    OLDER_RELEASES_FILE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return done


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
    """object_pairs_hook that rejects a key given twice with two values (Jackson would keep
    the last silently). The same value twice, as in Kafka 3.9's DescribeTopicPartitionsRequest,
    says one thing and is kept once."""
    def hook(pairs):
        obj = {}
        for key, value in pairs:
            if key in obj and obj[key] != value:
                raise SchemaImportError(f"{origin}: key {key!r} given twice, with two values")
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


def merge_error_tables(tables):
    """One error table from several releases' ({release: rows}, newest last): every code any
    release has; a code that two releases name or class differently stops the import."""
    merged = {}
    for release, rows in tables.items():
        for code, name, retriable in rows:
            known = merged.get(code)
            if known and known[1:] != (name, retriable):
                raise SchemaImportError(
                    f"error code {code} is {known[1]} (retriable {known[2]}) in {known[0]} but "
                    f"{name} (retriable {retriable}) in {release}")
            merged[code] = (release, name, retriable)
    return sorted((code, name, retriable) for code, (_, name, retriable) in merged.items())


def render_error_table(rows, label):
    """The error table as stored in schemas/: a comment, a header row, one row per code."""
    lines = [f"# Kafka's error codes, imported from kafka-clients {label} by "
             f"tools/import_schemas.py; do not edit.",
             "code\tname\tretriable"]
    lines += [f"{code}\t{name}\t{'true' if retriable else 'false'}"
              for code, name, retriable in rows]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Header versions
# --------------------------------------------------------------------------

def read_header_versions(jar):
    """Run HeaderVersions.java against the jar: {(api key, version): (request, response)}."""
    class_path = os.pathsep.join([str(jar), str(slf4j_jar(jar))])
    cmd = ["java", "-cp", class_path, str(HEADERS_PROGRAM)]
    try:
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    except FileNotFoundError:
        raise SchemaImportError("java (17+) is needed to read the header versions")
    except subprocess.CalledProcessError as exc:
        raise SchemaImportError(
            f"{HEADERS_PROGRAM.name} failed with exit code {exc.returncode}:\n{exc.stderr}")
    out = {}
    for number, line in enumerate(done.stdout.splitlines(), 1):
        parts = line.split("\t")
        if len(parts) != 4 or not all(re.fullmatch(r"-?[0-9]+", p) for p in parts):
            raise SchemaImportError(f"{HEADERS_PROGRAM.name} on {jar.name} line {number}: "
                                    f"expected four numbers: {line!r}")
        key, version, request, response = (int(p) for p in parts)
        out[(key, version)] = (request, response)
    return out


def header_exceptions(schemas, facts):
    """The header versions that do not follow from the flexible versions (a request header is
    v2 for a flexible body, else v1; a response header v1, else v0), as rows
    (API name, direction, version, header version). `facts` is {release: read_header_versions}.
    A schema with `headerVersions` (Kafka 4.5 on) needs no row: the generator uses its map, which
    must give what every release uses, or the import stops."""
    apis = {}
    for schema in schemas.values():
        if schema.get("type") in ("request", "response") and schema.get("apiKey") is not None:
            apis.setdefault(schema["apiKey"], {})[schema["type"]] = schema
    found = {}
    for release, table in facts.items():
        for (key, version), headers in sorted(table.items()):
            api = apis.get(key)
            if api is None or version not in versions_of(api["request"]["validVersions"]):
                raise SchemaImportError(f"{release} defines API key {key} v{version}, which "
                                        f"the merged schemas lack")
            name = api["request"]["name"].removesuffix("Request")
            for direction, header, flexible_header, plain_header in (
                    ("request", headers[0], 2, 1), ("response", headers[1], 1, 0)):
                if "headerVersions" in api[direction]:
                    declared = schema_merge.header_version_of(api[direction], version)
                    if declared != header:
                        raise SchemaImportError(
                            f"{api[direction]['name']} v{version}: its headerVersions give "
                            f"header version {declared}, but {release} uses {header}")
                    continue
                flexible = version in versions_of(api[direction].get("flexibleVersions"))
                rule = flexible_header if flexible else plain_header
                if header == rule:
                    continue
                known = found.setdefault((name, direction, version), (header, release))
                if known[0] != header:
                    raise SchemaImportError(f"{name} {direction} v{version}: header version "
                                            f"{known[0]} in {known[1]}, {header} in {release}")
    return sorted((name, direction, version, header)
                  for (name, direction, version), (header, _) in found.items())


def render_header_table(rows, labels):
    """schemas/header-versions.tsv: the exceptions, consecutive versions as one range."""
    lines = [f"# Header versions that do not follow from the body's flexible versions, as "
             f"ApiMessageType of kafka-clients {', '.join(labels)} gives them; written by "
             f"tools/import_schemas.py; do not edit.",
             "api\tdirection\tversions\theader"]
    grouped = []
    for name, direction, version, header in rows:
        last = grouped[-1] if grouped else None
        if last and last[:2] == [name, direction] and last[3] == header and \
                last[2][1] == version - 1:
            last[2][1] = version
        else:
            grouped.append([name, direction, [version, version], header])
    for name, direction, (lo, hi), header in grouped:
        versions = str(lo) if lo == hi else f"{lo}-{hi}"
        lines.append(f"{name}\t{direction}\t{versions}\t{header}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------
# Merging releases
# --------------------------------------------------------------------------

def draft_versions(schemas):
    """{file name: its draft versions}: a request's latest version under
    `latestVersionUnstable`, and the same version of its response."""
    drafts = {}
    for schema in schemas.values():
        if schema.get("type") == "request" and \
                str(schema.get("latestVersionUnstable", False)).lower() == "true":
            valid = versions_of(schema.get("validVersions"))
            if valid:
                drafts[schema.get("apiKey")] = {max(valid)}
    return {name: (drafts.get(schema.get("apiKey"), set())
                   if schema.get("type") in ("request", "response") else set())
            for name, schema in schemas.items()}


def renamed_from():
    """{old file name: file name in the newest release} for renamed messages."""
    return {f"{table['message']}.json": f"{new}.json"
            for new, table in schema_merge.RENAMES.items() if "message" in table}


def merge_releases(releases, overlay=lambda schemas: None):
    """Merge [(release, {file: schema})] (newest first) into {file: schema}, after `overlay`
    changed the newest release's schemas; also returns the releases table rows
    {file: {release: text}}, which say what the releases themselves define."""
    newest, schemas = releases[0]
    drafts = draft_versions(schemas)
    table = {name: {newest: release_cell(schema, drafts[name])}
             for name, schema in schemas.items()}
    overlay(schemas)
    drafts = draft_versions(schemas)
    sides = {name: Side(newest, schema, versions_of(schema.get("validVersions")), drafts[name])
             for name, schema in schemas.items()}
    renames = renamed_from()
    checks = []
    for release, older in releases[1:]:
        drafts = draft_versions(older)
        for name, schema in sorted(older.items()):
            target = renames.get(name, name)
            renaming = schema_merge.RENAMES.get(target.removesuffix(".json"), {})
            used = set()
            renamed, renamed_paths = schema_merge.apply_renames(schema, renaming, used)
            unused = schema_merge.unused_renames(renaming, used)
            if unused:
                raise SchemaImportError(f"{release} {name}: RENAMES lists {', '.join(unused)}, "
                                        f"which this release does not have")
            side = Side(release, renamed, versions_of(schema.get("validVersions")), drafts[name])
            table.setdefault(target, {})[release] = release_cell(schema, drafts[name])
            if target not in sides:
                renamed["name"] = target.removesuffix(".json")
                sides[target] = side
                continue
            newer = sides[target]
            try:
                merged = schema_merge.merge_schema(newer, side, renamed_paths)
            except MergeError as exc:
                raise SchemaImportError(f"cannot merge {release} into {newer.release}: {exc}")
            kept = side.asserted - (side.unstable & newer.asserted)
            sides[target] = Side(newer.release, merged, newer.asserted | kept,
                                 newer.unstable | (side.unstable - newer.asserted))
            checks.append((target, release, renamed, kept))
    merged = {name: side.schema for name, side in sides.items()}
    # Every release's versions, read back from the merged schemas (the newest's drafts too).
    checks += [(name, newest, schema, versions_of(schema.get("validVersions")))
               for name, schema in schemas.items()]
    for name, release, schema, versions in checks:
        try:
            schema_merge.check_merged(merged[name], release, schema, versions)
        except MergeError as exc:
            raise SchemaImportError(str(exc))
    by_key = {}
    for name, schema in merged.items():
        if schema.get("type") == "request":
            other = by_key.setdefault(schema.get("apiKey"), name)
            if other != name:
                raise SchemaImportError(f"API key {schema.get('apiKey')} is both {other} and "
                                        f"{name}: a renamed API must be listed in RENAMES "
                                        f"(tools/schema_merge.py)")
    return merged, table


def release_cell(schema, drafts):
    """One release's cell of the releases table: its versions, `*` after a draft one."""
    valid = versions_of(schema.get("validVersions"))
    return schema_merge.valid_text(valid) + ("*" if drafts & valid else "")


def render_releases_table(table, releases):
    """schemas/releases.tsv: per schema, the versions each release defines."""
    lines = ["# The versions of each schema that each merged kafka-clients release defines, "
             "oldest release first: `*` marks a version the release has as unstable (a draft), "
             "`-` a schema it lacks. Written by tools/import_schemas.py; do not edit.",
             "\t".join(["schema"] + releases)]
    for name in sorted(table):
        cells = [table[name].get(release, "-") for release in releases]
        lines.append("\t".join([name.removesuffix(".json")] + cells))
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


def read_release(release, jar=None):
    """(schemas, error rows, header facts, jar) of one release, from ~/.m2 unless `jar`."""
    if jar is None:
        jar = locate_jar(release)
    schemas, jar_version = read_upstream(jar)
    if jar_version and jar_version != release:
        raise SchemaImportError(f"{jar} reports Kafka {jar_version}, not {release}")
    return schemas, read_error_table(jar), read_header_versions(jar)


def build_output(jar_arg):
    """Build {file name: text} for schemas/, a label for the sources and the features block."""
    pin = pinned_version()
    if jar_arg:
        jar = Path(jar_arg)
        if not jar.is_file():
            raise SchemaImportError(f"jar not found: {jar}")
    else:
        jar = None
    releases = older_releases() + [pin]
    if any(release_key(r) >= release_key(pin) for r in releases[:-1]):
        raise SchemaImportError(f"{OLDER_RELEASES_FILE} lists a release not older than the "
                                f"pinned {pin}")
    read = {release: read_release(release, jar if release == pin else None)
            for release in releases}
    merged, table = merge_releases([(release, read[release][0])
                                    for release in reversed(releases)], apply_local_overlay)
    output = {name: render(schema) for name, schema in merged.items()}
    output[ERROR_TABLE_NAME] = render_error_table(
        merge_error_tables({release: read[release][1] for release in releases}),
        " and ".join(releases))
    output[RELEASES_TABLE_NAME] = render_releases_table(table, releases)
    output[HEADERS_TABLE_NAME] = render_header_table(
        header_exceptions(merged, {release: read[release][2] for release in releases}), releases)
    label = " + ".join(releases)
    return output, label, render_features(api_features(merged))


def committed_files():
    """Current schemas/*.json files and the tables the import writes as {file name: Path}."""
    if not SCHEMAS_DIR.is_dir():
        return {}
    files = {p.name: p for p in SCHEMAS_DIR.glob("*.json")}
    for name in TABLES:
        table = SCHEMAS_DIR / name
        if table.is_file():
            files[table.name] = table
    return files


def cmd_import(args):
    """Write schemas/ from the jars and remove files upstream no longer has."""
    if args.release:
        print(record_release(args.release))
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
    print(f"imported kafka-clients {label}: {len(output) - len(TABLES)} schemas and "
          f"{len(TABLES)} tables "
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
        print(f"schemas/ matches kafka-clients {label} ({len(output) - len(TABLES)} schemas "
              f"and {len(TABLES)} tables, "
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
            ("import", cmd_import, "rewrite schemas/ from the jars"),
            ("check", cmd_check, "verify schemas/ matches the jars")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--jar", help="kafka-clients jar of the pinned release "
                       "(default: the version in tools/kafka-version from ~/.m2)")
        if name == "import":
            p.add_argument("--release", help="record this release first: the new pin, or the "
                           "last release of an older major line (see the module's doc)")
        p.set_defaults(func=func)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except SchemaImportError as exc:
        print(f"import_schemas: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
