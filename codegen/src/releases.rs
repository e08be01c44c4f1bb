//! Which Kafka release speaks which version: `schemas/releases.tsv` and
//! `schemas/header-versions.tsv`, written by `tools/import_schemas.py` next to the merged
//! schemas. Both files are optional: a schema directory without them describes one release
//! with no name, and every header version follows the flexible versions.

use crate::model::{MessageKind, SchemaSet, Versions};
use std::collections::BTreeMap;

/// The file of versions per release.
pub const RELEASES_FILE: &str = "releases.tsv";
/// The file of header versions that do not follow the rule.
pub const HEADERS_FILE: &str = "header-versions.tsv";

/// One release's versions of one schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// The versions the release defines (empty when it lacks the schema).
    pub versions: Versions,
    /// Whether its highest version is a draft (`latestVersionUnstable`) in that release.
    pub latest_unstable: bool,
}

/// A header version that does not follow from the flexible versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderException {
    /// The API, as Kafka names it (`ControlledShutdown`).
    pub api: String,
    /// Whether it is the request's header (else the response's).
    pub request: bool,
    /// The API versions concerned.
    pub versions: Versions,
    /// The header version used with them.
    pub header: i16,
}

/// Both tables.
#[derive(Debug, Clone, Default)]
pub struct Releases {
    /// The merged releases, oldest first (`3.9.1`, `4.4.0`); empty without `releases.tsv`.
    pub names: Vec<String>,
    /// Per schema name, one cell per release in the order of `names`.
    pub cells: BTreeMap<String, Vec<Cell>>,
    /// The header exceptions.
    pub headers: Vec<HeaderException>,
}

fn rows(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line))
        .filter(|(_, line)| !line.starts_with('#') && !line.trim().is_empty())
}

/// The releases, oldest first, and per schema one cell per release.
pub type Table = (Vec<String>, BTreeMap<String, Vec<Cell>>);

/// Reads `releases.tsv`: a header row `schema<TAB>release...`, then one row per schema whose
/// cells are `-` (no such schema), `none`, `N` or `A-B`, with `*` after a draft latest version.
pub fn parse_releases(text: &str) -> Result<Table, String> {
    let mut lines = rows(text);
    let names: Vec<String> = match lines.next() {
        Some((_, header)) if header.starts_with("schema\t") => {
            header.split('\t').skip(1).map(str::to_owned).collect()
        }
        other => {
            return Err(format!(
                "expected a header row `schema<TAB>release...`, found {:?}",
                other.map(|(_, line)| line)
            ))
        }
    };
    if names.is_empty() {
        return Err("the header row names no release".into());
    }
    let mut cells = BTreeMap::new();
    for (number, line) in lines {
        let at = |message: String| format!("line {number}: {message}");
        let mut columns = line.split('\t');
        let schema = columns.next().unwrap_or_default().to_owned();
        let row = columns
            .map(|cell| {
                let (text, latest_unstable) = match cell.strip_suffix('*') {
                    Some(text) => (text, true),
                    None => (cell, false),
                };
                let versions = if text == "-" {
                    Versions::NONE
                } else {
                    Versions::parse(text)?
                };
                if versions.is_open_ended() || (latest_unstable && versions.is_empty()) {
                    return Err(format!("bad cell `{cell}`"));
                }
                Ok(Cell {
                    versions,
                    latest_unstable,
                })
            })
            .collect::<Result<Vec<_>, String>>()
            .map_err(at)?;
        if row.len() != names.len() {
            return Err(at(format!(
                "{} cells for {} releases",
                row.len(),
                names.len()
            )));
        }
        if cells.insert(schema.clone(), row).is_some() {
            return Err(at(format!("{schema} appears twice")));
        }
    }
    Ok((names, cells))
}

/// Reads `header-versions.tsv`: a header row, then `api<TAB>request|response<TAB>versions<TAB>header`.
pub fn parse_headers(text: &str) -> Result<Vec<HeaderException>, String> {
    let mut lines = rows(text);
    match lines.next() {
        Some((_, "api\tdirection\tversions\theader")) => {}
        other => {
            return Err(format!(
                "expected the header row `api<TAB>direction<TAB>versions<TAB>header`, found {:?}",
                other.map(|(_, line)| line)
            ))
        }
    }
    lines
        .map(|(number, line)| {
            let columns: Vec<&str> = line.split('\t').collect();
            let [api, direction, versions, header] = columns[..] else {
                return Err(format!("line {number}: expected 4 columns: {line:?}"));
            };
            let request = match direction {
                "request" => true,
                "response" => false,
                other => return Err(format!("line {number}: direction `{other}`")),
            };
            Ok(HeaderException {
                api: api.to_owned(),
                request,
                versions: Versions::parse(versions).map_err(|e| format!("line {number}: {e}"))?,
                header: header
                    .parse()
                    .ok()
                    .filter(|h| (0..=2).contains(h))
                    .ok_or_else(|| format!("line {number}: header version `{header}`"))?,
            })
        })
        .collect()
}

impl Releases {
    /// The cells of a schema, if the table has it.
    pub fn of(&self, schema: &str) -> Option<&[Cell]> {
        self.cells.get(schema).map(Vec::as_slice)
    }

    /// The newest release's name (the pinned one).
    pub fn newest(&self) -> Option<&str> {
        self.names.last().map(String::as_str)
    }

    /// The versions of `schema` that an older release speaks (not as a draft) and the newest
    /// does not: for an API that Kafka removed entirely, all of them.
    pub fn removed(&self, schema: &str) -> Versions {
        let Some(cells) = self.of(schema) else {
            return Versions::NONE;
        };
        let (newest, older) = cells.split_last().expect("at least one release");
        let mut removed = Versions::NONE;
        for cell in older {
            let stable = stable(cell);
            for version in stable.min..=stable.max {
                if !stable.is_empty() && !newest.versions.contains(version) {
                    removed = widen(removed, version);
                }
            }
        }
        removed
    }

    /// Checks the tables against the schemas: every live schema has a row whose versions lie
    /// within its own; what the newest release removed is one range below what it speaks; every
    /// header exception names a live API and versions it has.
    pub fn validate(&self, set: &SchemaSet) -> Result<(), String> {
        if self.names.is_empty() {
            return if self.cells.is_empty() {
                Ok(())
            } else {
                Err("releases named without schemas".into())
            };
        }
        for message in set.live() {
            let Some(cells) = self.of(&message.name) else {
                return Err(format!("{RELEASES_FILE} has no row for {}", message.name));
            };
            for (cell, release) in cells.iter().zip(&self.names) {
                if !message.valid_versions.contains_range(&cell.versions) {
                    return Err(format!(
                        "{RELEASES_FILE}: {release} defines {} v{}, beyond its versions {}",
                        message.name, cell.versions, message.valid_versions
                    ));
                }
            }
            let removed = self.removed(&message.name);
            let newest = cells.last().expect("a release").versions;
            if !removed.is_empty() && !newest.is_empty() && removed.max + 1 != newest.min {
                return Err(format!(
                    "{}: the versions removed ({removed}) do not end where Kafka {} begins \
                     ({newest}); `removed_versions` holds one range below",
                    message.name,
                    self.newest().unwrap_or_default()
                ));
            }
        }
        for exception in &self.headers {
            let request = set
                .live()
                .find(|m| {
                    m.kind == MessageKind::Request
                        && m.name.strip_suffix("Request") == Some(exception.api.as_str())
                })
                .ok_or_else(|| format!("{HEADERS_FILE}: no API {}", exception.api))?;
            if !request.valid_versions.contains_range(&exception.versions) {
                return Err(format!(
                    "{HEADERS_FILE}: {} has no version {}",
                    exception.api, exception.versions
                ));
            }
        }
        Ok(())
    }
}

/// A release's versions without its draft.
fn stable(cell: &Cell) -> Versions {
    if !cell.latest_unstable {
        cell.versions
    } else if cell.versions.min < cell.versions.max {
        Versions {
            min: cell.versions.min,
            max: cell.versions.max - 1,
        }
    } else {
        Versions::NONE
    }
}

fn widen(range: Versions, version: i16) -> Versions {
    if range.is_empty() {
        Versions {
            min: version,
            max: version,
        }
    } else {
        Versions {
            min: range.min.min(version),
            max: range.max.max(version),
        }
    }
}

/// How a range of removed versions is spoken of: "removed in Kafka 4.0" when the last release
/// that speaks them and the next merged one lie in different major lines (Kafka removes
/// protocol versions only in a major release), else "not in Kafka 4.4.0".
pub fn removal_words(releases: &Releases, schema: &str, removed: Versions) -> Option<String> {
    let cells = releases.of(schema)?;
    let last = cells
        .iter()
        .rposition(|cell| stable(cell).contains(removed.max))?;
    let next = releases.names.get(last + 1)?;
    let major = |release: &str| release.split('.').next().unwrap_or_default().to_owned();
    Some(if major(&releases.names[last]) != major(next) {
        format!("removed in Kafka {}.0", major(next))
    } else {
        format!("not in Kafka {next}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "# comment\nschema\t3.9.1\t4.4.0\nProduceRequest\t0-11\t3-13\n\
                         LeaderAndIsrRequest\t0-7\tnone\nShareFetchRequest\t0*\t1-2\nAbortedTxn\t-\t0\n";

    #[test]
    fn reads_the_table_and_finds_what_was_removed() {
        let (names, cells) = parse_releases(TABLE).unwrap();
        let releases = Releases {
            names,
            cells,
            headers: Vec::new(),
        };
        assert_eq!(releases.names, ["3.9.1", "4.4.0"]);
        assert_eq!(releases.removed("ProduceRequest").to_string(), "0-2");
        assert_eq!(releases.removed("LeaderAndIsrRequest").to_string(), "0-7");
        // A draft that no later release kept was never spoken: not removed.
        assert!(releases.removed("ShareFetchRequest").is_empty());
        assert!(releases.removed("AbortedTxn").is_empty());
        let produce = releases.removed("ProduceRequest");
        assert_eq!(
            removal_words(&releases, "ProduceRequest", produce).as_deref(),
            Some("removed in Kafka 4.0")
        );
        for bad in [
            "ProduceRequest\t0-11\n",
            "schema\t3.9.1\nProduceRequest\t0-11\t3-13\n",
            "schema\t3.9.1\nProduceRequest\t0+\n",
            "schema\t3.9.1\nProduceRequest\t-*\n",
            "schema\t3.9.1\nA\t0\nA\t1\n",
        ] {
            assert!(parse_releases(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn reads_header_exceptions() {
        let table = "# c\napi\tdirection\tversions\theader\nControlledShutdown\trequest\t0\t0\n";
        let headers = parse_headers(table).unwrap();
        assert_eq!(
            headers,
            [HeaderException {
                api: "ControlledShutdown".into(),
                request: true,
                versions: Versions { min: 0, max: 0 },
                header: 0,
            }]
        );
        assert!(parse_headers("api\tdirection\tversions\theader\nX\tboth\t0\t0\n").is_err());
        assert!(parse_headers("api\tdirection\tversions\theader\nX\trequest\t0\t7\n").is_err());
    }
}
