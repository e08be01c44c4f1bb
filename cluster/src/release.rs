//! Older Kafka releases: which API versions each release's brokers served, so that a cluster
//! built with [`ClusterBuilder::as_version`](crate::ClusterBuilder::as_version) answers as
//! that release did. Two tables, read from each release's kafka-clients jar by
//! `tools/release-api-versions/run.sh` (one column per release line, 0.8 to 4.4), which
//! this module only reads: `release-api-versions.tsv`, the versions of every API the release
//! defined, and `release-api-listeners.tsv`, which of its listeners listed each API
//! ([`Listener`]: a ZooKeeper-mode broker, a KRaft broker, a KRaft controller).
//!
//! The brokers answer as the release's [`Release::broker_listener`]: its ZooKeeper-mode
//! broker before 3.3, where KRaft was early access or a preview; its KRaft broker from 3.3
//! on, the first release whose KRaft mode was production-ready for new clusters (KIP-833),
//! and the only mode from 4.0. The controllers answer as its KRaft controller (before 2.8,
//! which had none, they list nothing).
//!
//! What a release changes, all decided in [`dispatch`](crate::dispatch) in front of every
//! handler: ApiVersions lists the release's versions of the APIs its listener listed,
//! intersected with what the cluster serves; an API it does not list, or a request above its
//! versions, closes the connection, as Kafka does; an ApiVersions request
//! newer than the release knows gets `UNSUPPORTED_VERSION` at v0 (listing the release's own
//! ApiVersions range from 2.4 on, KIP-511; nothing before); and a release older than
//! ApiVersions (0.8, 0.9) closes the connection on one, as those brokers did.

use crate::dispatch::Reply;
use crate::Shared;
use kafka_codec::conn::{IncomingRequest, SupportedVersions};
use kafka_codec::{ApiKey, Response, VersionRange};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

/// The table, as committed.
const TABLE: &str = include_str!("../release-api-versions.tsv");

/// Which listeners listed each API, as committed.
const LISTENERS: &str = include_str!("../release-api-listeners.tsv");

/// A kind of node of a Kafka release, whose ApiVersions lists the APIs that listener serves
/// (Kafka's `ApiMessageType.ListenerType`, 2.8 and later; before, ZooKeeper brokers only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Listener {
    /// A broker in ZooKeeper mode (every release before 4.0; the only kind before 2.8).
    ZooKeeperBroker,
    /// A broker in KRaft mode (2.8 and later).
    KRaftBroker,
    /// A KRaft controller (2.8 and later).
    Controller,
}

impl Listener {
    /// Its letter in `release-api-listeners.tsv`.
    fn letter(self) -> char {
        match self {
            Listener::ZooKeeperBroker => 'Z',
            Listener::KRaftBroker => 'B',
            Listener::Controller => 'C',
        }
    }
}

impl fmt::Display for Listener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Listener::ZooKeeperBroker => "ZooKeeper-mode broker",
            Listener::KRaftBroker => "KRaft broker",
            Listener::Controller => "KRaft controller",
        })
    }
}

/// One release's versions of one API.
#[derive(Debug, Clone, Copy)]
struct Cell {
    /// The versions its brokers served.
    served: VersionRange,
    /// The versions its ApiVersions listed: the same, but for 4.x's Produce, listed from v0
    /// (for librdkafka's sake, KAFKA-18659) and served from v3.
    listed: VersionRange,
}

/// The parsed table: release names, oldest first, and per API key one cell per release.
#[derive(Debug)]
struct Table {
    names: Vec<String>,
    versions: BTreeMap<i16, Vec<Option<Cell>>>,
    /// Per API key, per release: the letters of the listeners that listed it (empty: none).
    listeners: BTreeMap<i16, Vec<String>>,
}

fn table() -> &'static Table {
    static PARSED: OnceLock<Table> = OnceLock::new();
    // The files are part of the crate and checked by its tests: a parse failure is a build
    // defect, not input.
    PARSED.get_or_init(|| {
        let mut table = parse(TABLE).expect("release-api-versions.tsv is well formed");
        table.listeners = parse_listeners(LISTENERS, &table)
            .expect("release-api-listeners.tsv is well formed and matches the versions");
        table
    })
}

/// `release-api-listeners.tsv`: the same releases and APIs as the versions table, each cell
/// some of `ZBC`, `none` (defined, listed by none) or `-` (not defined, as in the versions
/// table).
fn parse_listeners(text: &str, versions: &Table) -> Result<BTreeMap<i16, Vec<String>>, String> {
    let mut lines = data_lines(text);
    match lines.next() {
        Some((_, header))
            if header
                .split('\t')
                .skip(2)
                .eq(versions.names.iter().map(String::as_str)) => {}
        _ => return Err("the header row does not name the versions table's releases".into()),
    }
    let mut listeners = BTreeMap::new();
    for (index, line) in lines {
        let at = |what: &str| format!("line {}: {what}", index + 1);
        let (key, columns) = key_and_cells(line).map_err(at)?;
        let defined = versions
            .versions
            .get(&key)
            .ok_or_else(|| at("an API the versions table lacks"))?;
        let cells = columns
            .zip(defined)
            .map(|(cell, defined)| match (cell, defined) {
                ("-", None) => Ok(String::new()),
                ("none", Some(_)) => Ok(String::new()),
                (letters, Some(_))
                    if !letters.is_empty() && letters.chars().all(|c| "ZBC".contains(c)) =>
                {
                    Ok(letters.to_owned())
                }
                _ => Err(at(&format!(
                    "bad cell {cell:?}, or not as the versions table"
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if cells.len() != versions.names.len() {
            return Err(at("not one cell per release"));
        }
        listeners.insert(key, cells);
    }
    if listeners.len() != versions.versions.len() {
        return Err("not one row per API of the versions table".into());
    }
    Ok(listeners)
}

fn parse(text: &str) -> Result<Table, String> {
    let mut lines = data_lines(text);
    let names: Vec<String> = match lines.next() {
        Some((_, header)) if header.starts_with("key\tname\t") => {
            header.split('\t').skip(2).map(str::to_owned).collect()
        }
        _ => return Err("no header row `key<TAB>name<TAB>release…`".into()),
    };
    let mut versions = BTreeMap::new();
    for (index, line) in lines {
        let at = |what: &str| format!("line {}: {what}", index + 1);
        let (key, columns) = key_and_cells(line).map_err(at)?;
        let cells = columns
            .map(|cell| parse_cell(cell).ok_or_else(|| at(&format!("bad cell {cell:?}"))))
            .collect::<Result<Vec<_>, _>>()?;
        if cells.len() != names.len() {
            return Err(at("not one cell per release"));
        }
        versions.insert(key, cells);
    }
    Ok(Table {
        names,
        versions,
        listeners: BTreeMap::new(),
    })
}

/// The numbered lines of a table that hold data or its header: comments and blank lines out,
/// numbers kept for the error messages.
fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.starts_with('#') && !line.trim().is_empty())
}

/// A data row's API key and its cells, one per release (the name column skipped).
fn key_and_cells(line: &str) -> Result<(i16, std::str::Split<'_, char>), &'static str> {
    let mut columns = line.split('\t');
    let key = columns
        .next()
        .and_then(|key| key.parse().ok())
        .ok_or("no API key")?;
    columns.next().ok_or("no name")?;
    Ok((key, columns))
}

/// `-` (absent), `N`, `A-B`, or `A-B (lists C-B)`.
fn parse_cell(cell: &str) -> Option<Option<Cell>> {
    if cell == "-" {
        return Some(None);
    }
    let (served, listed) = match cell.split_once(" (lists ") {
        Some((served, listed)) => (served, listed.strip_suffix(')')?),
        None => (cell, cell),
    };
    Some(Some(Cell {
        served: parse_range(served)?,
        listed: parse_range(listed)?,
    }))
}

/// `N` or `A-B`.
fn parse_range(text: &str) -> Option<VersionRange> {
    let (low, high) = text.split_once('-').unwrap_or((text, text));
    let (low, high) = (low.parse().ok()?, high.parse().ok()?);
    (low <= high).then(|| VersionRange::new(low, high))
}

/// One Kafka release line (`0.8`, `0.10.2`, `2.8`, `4.4`), as the table names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Release {
    /// Its column in the table (oldest first).
    column: usize,
}

/// A release the table does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRelease(pub String);

impl fmt::Display for UnknownRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} is not a Kafka release this cluster knows (one of {})",
            self.0,
            Release::all()
                .map(|release| release.name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

impl std::error::Error for UnknownRelease {}

impl Release {
    /// Every release, oldest first.
    pub fn all() -> impl Iterator<Item = Release> {
        (0..table().names.len()).map(|column| Release { column })
    }

    /// The newest release in the table.
    pub fn newest() -> Release {
        Release {
            column: table().names.len() - 1,
        }
    }

    /// `X.Y` or `X.Y.Z`: a patch release is its line (`2.8.1` is `2.8`: patch releases kept
    /// the protocol), and `0.10` is `0.10.0`, the first of that line's three minor releases
    /// (`0.10.1` and `0.10.2` served newer versions, and have their own columns).
    pub fn parse(text: &str) -> Result<Release, UnknownRelease> {
        let names = &table().names;
        let found = |name: &str| names.iter().position(|known| known == name);
        let mut candidate = text.trim();
        loop {
            if let Some(column) = found(candidate) {
                return Ok(Release { column });
            }
            match candidate.rsplit_once('.') {
                // Keep at least `X.Y`.
                Some((shorter, _)) if shorter.contains('.') => candidate = shorter,
                _ => break,
            }
        }
        let text = text.trim();
        if !text.contains('.') {
            return Err(UnknownRelease(text.to_owned()));
        }
        let prefix = format!("{text}.");
        names
            .iter()
            .position(|known| known.starts_with(&prefix))
            .map(|column| Release { column })
            .ok_or_else(|| UnknownRelease(text.to_owned()))
    }

    /// Its name in the table (`0.10.2`, `2.8`).
    pub fn name(self) -> &'static str {
        &table().names[self.column]
    }

    /// The versions of `api_key` this release's brokers served; `None` if it had no such API.
    pub fn versions(self, api_key: i16) -> Option<VersionRange> {
        Some(table().versions.get(&api_key)?[self.column]?.served)
    }

    /// The versions of `api_key` this release's ApiVersions listed: [`Release::versions`],
    /// but for Produce from 4.0 on (listed from v0, served from v3: KAFKA-18659).
    pub fn listed_versions(self, api_key: i16) -> Option<VersionRange> {
        Some(table().versions.get(&api_key)?[self.column]?.listed)
    }

    /// Whether `listener` of this release listed `api_key` in ApiVersions.
    pub fn listed_by(self, api_key: i16, listener: Listener) -> bool {
        table()
            .listeners
            .get(&api_key)
            .is_some_and(|cells| cells[self.column].contains(listener.letter()))
    }

    /// The kind of broker the cluster's brokers answer as: the ZooKeeper-mode broker before
    /// 3.3 (KRaft was early access in 2.8 and a preview to 3.2), the KRaft broker from 3.3
    /// on (production-ready for new clusters, KIP-833; the only mode from 4.0).
    pub fn broker_listener(self) -> Listener {
        if Release::parse("3.3").is_ok_and(|kraft| self >= kraft) {
            Listener::KRaftBroker
        } else {
            Listener::ZooKeeperBroker
        }
    }

    /// What a `listener` serving `served` lists when it answers as this release's: each API
    /// both know and that listener of the release listed, at the versions both list.
    pub fn limit(self, served: &SupportedVersions, listener: Listener) -> SupportedVersions {
        SupportedVersions::from_ranges(served.iter().filter_map(|(key, ours)| {
            if !self.listed_by(key, listener) {
                return None;
            }
            let theirs = self.listed_versions(key)?;
            let (min, max) = (ours.min.max(theirs.min), ours.max.min(theirs.max));
            (min <= max).then(|| (key, VersionRange::new(min, max)))
        }))
    }

    /// Whether its brokers answered an ApiVersions request too new for them with their own
    /// ApiVersions range (KIP-511, Kafka 2.4) rather than with an empty list.
    pub fn lists_api_versions_when_unsupported(self) -> bool {
        Release::parse("2.4").is_ok_and(|kip_511| self >= kip_511)
    }

    /// Whether its brokers had ApiVersions at all (0.10.0 and later, KIP-35).
    pub fn has_api_versions(self) -> bool {
        self.versions(ApiKey::ApiVersions.key()).is_some()
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Release {
    type Err = UnknownRelease;

    fn from_str(text: &str) -> Result<Release, UnknownRelease> {
        Release::parse(text)
    }
}

/// What the release decides before dispatch's own checks: an ApiVersions request newer than
/// the cluster serves (newer than its release knew, or than this crate can read) gets
/// `UNSUPPORTED_VERSION` at v0, so that the client retries lower; a version the release
/// listed but did not serve (4.x's Produce v0-v2) closes the connection. `None` otherwise,
/// and when ApiVersions is not served at all (0.8, 0.9): dispatch then closes the
/// connection, as those brokers did.
pub(crate) fn intercept(shared: &Shared, request: &IncomingRequest) -> Option<Reply> {
    let api = request.api_key();
    if api != ApiKey::ApiVersions {
        let release = shared.release?;
        let listed = release.listed_versions(api.key())?;
        let served = release.versions(api.key())?;
        let version = request.api_version;
        return (listed.contains(version) && !served.contains(version)).then(|| {
            Reply::Close(format!(
                "{api} v{version} is listed but not served by Kafka {release}"
            ))
        });
    }
    let ours = shared.advertised.get(ApiKey::ApiVersions.key())?;
    if !request.is_unsupported_api_versions() && request.api_version <= ours.max {
        return None;
    }
    let mut frame = request.unsupported_api_versions_response(ours);
    if shared
        .release
        .is_some_and(|release| !release.lists_api_versions_when_unsupported())
    {
        if let Response::ApiVersions(body) = &mut frame.body {
            body.api_keys.clear();
        }
    }
    Some(Reply::Respond(Box::new(frame)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_table_parses_with_every_release_line() {
        let names: Vec<_> = Release::all().map(Release::name).collect();
        assert_eq!(names.first(), Some(&"0.8"));
        assert_eq!(names.last(), Some(&"4.4"));
        assert!(names.contains(&"0.10.1") && names.contains(&"2.8"));
    }

    #[test]
    fn names_resolve_to_their_line() {
        let name = |text: &str| Release::parse(text).map(Release::name);
        assert_eq!(name("2.8"), Ok("2.8"));
        assert_eq!(name("2.8.1"), Ok("2.8"));
        assert_eq!(name("0.10"), Ok("0.10.0"));
        assert_eq!(name("0.10.2"), Ok("0.10.2"));
        assert_eq!(name("0.10.2.1"), Ok("0.10.2"));
        assert_eq!(name("0.8.2.2"), Ok("0.8"));
        assert!(Release::parse("5.0").is_err());
        assert!(Release::parse("2").is_err());
        assert!(Release::parse("").is_err());
        assert!(Release::parse("2.8x").is_err());
    }

    #[test]
    fn a_bad_table_is_an_error() {
        assert!(parse("key\tname\t1.0\n0\tPRODUCE\t0-2\t0-3\n").is_err());
        assert!(parse("key\tname\t1.0\n0\tPRODUCE\t3-2\n").is_err());
        assert!(parse("nothing\n").is_err());
    }

    #[test]
    fn limit_intersects() {
        let release = Release::parse("0.10.0").unwrap();
        let produce = release.versions(ApiKey::Produce.key()).unwrap();
        let served = SupportedVersions::from_ranges([
            (ApiKey::Produce.key(), VersionRange::new(1, 20)),
            // An API the release lacked: not listed.
            (ApiKey::DescribeCluster.key(), VersionRange::new(0, 2)),
        ]);
        let limited = release.limit(&served, Listener::ZooKeeperBroker);
        assert_eq!(
            limited.get(ApiKey::Produce.key()),
            Some(VersionRange::new(1, produce.max))
        );
        assert_eq!(limited.len(), 1);
        // Before 2.8 there were ZooKeeper brokers only.
        assert!(release.limit(&served, Listener::KRaftBroker).is_empty());
    }

    #[test]
    fn each_release_answers_as_its_production_broker() {
        let listener = |name: &str| Release::parse(name).unwrap().broker_listener();
        assert_eq!(listener("0.8"), Listener::ZooKeeperBroker);
        assert_eq!(listener("3.2"), Listener::ZooKeeperBroker);
        assert_eq!(listener("3.3"), Listener::KRaftBroker);
        assert_eq!(listener("4.4"), Listener::KRaftBroker);
    }

    #[test]
    fn the_listeners_are_the_jars_facts() {
        let release = |name: &str| Release::parse(name).unwrap();
        let describe_quorum = ApiKey::DescribeQuorum.key();
        // 2.7 defined DescribeQuorum but did not enable it; its ZooKeeper brokers never
        // listed it, nor did 3.x's; KRaft brokers and controllers did.
        assert!(release("2.7").versions(describe_quorum).is_some());
        assert!(!release("2.7").listed_by(describe_quorum, Listener::ZooKeeperBroker));
        assert!(!release("3.9").listed_by(describe_quorum, Listener::ZooKeeperBroker));
        assert!(release("3.9").listed_by(describe_quorum, Listener::KRaftBroker));
        assert!(release("3.9").listed_by(describe_quorum, Listener::Controller));
        // A KRaft 3.3 broker had no SCRAM APIs (3.5 added them).
        let scram = ApiKey::DescribeUserScramCredentials.key();
        assert!(!release("3.3").listed_by(scram, Listener::KRaftBroker));
        assert!(release("3.5").listed_by(scram, Listener::KRaftBroker));
        // Every row of one table is in the other.
        for release in Release::all() {
            for key in table().versions.keys() {
                let defined = release.versions(*key).is_some();
                let cell = &table().listeners[key][release.column];
                assert!(defined || cell.is_empty(), "{release} {key}");
            }
        }
        assert!(parse_listeners("key\tname\t9.9\n", table()).is_err());
    }
}
