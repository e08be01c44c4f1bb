//! `kafka-codec apis`: the API table this build knows.

use crate::common::{write_stdout, Failure, Run};
use kafka_codec::quorum::COMMITTED_VOTERS_VERSION;
use kafka_codec::{ApiKey, Listener, ReleaseVersions};

/// Versions this crate defines ahead of Apache Kafka, marked `*` in the UNSTABLE column and
/// explained under the table.
const PROVISIONAL: &[(ApiKey, i16, &str)] = &[(
    ApiKey::DescribeQuorum,
    COMMITTED_VOTERS_VERSION,
    "is provisional: this crate's committed-voter set (CommittedVoters), proposed upstream \
     in KIP-1204, still a draft; Kafka 4.4.0 has no such version. Its layout follows \
     upstream's draft schema and may change with it.",
)];

/// List every API key: versions, what each Kafka release speaks, what Kafka 4 removed, first
/// flexible version, listeners, unstable version.
///
/// VERSIONS is what this crate reads and writes: every version of the Kafka releases it
/// merges (columns 3.9.1 and 4.4.0, `*` after a release's draft version); REMOVED names the
/// versions older releases speak and the newest does not, IN the release that removed them.
/// FLEXIBLE is the first version with compact encodings and tagged fields (request/response
/// when they differ); UNSTABLE names the latest version when it is still in development
/// (never negotiated unless asked for); `*` marks a provisional version of this crate's own,
/// explained under the table.
#[derive(Debug, clap::Args)]
pub struct Apis {}

impl Run for Apis {
    fn run(self) -> Result<(), Failure> {
        write_stdout(apis_table().as_bytes())
    }
}

/// One row per API, columns aligned with spaces (the last column is not padded).
fn apis_table() -> String {
    let version_from = |v: Option<i16>| v.map_or_else(|| "-".to_owned(), |v| format!("{v}+"));
    let mut apis = ApiKey::ALL.to_vec();
    apis.sort_by_key(|api| api.key());
    let releases: Vec<&str> = ApiKey::ApiVersions
        .releases()
        .iter()
        .map(|r| r.release)
        .collect();
    let mut header = vec!["KEY".to_owned(), "NAME".to_owned(), "VERSIONS".to_owned()];
    header.extend(releases.iter().map(|r| r.to_string()));
    header.extend(["REMOVED", "IN", "FLEXIBLE", "LISTENERS", "UNSTABLE"].map(str::to_owned));
    let mut rows = vec![header];
    for api in apis {
        let (request, response) = (
            api.request_first_flexible_version(),
            api.response_first_flexible_version(),
        );
        let flexible = if request == response {
            version_from(request)
        } else {
            format!("{}/{}", version_from(request), version_from(response))
        };
        let listeners: Vec<&str> = api
            .listeners()
            .iter()
            .map(|listener| match listener {
                Listener::ZkBroker => "zkBroker",
                Listener::Broker => "broker",
                Listener::Controller => "controller",
            })
            .collect();
        let max = api.valid_versions().max;
        let unstable = if !api.latest_version_unstable() {
            "-".to_owned()
        } else if provisional(api, max).is_some() {
            format!("v{max}*")
        } else {
            format!("v{max}")
        };
        let mut row = vec![
            api.key().to_string(),
            api.name().to_owned(),
            api.valid_versions().to_string(),
        ];
        row.extend(api.releases().iter().map(release_cell));
        match api.removed_versions() {
            Some(range) => row.extend([range.to_string(), removed_in(api.releases(), range.max)]),
            None => row.extend(["-".to_owned(), "-".to_owned()]),
        }
        row.extend([flexible, listeners.join(","), unstable]);
        rows.push(row);
    }
    let mut widths = vec![0; rows[0].len()];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, (cell, width)) in row.iter().zip(&widths).enumerate() {
            if i == 0 {
                // Keys are numbers: right-align them.
                line.push_str(&format!("{cell:>width$}"));
            } else {
                line.push_str(&format!("  {cell:<width$}"));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(&format!(
        "\nEvery version is read and written, whichever release speaks it. Columns {}: the \
         versions each Kafka release defines (`*` after a draft, unstable there). REMOVED: \
         versions Kafka {} no longer speaks, IN the release that removed them (Kafka 4.0 \
         removed the oldest versions of many APIs, KIP-896, and the ZooKeeper-era APIs).\n",
        releases.join(", "),
        releases.last().copied().unwrap_or_default(),
    ));
    out.push_str(
        "Unstable versions are in development upstream: a client or server negotiates them \
         only when asked to.\n",
    );
    for (api, version, note) in PROVISIONAL {
        out.push_str(&format!("* {api} v{version} {note}\n"));
    }
    out
}

/// One release's versions of an API: `0-11`, `0*` (a draft), `-` (no such API).
fn release_cell(release: &ReleaseVersions) -> String {
    match release.versions {
        Some(range) if release.latest_unstable => format!("{range}*"),
        Some(range) => range.to_string(),
        None => "-".to_owned(),
    }
}

/// The release that removed `version`: the next release after the last one that speaks it
/// (not as a draft). Kafka removes protocol versions only in a major release, so when that next
/// release starts another major line, the removal is dated to its `.0`.
fn removed_in(releases: &[ReleaseVersions], version: i16) -> String {
    let speaks = |r: &ReleaseVersions| {
        r.versions.is_some_and(|range| {
            range.contains(version) && !(r.latest_unstable && range.max == version)
        })
    };
    let Some(last) = releases.iter().rposition(speaks) else {
        return "?".to_owned();
    };
    let (Some(before), Some(next)) = (releases.get(last), releases.get(last + 1)) else {
        return "?".to_owned();
    };
    let major = |release: &str| release.split('.').next().unwrap_or_default().to_owned();
    if major(before.release) == major(next.release) {
        next.release.to_owned()
    } else {
        format!("{}.0", major(next.release))
    }
}

fn provisional(api: ApiKey, version: i16) -> Option<&'static str> {
    PROVISIONAL
        .iter()
        .find(|(a, v, _)| *a == api && *v == version)
        .map(|(_, _, note)| *note)
}
