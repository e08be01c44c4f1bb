"""Merging the schemas of several Kafka releases into one set, for tools/import_schemas.py.

Every release contributes the versions no newer release defines; for the versions two
releases both define, their definitions must agree field for field (presence, type, nullable,
tagged and tag, default, flexible encoding), or the merge stops with an error that names the
message, the version and the field. The merged file keeps the newest release's text wherever
it still describes the merged versions, so a schema that nothing older changes is written as
the newest release ships it.

What may differ between releases, and which one wins (the rules, in one place):

- Names: the newest release's. A field, struct or message renamed without a change on the
  wire is listed in RENAMES (old name -> new name); any other difference in names is an
  error, and so is a rename of a field present in a version only the older release defines
  (its JSON would no longer be that release's).
- Keys that are not facts of the wire or of the JSON form (`entityType`, `mapKey`,
  `zeroCopy`): the newest release's, for a field it has.
- `ignorable` only matters at versions that lack the field; each release decides it for the
  versions it contributes, and two releases that both decide it must agree.
- `deprecatedVersions`: each release for the versions it contributes.
- `listeners`: every listener any release names, the newest release's first.
- `headerVersions` (Kafka 4.5 on: which header version goes with each body version; the map
  covers every version from 0): the newest release's map that has one. Two maps must give the
  same header version at every version the older release defines.
- A release's unstable version (its latest, under `latestVersionUnstable`) is a draft: when a
  newer release defines that version, the newer definition is taken and the draft is not
  compared. When no newer release defines it, it is kept as that release had it.
"""

import copy

# Wire-identical renames: {message name in the newest release: {...}}, with
#   "message": the message's old name,
#   "fields":  {old dotted path of the field (old names): new name},
#   "structs": {old struct name: new struct name}.
# An entry is checked against the releases: a rename that no older release needs is an error.
RENAMES = {
    # Kafka 4.1 widened ListClientMetricsResources (key 74) to every kind of config resource
    # (KIP-1142); its v0 is the same bytes under new names.
    "ListConfigResourcesRequest": {"message": "ListClientMetricsResourcesRequest"},
    "ListConfigResourcesResponse": {
        "message": "ListClientMetricsResourcesResponse",
        "fields": {"ClientMetricsResources": "ConfigResources",
                   "ClientMetricsResources.Name": "ResourceName"},
        "structs": {"ClientMetricsResource": "ConfigResource"},
    },
    # Renamed between 4.1 and 4.4: the field carries the member epoch of a consumer-protocol
    # group too.
    "TxnOffsetCommitRequest": {"fields": {"GenerationId": "GenerationIdOrMemberEpoch"}},
    # Renamed in Kafka 4.0 with v2's PreVote: a Vote may come from a replica that is not yet a
    # candidate.
    "VoteRequest": {"fields": {
        "Topics.Partitions.CandidateEpoch": "ReplicaEpoch",
        "Topics.Partitions.CandidateId": "ReplicaId",
        "Topics.Partitions.CandidateDirectoryId": "ReplicaDirectoryId",
    }},
}

# Above every version any schema defines; "N+" ranges are cut here.
TOP = 1000


class MergeError(Exception):
    """Two releases that cannot be merged, with where and why."""


# --------------------------------------------------------------------------
# Version sets
# --------------------------------------------------------------------------

def versions_of(text):
    """The set of versions a range text names: `none`, `N`, `A-B` or `N+`."""
    if text is None:
        return set()
    text = str(text).strip()
    if text == "none":
        return set()
    if text.endswith("+"):
        return set(range(int(text[:-1]), TOP))
    if "-" in text:
        lo, hi = text.split("-", 1)
        return set(range(int(lo), int(hi) + 1))
    return {int(text)}


def range_text(versions, domain):
    """A range text naming `versions` within `domain` ("N+" when it reaches the domain's top),
    or None when no single range does."""
    if not versions:
        return "none"
    lo, hi = min(versions), max(versions)
    if {v for v in domain if lo <= v <= hi} != versions:
        return None
    if hi == max(domain):
        return f"{lo}+"
    return str(lo) if lo == hi else f"{lo}-{hi}"


def valid_text(versions):
    """`validVersions` text: `none`, `N` or `A-B` (never open-ended)."""
    if not versions:
        return "none"
    lo, hi = min(versions), max(versions)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def describe(versions):
    """Versions for a message: `0-2, 5`."""
    if not versions:
        return "none"
    out, run = [], []
    for v in sorted(versions):
        if run and v != run[-1] + 1:
            out.append(run)
            run = []
        run.append(v)
    out.append(run)
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in out)


def header_version_of(schema, version):
    """The header version a schema's `headerVersions` map gives `version`, or None when it
    has no map (or the map no entry for it)."""
    for versions, header in (schema.get("headerVersions") or {}).items():
        if version in versions_of(versions):
            return int(str(header).strip())
    return None


# --------------------------------------------------------------------------
# One release's view of a schema
# --------------------------------------------------------------------------

class Side:
    """One release's schema, or the merge of newer releases so far."""

    def __init__(self, release, schema, asserted, unstable=frozenset()):
        self.release = release
        self.schema = schema
        # The versions whose definitions this side vouches for.
        self.asserted = set(asserted)
        # Its draft versions (not compared with a newer release's definition).
        self.unstable = set(unstable)


def normal_scalar(value):
    """Kafka's generator coerces scalars: `"0"` and `0`, `"true"` and `true` are the same."""
    if value is None:
        return None
    text = str(value).strip()
    if isinstance(value, bool) or text.lower() in ("true", "false"):
        return text.lower()
    try:
        return str(int(text, 0))
    except ValueError:
        pass
    try:
        return repr(float(text))
    except ValueError:
        return text


def struct_name(type_text):
    inner = type_text[2:] if type_text.startswith("[]") else type_text
    return inner if inner[:1].isupper() else None


def merge_order(newer, older, where):
    """`newer` with the items only `older` has placed after their predecessor in `older`.
    Items both have must come in the same order."""
    common_newer = [x for x in newer if x in older]
    common_older = [x for x in older if x in newer]
    if common_newer != common_older:
        raise MergeError(f"{where}: the releases order {common_older} differently "
                         f"({common_newer} in the newer one)")
    result = list(newer)
    for i, item in enumerate(older):
        if item in result:
            continue
        before = next((older[j] for j in range(i - 1, -1, -1) if older[j] in result), None)
        result.insert(0 if before is None else result.index(before) + 1, item)
    return result


# --------------------------------------------------------------------------
# Renames
# --------------------------------------------------------------------------

def apply_renames(schema, table, used):
    """`schema` (an older release's) with the renames of `table` applied: returns it and the
    new dotted paths of the renamed fields, and records each rename applied in `used`."""
    schema = copy.deepcopy(schema)
    fields = table.get("fields", {})
    structs = table.get("structs", {})
    renamed = set()

    def walk(items, old_prefix, new_prefix):
        for field in items:
            old_path = old_prefix + field["name"]
            name = struct_name(field["type"])
            if name in structs:
                field["type"] = field["type"].replace(name, structs[name])
                used.add(("struct", name))
            if old_path in fields:
                field["name"] = fields[old_path]
                used.add(("field", old_path))
                renamed.add(new_prefix + field["name"])
            walk(field.get("fields", []), old_path + ".", new_prefix + field["name"] + ".")

    walk(schema.get("fields", []), "", "")
    for common in schema.get("commonStructs", []):
        old_name = common["name"]
        if old_name in structs:
            used.add(("struct", old_name))
            common["name"] = structs[old_name]
        walk(common.get("fields", []), old_name + ".", common["name"] + ".")
    return schema, renamed


def unused_renames(table, used):
    out = [f"field {p}" for p in table.get("fields", {}) if ("field", p) not in used]
    out += [f"struct {s}" for s in table.get("structs", {}) if ("struct", s) not in used]
    return out


# --------------------------------------------------------------------------
# Merging two sides
# --------------------------------------------------------------------------

class Merge:
    """Merges an older side into a newer one, for one schema."""

    def __init__(self, newer, older, renamed_fields):
        self.newer = newer
        self.older = older
        self.name = newer.schema["name"]
        self.defined = newer.asserted
        # The older release's drafts of versions the newer one defines are left out.
        self.old_asserted = older.asserted - (older.unstable & self.defined)
        self.shared = self.old_asserted & self.defined
        self.contributed = self.old_asserted - self.defined
        self.renamed_fields = renamed_fields  # new dotted paths of renamed fields

    def error(self, version, path, what):
        at = f" v{version}" if version is not None else ""
        field = f" field {path}" if path else ""
        raise MergeError(f"{self.name}{at}{field}: {what} "
                         f"({self.older.release} vs {self.newer.release})")

    def range_key(self, key, new_field, old_field, merged, domain, path):
        """The text of a version-range key naming `merged` within `domain`: the newer
        release's text if it does, else the older's, else a new one; None for an empty set
        that neither side writes."""
        for field in (new_field, old_field):
            if field is not None and key in field and versions_of(field[key]) & domain == merged:
                return field[key]
        if not merged:
            return None
        text = range_text(merged, domain)
        if text is None:
            self.error(None, path, f"`{key}` would be {describe(merged)}, not one range")
        return text

    def merge_fields(self, new_fields, old_fields, new_parent, old_parent, prefix):
        """Merged field list; `*_parent` are the versions at which the enclosing struct exists
        on each side."""
        self.check_unpaired(new_fields, old_fields, new_parent, old_parent, prefix)
        new_by_name = {f["name"]: f for f in new_fields}
        old_by_name = {f["name"]: f for f in old_fields}
        order = merge_order([f["name"] for f in new_fields], [f["name"] for f in old_fields],
                            f"{self.name} {prefix or 'top level'}")
        out = []
        for name in order:
            merged = self.merge_field(new_by_name.get(name), old_by_name.get(name),
                                      new_parent, old_parent, prefix + name)
            if merged is not None:
                out.append(merged)
        return out

    def check_unpaired(self, new_fields, old_fields, new_parent, old_parent, prefix):
        """At a shared version, a field of one name on one side where the other has another
        name at the same place: a rename that RENAMES does not list."""
        for version in sorted(self.shared & new_parent & old_parent):
            new = [f["name"] for f in new_fields if version in versions_of(f.get("versions"))]
            old = [f["name"] for f in old_fields if version in versions_of(f.get("versions"))]
            if new != old and len(new) == len(old):
                old_name, new_name = next((o, n) for o, n in zip(old, new) if o != n)
                self.error(version, prefix + new_name,
                           f"is {prefix}{old_name} in {self.older.release}: a rename that leaves "
                           f"the wire as it was must be listed in RENAMES (tools/schema_merge.py)")

    def merge_field(self, new, old, new_parent, old_parent, path):
        new_present = versions_of(new["versions"]) & new_parent if new else set()
        old_present = versions_of(old["versions"]) & old_parent if old else set()
        shared = self.shared & new_parent & old_parent
        for version in sorted(shared):
            if (version in new_present) != (version in old_present):
                has, lacks = ((self.newer.release, self.older.release) if version in new_present
                              else (self.older.release, self.newer.release))
                self.error(version, path, f"is in {has} but not in {lacks}")
        if not new_present:
            new = None
        if not old_present:
            old = None
        if new is None and old is None:
            return None  # in no version the merge keeps
        if path in self.renamed_fields and old_present - self.defined:
            self.error(min(old_present - self.defined), path,
                       f"is renamed, but present in a version only {self.older.release} "
                       f"defines, whose JSON has the old name")
        present = new_present | old_present
        common = new_present & old_present  # shared versions with the field: they must agree
        field = {}
        if new is not None and old is not None:
            if new["type"] != old["type"]:
                self.error(min(common or old_present), path, f"type {old['type']} vs "
                           f"{new['type']} (a renamed struct must be listed in RENAMES)")
            if normal_scalar(new.get("default")) != normal_scalar(old.get("default")):
                self.error(min(common or old_present), path,
                           f"default {old.get('default')!r} vs {new.get('default')!r}")
            if "tag" in new and "tag" in old and \
                    normal_scalar(new["tag"]) != normal_scalar(old["tag"]):
                self.error(min(common or old_present), path, f"tag {old['tag']} vs {new['tag']}")
        for key in ("nullableVersions", "taggedVersions", "flexibleVersions"):
            new_set = versions_of(new.get(key)) & new_present if new else set()
            old_set = versions_of(old.get(key)) & old_present if old else set()
            for version in sorted(common):
                if (version in new_set) != (version in old_set):
                    has = self.newer.release if version in new_set else self.older.release
                    self.error(version, path, f"`{key}` includes it in {has} only")
            text = self.range_key(key, new, old, new_set | old_set, present, path)
            if text is not None:
                field[key] = text
        field["versions"] = self.range_key("versions", new, old, present,
                                           new_parent | old_parent, path)
        ignorable = self.merged_ignorable(new, old, new_present, old_present, new_parent,
                                          old_parent, path)
        if ignorable is not None:
            field["ignorable"] = ignorable
        if (new is not None and "fields" in new) or (old is not None and "fields" in old):
            field["fields"] = self.merge_fields(
                new.get("fields", []) if new else [], old.get("fields", []) if old else [],
                new_present, old_present, path + ".")
        keys = merge_order(list(new or {}), list(old or {}), f"{self.name} {path}")
        keys += [k for k in field if k not in keys]
        result = {}
        for key in keys:
            if key in field:
                result[key] = field[key]
            elif key in ("nullableVersions", "taggedVersions", "flexibleVersions", "ignorable",
                         "fields", "versions"):
                continue  # decided above; absent here means nothing to say
            elif new is not None and key in new:
                result[key] = copy.deepcopy(new[key])
            else:
                result[key] = copy.deepcopy(old[key])
        return result

    def merged_ignorable(self, new, old, new_present, old_present, new_parent, old_parent, path):
        """`ignorable` decides what happens at versions without the field: each release decides
        for the versions it contributes; where both decide, they must agree."""
        decisions = []
        if new is not None and new_parent - new_present:
            decisions.append((self.newer.release, new))
        if old is not None and (old_parent & self.contributed) - old_present:
            decisions.append((self.older.release, old))
        flags = [bool(normal_scalar(f.get("ignorable")) == "true") for _, f in decisions]
        if len(decisions) == 2 and flags[0] != flags[1]:
            self.error(None, path, f"ignorable is {flags[1]} in {decisions[1][0]} and "
                       f"{flags[0]} in {decisions[0][0]}, for versions without the field")
        source = decisions[0][1] if decisions else (new if new is not None else old)
        return source.get("ignorable")

    def merged_header_versions(self):
        """The newer release's `headerVersions`, else the older's; where both have one, they
        must agree at every version the older release defines (the map of the newest is kept,
        and speaks for the older release's versions too)."""
        new, old = self.newer.schema, self.older.schema
        if "headerVersions" in new and "headerVersions" in old:
            for version in sorted(self.old_asserted):
                ours, theirs = header_version_of(new, version), header_version_of(old, version)
                if ours != theirs:
                    self.error(version, None, f"`headerVersions` give header version {theirs} "
                               f"in {self.older.release} and {ours} in {self.newer.release}")
        source = new if "headerVersions" in new else old
        return copy.deepcopy(source.get("headerVersions"))

    def merge_common(self, new_structs, old_structs):
        new_by_name = {s["name"]: s for s in new_structs}
        old_by_name = {s["name"]: s for s in old_structs}
        order = merge_order([s["name"] for s in new_structs], [s["name"] for s in old_structs],
                            f"{self.name} commonStructs")
        out = []
        for name in order:
            new, old = new_by_name.get(name), old_by_name.get(name)
            new_versions = versions_of(new.get("versions", "0+")) & self.defined if new else set()
            old_versions = (versions_of(old.get("versions", "0+")) & self.old_asserted
                            if old else set())
            if not new_versions and not old_versions:
                continue
            base = copy.deepcopy(new if new_versions else old)
            base["fields"] = self.merge_fields(
                new.get("fields", []) if new_versions else [],
                old.get("fields", []) if old_versions else [],
                new_versions, old_versions, name + ".")
            out.append(base)
        return out

    def run(self):
        new, old = self.newer.schema, self.older.schema
        for key in ("type", "apiKey"):
            if new.get(key) != old.get(key):
                self.error(None, None, f"`{key}` is {old.get(key)!r} vs {new.get(key)!r}")
        valid = self.defined | self.contributed
        if len(valid) != max(valid) - min(valid) + 1:
            self.error(None, None, f"the merged versions {describe(valid)} are not one range")
        flexible_new = versions_of(new.get("flexibleVersions")) & self.defined
        flexible_old = versions_of(old.get("flexibleVersions")) & self.old_asserted
        for version in sorted(self.shared):
            if (version in flexible_new) != (version in flexible_old):
                self.error(version, None, "flexible in one release only")
        flexible = self.range_key("flexibleVersions", new, old, flexible_new | flexible_old,
                                  valid, None) or "none"
        deprecated = ((versions_of(new.get("deprecatedVersions")) & self.defined)
                      | (versions_of(old.get("deprecatedVersions")) & self.contributed))
        fields = self.merge_fields(new.get("fields", []), old.get("fields", []),
                                   self.defined, self.old_asserted, "")
        common = self.merge_common(new.get("commonStructs", []), old.get("commonStructs", []))
        listeners = list(new.get("listeners", []))
        listeners += [x for x in old.get("listeners", []) if x not in listeners]
        top = new if max(valid) in self.defined else old
        decided = {
            "validVersions": new["validVersions"] if versions_of(new["validVersions"]) == valid
            else valid_text(valid),
            "flexibleVersions": flexible,
            "fields": fields,
        }
        if deprecated:
            decided["deprecatedVersions"] = self.range_key("deprecatedVersions", new, old,
                                                           deprecated, valid, None)
        if common:
            decided["commonStructs"] = common
        if listeners:
            decided["listeners"] = listeners
        if "latestVersionUnstable" in top:
            decided["latestVersionUnstable"] = top["latestVersionUnstable"]
        header_versions = self.merged_header_versions()
        if header_versions is not None:
            decided["headerVersions"] = header_versions
        keys = merge_order(list(new), list(old), f"{self.name} keys")
        keys += [k for k in decided if k not in keys]
        merged = {}
        for key in keys:
            if key in decided:
                merged[key] = decided[key]
            elif key in ("deprecatedVersions", "commonStructs", "listeners",
                         "latestVersionUnstable", "headerVersions"):
                continue
            elif key in new:
                merged[key] = copy.deepcopy(new[key])
            else:
                merged[key] = copy.deepcopy(old[key])
        return merged


def merge_schema(newer, older, renamed_fields=frozenset()):
    """Merges `older` (a Side) into `newer`; returns the merged schema dict."""
    if not newer.asserted:
        # Nothing newer to agree with (a stub such as Kafka 4's LeaderAndIsr): the older
        # release's schema as it is, under the newer name.
        schema = copy.deepcopy(older.schema)
        schema["name"] = newer.schema["name"]
        for key in ("type", "apiKey"):
            if newer.schema.get(key) != schema.get(key):
                raise MergeError(f"{schema['name']}: `{key}` is {schema.get(key)!r} in "
                                 f"{older.release} and {newer.schema.get(key)!r} in "
                                 f"{newer.release}")
        return schema
    return Merge(newer, older, renamed_fields).run()


# --------------------------------------------------------------------------
# The merge's own check
# --------------------------------------------------------------------------

def view(schema, version):
    """What a schema says of one version: flexible or not, and per field (nested fields
    included, common structs expanded) its name, type, nullability, tag and default."""
    commons = {s["name"]: s for s in schema.get("commonStructs", [])}
    flexible = version in versions_of(schema.get("flexibleVersions"))

    def fields(items):
        out = []
        for field in items:
            if version not in versions_of(field.get("versions")):
                continue
            nested = field.get("fields")
            if nested is None and struct_name(field["type"]) in commons:
                nested = commons[struct_name(field["type"])].get("fields", [])
            out.append((
                field["name"], field["type"],
                version in versions_of(field.get("nullableVersions")),
                version in versions_of(field.get("taggedVersions")),
                normal_scalar(field.get("tag")) if "taggedVersions" in field else None,
                version in versions_of(field.get("flexibleVersions", "0+" if flexible else "none")),
                normal_scalar(field.get("default")),
                tuple(fields(nested)) if nested is not None else None,
            ))
        return out

    return flexible, tuple(fields(schema.get("fields", [])))


def check_merged(merged, release, schema, versions):
    """The merged schema must say of every version in `versions` what `schema` (the release's,
    renames applied) says."""
    for version in sorted(versions):
        if view(merged, version) != view(schema, version):
            raise MergeError(f"{merged['name']} v{version}: the merged schema does not say what "
                             f"{release} says (a bug of the merge)")
