//! `headerVersions` (Kafka 4.5, KAFKA-20923) on our own schemas: every request and response
//! given the map that today's derived header versions imply generates exactly what it does
//! without one, and maps that break one of Kafka's rules are refused, naming the message and
//! the version.

use kafka_codec_codegen::header_versions::{self, header_at};
use kafka_codec_codegen::model::MessageKind;
use kafka_codec_codegen::{emit, Error, Generator, SchemaSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

fn schemas() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas")
}

/// A copy of `schemas/` in a directory of its own, with `edit` applied to each file's text
/// (by file name); removed when dropped.
struct EditedSchemas(PathBuf);

impl EditedSchemas {
    fn new(edit: impl Fn(&str, String) -> String) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "kafka-codec-header-versions-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(schemas()).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(dir.join(&name), edit(&name, text)).unwrap();
        }
        EditedSchemas(dir)
    }

    fn load(&self) -> Result<SchemaSet, Error> {
        Generator::new(&self.0).load()
    }
}

impl Drop for EditedSchemas {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `text` (a schema as `tools/import_schemas.py` writes it: one JSON object, no comments)
/// with `"headerVersions": map` as its first key.
fn with_header_versions(text: &str, map: &str) -> String {
    let open = text.find('{').expect("a JSON object");
    assert!(text[..open].trim().is_empty(), "{text}");
    format!(
        "{}{{\n  \"headerVersions\": {map},{}",
        &text[..open],
        &text[open + 1..]
    )
}

#[test]
fn every_schema_given_its_derived_map_generates_the_same_code() {
    let original = Generator::new(schemas()).load().unwrap();
    let maps: Vec<(String, String)> = original
        .live()
        .filter(|m| matches!(m.kind, MessageKind::Request | MessageKind::Response))
        .map(|m| {
            assert!(m.header_versions.is_none(), "{} has headerVersions", m.name);
            let table = header_versions::derived(m, &original);
            (format!("{}.json", m.name), header_versions::to_json(&table))
        })
        .collect();
    assert!(maps.len() > 150, "{} requests and responses", maps.len());
    let edited =
        EditedSchemas::new(
            |name, text| match maps.iter().find(|(file, _)| file == name) {
                Some((_, map)) => with_header_versions(&text, map),
                None => text,
            },
        );
    let declared = edited.load().unwrap();

    let mut checked = 0;
    for message in original
        .live()
        .filter(|m| matches!(m.kind, MessageKind::Request | MessageKind::Response))
    {
        let twin = declared.find(&message.name).unwrap();
        let table = twin.header_versions.as_ref().expect("edited");
        let derived = header_versions::derived(message, &original);
        // Every version a peer could send, and a few no schema has yet.
        for version in -1..=message.valid_versions.max + 3 {
            assert_eq!(
                header_at(table, version),
                header_at(&derived, version),
                "{} v{version}",
                message.name
            );
            checked += 1;
        }
    }
    assert!(checked > 1000, "{checked} versions");

    // The generated code is the same, byte for byte: the maps take the derived table's place.
    assert_eq!(
        emit::emit_api(&declared, "::kafka_codec"),
        emit::emit_api(&original, "::kafka_codec")
    );
    assert_eq!(
        emit::emit_messages(&declared, "::kafka_codec"),
        emit::emit_messages(&original, "::kafka_codec")
    );
}

/// Loads `schemas/` with `file` given `"headerVersions": map`; the error's text.
fn refused(file: &str, map: &str) -> String {
    let edited = EditedSchemas::new(|name, text| {
        if name == file {
            with_header_versions(&text, map)
        } else {
            text
        }
    });
    match edited.load() {
        Ok(_) => panic!("{file} with headerVersions {map} was accepted"),
        Err(error) => error.to_string(),
    }
}

fn accepted(file: &str, map: &str) -> SchemaSet {
    let edited = EditedSchemas::new(|name, text| {
        if name == file {
            with_header_versions(&text, map)
        } else {
            text
        }
    });
    edited
        .load()
        .unwrap_or_else(|e| panic!("{file} {map}: {e}"))
}

#[test]
fn maps_that_break_a_rule_are_refused_with_the_message_and_version() {
    // Metadata: versions 0-13, flexible from 9; request header 2 from 9.
    let file = "MetadataRequest.json";
    for (map, expected) in [
        (r#"{"1-8": "1", "9+": "2"}"#, "starts at version 1, not 0"),
        (r#"{"0-7": "1", "9+": "2"}"#, "version 8 is in no range"),
        (
            r#"{"0-9": "1", "9+": "2"}"#,
            "ranges 0-9 and 9+ overlap at version 9",
        ),
        (
            r#"{"0-8": "1", "9-13": "2"}"#,
            "the last range 9-13 is not open-ended",
        ),
        (
            r#"{"0-8": "2", "9+": "1"}"#,
            "version 9 maps to header version 1, lower than the 2 of version 8",
        ),
        (
            r#"{"0-8": "1", "9-12": "2", "13+": "3"}"#,
            "version 13 maps to RequestHeader version 3, which does not exist",
        ),
        (
            r#"{"0+": "1"}"#,
            "version 9 is flexible but maps to RequestHeader version 1",
        ),
        (
            r#"{"0-8": "1", "9-19": "2", "20+": "2"}"#,
            "range 20+ starts above the highest valid version 13",
        ),
        (r#"{}"#, "the map is empty"),
        (r#"{"0-8": "1", "9+": "two"}"#, "header version `two`"),
        (r#"["0+"]"#, "must be an object"),
    ] {
        let error = refused(file, map);
        assert!(
            error.contains("MetadataRequest") && error.contains(expected),
            "{map}: {error}"
        );
    }
    // A flexible response body needs response header 1.
    let error = refused("MetadataResponse.json", r#"{"0+": "0"}"#);
    assert!(
        error.contains("headerVersions of MetadataResponse: version 9 is flexible"),
        "{error}"
    );
    // Only requests and responses have header versions.
    let error = refused("RequestHeader.json", r#"{"0+": "0"}"#);
    assert!(
        error.contains("RequestHeader.json") && error.contains("only allowed on requests"),
        "{error}"
    );
}

#[test]
fn api_versions_responses_stay_on_header_zero() {
    let set = accepted("ApiVersionsResponse.json", r#"{"0+": "0"}"#);
    let response = set.find("ApiVersionsResponse").unwrap();
    assert_eq!(
        response
            .header_versions
            .as_deref()
            .map(header_versions::to_json),
        Some(r#"{"0+": "0"}"#.to_owned())
    );
    let error = refused("ApiVersionsResponse.json", r#"{"0-2": "0", "3+": "1"}"#);
    assert!(
        error.contains("ApiVersionsResponse")
            && error.contains("version 3 maps to response header version 1"),
        "{error}"
    );
}

#[test]
fn a_map_is_used_in_place_of_the_derived_table_and_must_agree_with_the_exceptions() {
    // A header version the flexible versions would not give (as KIP-1313's request header
    // v3 will be, once RequestHeader defines it): the map decides. Here v8, not flexible,
    // takes header 2 (Kafka's rules allow a flexible header with a body that is not).
    let set = accepted("MetadataRequest.json", r#"{"0-7": "1", "8+": "2"}"#);
    let metadata = set.find("MetadataRequest").unwrap();
    let table = header_versions::table(metadata, &set);
    assert_eq!(header_at(&table, 7), 1);
    assert_eq!(header_at(&table, 8), 2);
    let api = emit::emit_api(&set, "::kafka_codec");
    assert!(
        api.contains("ApiKey::Metadata => match version { i16::MIN..=7 => 1, _ => 2 },"),
        "{api}"
    );
    // ControlledShutdown v0's header 0 comes from header-versions.tsv; a map that says
    // otherwise contradicts the table.
    let error = refused(
        "ControlledShutdownRequest.json",
        r#"{"0-2": "1", "3+": "2"}"#,
    );
    assert!(
        error.contains("header-versions.tsv")
            && error.contains("ControlledShutdownRequest v0 uses header version 0"),
        "{error}"
    );
    accepted(
        "ControlledShutdownRequest.json",
        r#"{"0": "0", "1-2": "1", "3+": "2"}"#,
    );
}
