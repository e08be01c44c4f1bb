//! Which header version goes with each body version of a request or response.
//!
//! Kafka 4.5's schemas say it themselves: `"headerVersions": {"0-8": "1", "9+": "2"}`
//! (KAFKA-20923), so that a new header version (KIP-1313's request header v3) needs only its
//! header schema and the body versions that use it. Older schemas leave it out; the header
//! version then follows from the body's flexible versions (request header 2 for a flexible
//! body, else 1; response header 1, else 0), with the exceptions of
//! `schemas/header-versions.tsv` and ApiVersions responses, always on header 0 (KIP-511).
//!
//! A `headerVersions` map is checked as Kafka's generator checks it: ranges from version 0,
//! contiguous, non-overlapping, only the last open-ended, none starting above the highest
//! valid version; header versions that never decrease, that the header schema defines, and
//! that are flexible wherever the body is; ApiVersions responses on header 0 throughout.

use crate::model::{Message, MessageKind, SchemaSet, Versions};

/// The API key of ApiVersions, whose responses always use response header 0 so that a client
/// can read the header before it knows which versions the broker speaks (KIP-511).
pub const API_VERSIONS_KEY: i16 = 18;

/// Body versions and the header version they use: one entry of a header table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderRange {
    /// The body versions.
    pub versions: Versions,
    /// The header version used with them.
    pub header: i16,
}

/// A message's whole header table: ranges in order, from version 0, contiguous, the last
/// open-ended.
pub type HeaderTable = Vec<HeaderRange>;

/// The header version a table gives `version`; below 0, the first range's.
pub fn header_at(table: &[HeaderRange], version: i16) -> i16 {
    table
        .iter()
        .find(|range| version <= range.versions.max)
        .or(table.last())
        .map_or(0, |range| range.header)
}

/// Parses and checks a `headerVersions` map as written (range text → header version text),
/// in the order given: the rules that need only the message itself.
pub fn parse(
    message: &str,
    kind: MessageKind,
    api_key: Option<i16>,
    valid: Versions,
    raw: &[(String, String)],
) -> Result<HeaderTable, String> {
    let fail = |what: String| Err(format!("headerVersions of {message}: {what}"));
    if !matches!(kind, MessageKind::Request | MessageKind::Response) {
        return Err("`headerVersions` is only allowed on requests and responses".into());
    }
    if valid.is_empty() {
        return fail("a message without valid versions has no header versions".into());
    }
    if raw.is_empty() {
        return fail("the map is empty".into());
    }
    let mut table = Vec::with_capacity(raw.len());
    for (range, header) in raw {
        let versions = match Versions::parse(range) {
            Ok(versions) if !versions.is_empty() && !range.trim().is_empty() => versions,
            _ => return fail(format!("`{range}` is not a version range")),
        };
        let header = match header.trim().parse::<i16>() {
            Ok(header) if header >= 0 => header,
            _ => {
                return fail(format!(
                    "header version `{header}` of versions {versions} is not a version number"
                ))
            }
        };
        table.push(HeaderRange { versions, header });
    }
    table.sort_by_key(|range| range.versions.min);
    if table[0].versions.min != 0 {
        return fail(format!(
            "the first range starts at version {}, not 0 (the map covers every version, \
             including those no longer valid)",
            table[0].versions.min
        ));
    }
    for pair in table.windows(2) {
        let (before, after) = (pair[0], pair[1]);
        if before.versions.is_open_ended() {
            return fail(format!(
                "range {} is open-ended but range {} follows it; only the last may be",
                before.versions, after.versions
            ));
        }
        let next = before.versions.max + 1;
        if after.versions.min < next {
            return fail(format!(
                "ranges {} and {} overlap at version {}",
                before.versions, after.versions, after.versions.min
            ));
        }
        if after.versions.min > next {
            let gap = Versions {
                min: next,
                max: after.versions.min - 1,
            };
            return fail(format!(
                "version {gap} is in no range (a gap between {} and {})",
                before.versions, after.versions
            ));
        }
        if after.header < before.header {
            return fail(format!(
                "version {} maps to header version {}, lower than the {} of version {}: \
                 header versions never decrease",
                after.versions.min, after.header, before.header, before.versions.max
            ));
        }
    }
    let last = table[table.len() - 1];
    if !last.versions.is_open_ended() {
        return fail(format!(
            "the last range {} is not open-ended (`N+`): versions from {} are in no range",
            last.versions,
            last.versions.max + 1
        ));
    }
    if let Some(beyond) = table.iter().find(|range| range.versions.min > valid.max) {
        return fail(format!(
            "range {} starts above the highest valid version {}",
            beyond.versions, valid.max
        ));
    }
    if kind == MessageKind::Response && api_key == Some(API_VERSIONS_KEY) {
        if let Some(range) = table.iter().find(|range| range.header != 0) {
            return fail(format!(
                "version {} maps to response header version {}; ApiVersions responses use \
                 header version 0 at every version (KIP-511)",
                range.versions.min, range.header
            ));
        }
    }
    Ok(table)
}

/// The header schema a request or response goes with.
fn header_schema_name(kind: MessageKind) -> &'static str {
    if kind == MessageKind::Request {
        "RequestHeader"
    } else {
        "ResponseHeader"
    }
}

/// The rules that need the header schema: every header version is one it defines, and a
/// flexible body version maps to a flexible header version (ApiVersions responses aside).
pub fn check_against_header(message: &Message, set: &SchemaSet) -> Result<(), String> {
    let Some(table) = &message.header_versions else {
        return Ok(());
    };
    let header_name = header_schema_name(message.kind);
    let fail = |what: String| Err(format!("headerVersions of {}: {what}", message.name));
    let Some(header) = set
        .find(header_name)
        .filter(|m| m.kind == MessageKind::Header)
    else {
        return fail(format!(
            "there is no {header_name} schema to check them against"
        ));
    };
    let pinned = message.kind == MessageKind::Response && message.api_key == Some(API_VERSIONS_KEY);
    for range in table {
        if !header.valid_versions.contains(range.header) {
            return fail(format!(
                "version {} maps to {header_name} version {}, which does not exist \
                 ({header_name} has versions {})",
                range.versions.min, range.header, header.valid_versions
            ));
        }
        let flexible_body = range.versions.intersect(&message.flexible_versions);
        if !pinned && !flexible_body.is_empty() && !header.flexible_versions.contains(range.header)
        {
            return fail(format!(
                "version {} is flexible but maps to {header_name} version {}, which is not \
                 ({header_name} is flexible at {})",
                flexible_body.min, range.header, header.flexible_versions
            ));
        }
    }
    Ok(())
}

/// The header table the flexible versions, the exceptions of `header-versions.tsv` and the
/// ApiVersions rule give a request or response: what is used where a schema has no
/// `headerVersions`.
pub fn derived(message: &Message, set: &SchemaSet) -> HeaderTable {
    let request = message.kind == MessageKind::Request;
    let api = message
        .name
        .strip_suffix(if request { "Request" } else { "Response" })
        .unwrap_or(&message.name);
    let (flexible_header, plain_header) = if request { (2, 1) } else { (1, 0) };
    let pinned = !request && message.api_key == Some(API_VERSIONS_KEY);
    let at = |version: i16| -> i16 {
        if pinned {
            return 0;
        }
        let exception = set
            .releases
            .headers
            .iter()
            .find(|e| e.request == request && e.api == api && e.versions.contains(version));
        match exception {
            Some(exception) => exception.header,
            None if message.flexible_versions.contains(version) => flexible_header,
            None => plain_header,
        }
    };
    // Past the highest valid version and the first flexible one, nothing changes any more:
    // exceptions lie within the valid versions, and flexible versions are open-ended.
    let mut last = message.valid_versions.max.max(0);
    if !message.flexible_versions.is_empty() {
        last = last.max(message.flexible_versions.min);
    }
    let mut table: HeaderTable = Vec::new();
    for version in 0..=last.saturating_add(1) {
        let header = at(version);
        match table.last_mut() {
            Some(range) if range.header == header => range.versions.max = version,
            _ => table.push(HeaderRange {
                versions: Versions {
                    min: version,
                    max: version,
                },
                header,
            }),
        }
    }
    if let Some(range) = table.last_mut() {
        range.versions.max = i16::MAX;
    }
    table
}

/// The header table in use: the schema's `headerVersions` where it has one, else the derived
/// one.
pub fn table(message: &Message, set: &SchemaSet) -> HeaderTable {
    message
        .header_versions
        .clone()
        .unwrap_or_else(|| derived(message, set))
}

/// A header table in the form a schema writes it: `{"0-8": "1", "9+": "2"}`.
pub fn to_json(table: &[HeaderRange]) -> String {
    let entries: Vec<String> = table
        .iter()
        .map(|range| format!("\"{}\": \"{}\"", range.versions, range.header))
        .collect();
    format!("{{{}}}", entries.join(", "))
}

/// Set-wide rules: each `headerVersions` fits its header schema, and an exception of
/// `header-versions.tsv` for an API whose schema has `headerVersions` says what the map says
/// (the map is used; a table that disagrees with it is out of date).
pub fn check_set(set: &SchemaSet) -> Result<(), (String, String)> {
    for message in set.live() {
        check_against_header(message, set).map_err(|e| (format!("{}.json", message.name), e))?;
    }
    for exception in &set.releases.headers {
        let name = format!(
            "{}{}",
            exception.api,
            if exception.request {
                "Request"
            } else {
                "Response"
            }
        );
        let Some(message) = set.find(&name) else {
            continue; // `Releases::validate` names an exception of no API
        };
        let Some(table) = &message.header_versions else {
            continue;
        };
        for version in exception.versions.min..=exception.versions.max {
            let declared = header_at(table, version);
            if declared != exception.header {
                return Err((
                    crate::releases::HEADERS_FILE.into(),
                    format!(
                        "{name} v{version} uses header version {} here, but its \
                         headerVersions say {declared}",
                        exception.header
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(raw: &[(&str, &str)]) -> Result<HeaderTable, String> {
        let raw: Vec<(String, String)> = raw
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect();
        parse(
            "FooRequest",
            MessageKind::Request,
            Some(1000),
            Versions { min: 0, max: 5 },
            &raw,
        )
    }

    #[test]
    fn a_table_reads_in_any_order_and_answers_every_version() {
        let table = parsed(&[("3+", "2"), ("0-2", "1")]).unwrap();
        assert_eq!(to_json(&table), r#"{"0-2": "1", "3+": "2"}"#);
        assert_eq!(
            (-1..=7).map(|v| header_at(&table, v)).collect::<Vec<_>>(),
            [1, 1, 1, 1, 2, 2, 2, 2, 2]
        );
    }

    #[test]
    fn malformed_entries_are_named() {
        for (raw, expected) in [
            (&[][..], "empty"),
            (&[("x", "1")][..], "`x` is not a version range"),
            (&[("none", "1")][..], "`none` is not a version range"),
            (&[("0+", "two")][..], "`two`"),
            (&[("0+", "-1")][..], "`-1`"),
            (&[("0-2", "1"), ("3+", "1"), ("9+", "2")][..], "open-ended"),
        ] {
            let err = parsed(raw).unwrap_err();
            assert!(
                err.contains("FooRequest") && err.contains(expected),
                "{raw:?}: {err}"
            );
        }
    }
}
