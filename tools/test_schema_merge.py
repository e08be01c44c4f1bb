"""Tests of tools/schema_merge.py on small made-up schemas: python3 tools/test_schema_merge.py"""

import copy
import unittest

import schema_merge
from schema_merge import MergeError, Side, merge_schema, versions_of

NEWER = {
    "apiKey": 90, "type": "request", "listeners": ["broker"], "name": "PingRequest",
    "validVersions": "3-5", "flexibleVersions": "4+",
    "fields": [
        {"name": "Id", "type": "int32", "versions": "0+"},
        {"name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
            {"name": "Name", "type": "string", "versions": "0+", "ignorable": True},
            {"name": "TopicId", "type": "uuid", "versions": "5+"},
        ]},
        {"name": "Note", "type": "string", "versions": "4+", "nullableVersions": "4+",
         "default": "null"},
    ],
}

OLDER = {
    "apiKey": 90, "type": "request", "listeners": ["zkBroker", "broker"], "name": "PingRequest",
    "validVersions": "0-4", "deprecatedVersions": "0-3", "flexibleVersions": "4+",
    "fields": [
        {"name": "Id", "type": "int32", "versions": "0+"},
        {"name": "Legacy", "type": "int64", "versions": "0-1", "default": "-1"},
        {"name": "Topics", "type": "[]Topic", "versions": "0+", "fields": [
            {"name": "Name", "type": "string", "versions": "0+"},
        ]},
        {"name": "Note", "type": "string", "versions": "4+", "nullableVersions": "4+",
         "default": "null"},
    ],
}


def side(release, schema, unstable=()):
    return Side(release, schema, versions_of(schema["validVersions"]), set(unstable))


def merge(newer=NEWER, older=OLDER, unstable=(), renamed=frozenset()):
    return merge_schema(side("2.0.0", newer), side("1.0.0", older, unstable), renamed)


def field(schema, *path):
    fields = schema["fields"]
    for name in path[:-1]:
        fields = next(f for f in fields if f["name"] == name)["fields"]
    return next(f for f in fields if f["name"] == path[-1])


class MergeTest(unittest.TestCase):
    def test_versions_of_both_releases_are_kept(self):
        merged = merge()
        self.assertEqual(merged["validVersions"], "0-5")
        # A field the newer release dropped keeps its old range, in its old place.
        self.assertEqual([f["name"] for f in merged["fields"]], ["Id", "Legacy", "Topics", "Note"])
        self.assertEqual(field(merged, "Legacy")["versions"], "0-1")
        # The newer text stays where it still says the right thing.
        self.assertEqual(field(merged, "Topics", "TopicId")["versions"], "5+")
        # Deprecation: each release for the versions it contributes.
        self.assertEqual(merged["deprecatedVersions"], "0-2")
        self.assertEqual(merged["listeners"], ["broker", "zkBroker"])
        # Each release's versions read back as that release has them.
        for release, schema, versions in (("2.0.0", NEWER, {3, 4, 5}), ("1.0.0", OLDER, {0, 1, 2})):
            schema_merge.check_merged(merged, release, schema, versions)

    def test_ignorable_follows_the_release_that_decides(self):
        # Name is present in every version, so only the newer release's flag is left.
        self.assertTrue(field(merge(), "Topics", "Name")["ignorable"])
        older = copy.deepcopy(OLDER)
        newer = copy.deepcopy(NEWER)
        # Both decide for versions without the field, and disagree.
        field(older, "Topics", "Name")["versions"] = "1+"
        field(newer, "Topics", "Name")["versions"] = "1-4"
        with self.assertRaisesRegex(MergeError, r"PingRequest field Topics\.Name: ignorable"):
            merge(newer, older)

    def test_a_disagreement_names_message_version_and_field(self):
        older = copy.deepcopy(OLDER)
        field(older, "Id")["type"] = "int64"
        with self.assertRaisesRegex(MergeError, r"PingRequest v3 field Id: type int64 vs int32"):
            merge(older=older)
        older = copy.deepcopy(OLDER)
        field(older, "Note")["nullableVersions"] = "none"
        with self.assertRaisesRegex(MergeError, r"PingRequest v4 field Note: `nullableVersions`"):
            merge(older=older)
        older = copy.deepcopy(OLDER)
        field(older, "Legacy")["versions"] = "0-3"
        with self.assertRaisesRegex(MergeError, r"PingRequest v3 field Legacy: is in 1.0.0 but not"):
            merge(older=older)
        older = copy.deepcopy(OLDER)
        older["flexibleVersions"] = "3+"
        with self.assertRaisesRegex(MergeError, r"PingRequest v3: flexible in one release only"):
            merge(older=older)

    def test_a_rename_must_be_listed(self):
        older = copy.deepcopy(OLDER)
        field(older, "Id")["name"] = "OldId"
        with self.assertRaisesRegex(MergeError, r"v3 field Id: is OldId in 1.0.0: .*RENAMES"):
            merge(older=older)
        used = set()
        renamed, paths = schema_merge.apply_renames(older, {"fields": {"OldId": "Id"}}, used)
        self.assertEqual(paths, {"Id"})
        # Id is also in versions only the older release has: their JSON would change.
        with self.assertRaisesRegex(MergeError, r"field Id: is renamed, but present"):
            merge(older=renamed, renamed=frozenset(paths))

    def test_a_draft_gives_way_to_the_newer_definition(self):
        older = copy.deepcopy(OLDER)
        older["latestVersionUnstable"] = True
        field(older, "Note")["type"] = "int32"  # the draft of v4 had it otherwise
        field(older, "Note").pop("nullableVersions")
        field(older, "Note").pop("default")
        field(older, "Note")["versions"] = "4"
        merged = merge(older=older, unstable={4})
        self.assertEqual(field(merged, "Note")["type"], "string")
        self.assertNotIn("latestVersionUnstable", merged)

    def test_a_gap_between_releases_is_refused(self):
        older = copy.deepcopy(OLDER)
        older["validVersions"] = "0-1"
        with self.assertRaisesRegex(MergeError, r"0-1, 3-5 are not one range"):
            merge(older=older)


    def test_header_versions_of_the_newest_release_are_kept_and_must_agree(self):
        newer = copy.deepcopy(NEWER)
        newer["headerVersions"] = {"0-3": "1", "4+": "2"}
        merged = merge(newer=newer)
        self.assertEqual(merged["headerVersions"], {"0-3": "1", "4+": "2"})
        self.assertEqual([schema_merge.header_version_of(merged, v) for v in range(6)],
                         [1, 1, 1, 1, 2, 2])
        # Only the older release has a map: it is kept.
        older = copy.deepcopy(OLDER)
        older["headerVersions"] = {"0-3": "1", "4+": "2"}
        self.assertEqual(merge(older=older)["headerVersions"], {"0-3": "1", "4+": "2"})
        # Both have one: they must agree at every version the older release defines.
        self.assertEqual(merge(newer=newer, older=older)["headerVersions"], newer["headerVersions"])
        older["headerVersions"] = {"0": "0", "1-3": "1", "4+": "2"}
        with self.assertRaisesRegex(MergeError, r"PingRequest v0: `headerVersions` give header "
                                                r"version 0 in 1.0.0 and 1 in 2.0.0"):
            merge(newer=newer, older=older)
        self.assertNotIn("headerVersions", merge())


class HeaderExceptionsTest(unittest.TestCase):
    """import_schemas.header_exceptions: rows for what the flexible versions do not give; none
    for a schema with `headerVersions`, whose map must give what every release uses."""

    SCHEMAS = {
        "PingRequest.json": {"name": "PingRequest", "type": "request", "apiKey": 90,
                             "validVersions": "0-3", "flexibleVersions": "2+"},
        "PingResponse.json": {"name": "PingResponse", "type": "response", "apiKey": 90,
                              "validVersions": "0-3", "flexibleVersions": "2+"},
    }
    # (key, version): (request header, response header); v0's request header is 0.
    FACTS = {"1.0.0": {(90, 0): (0, 0), (90, 1): (1, 0), (90, 2): (2, 1), (90, 3): (2, 1)}}

    def test_a_map_replaces_the_rows_and_is_checked_against_the_releases(self):
        import import_schemas
        self.assertEqual(import_schemas.header_exceptions(self.SCHEMAS, self.FACTS),
                         [("Ping", "request", 0, 0)])
        schemas = copy.deepcopy(self.SCHEMAS)
        schemas["PingRequest.json"]["headerVersions"] = {"0": "0", "1": "1", "2+": "2"}
        self.assertEqual(import_schemas.header_exceptions(schemas, self.FACTS), [])
        schemas["PingRequest.json"]["headerVersions"] = {"0-1": "1", "2+": "2"}
        with self.assertRaisesRegex(import_schemas.SchemaImportError,
                                    r"PingRequest v0: its headerVersions give header version 1, "
                                    r"but 1.0.0 uses 0"):
            import_schemas.header_exceptions(schemas, self.FACTS)


if __name__ == "__main__":
    unittest.main()
