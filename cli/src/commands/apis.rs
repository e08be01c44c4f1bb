//! `kafka-codec apis`: the API table this build knows.

use crate::common::{write_stdout, Failure, Run};
use kafka_codec::quorum::COMMITTED_VOTERS_VERSION;
use kafka_codec::{ApiKey, Listener};

/// Versions this crate defines ahead of Apache Kafka, marked `*` in the UNSTABLE column and
/// explained under the table.
const PROVISIONAL: &[(ApiKey, i16, &str)] = &[(
    ApiKey::DescribeQuorum,
    COMMITTED_VOTERS_VERSION,
    "is provisional: this crate's committed-voter set (CommittedVoters), proposed upstream \
     in KIP-1204, still a draft; Kafka 4.4.0 has no such version. Its layout follows \
     upstream's draft schema and may change with it.",
)];

/// List every API key: versions, first flexible version, listeners, unstable version.
///
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
    let mut rows = vec![[
        "KEY".to_owned(),
        "NAME".to_owned(),
        "VERSIONS".to_owned(),
        "FLEXIBLE".to_owned(),
        "LISTENERS".to_owned(),
        "UNSTABLE".to_owned(),
    ]];
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
        rows.push([
            api.key().to_string(),
            api.name().to_owned(),
            api.valid_versions().to_string(),
            flexible,
            listeners.join(","),
            unstable,
        ]);
    }
    let mut widths = [0; 6];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, (cell, width)) in row.iter().zip(widths).enumerate() {
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
    out.push_str(
        "\nUnstable versions are in development upstream: a client or server negotiates them \
         only when asked to.\n",
    );
    for (api, version, note) in PROVISIONAL {
        out.push_str(&format!("* {api} v{version} {note}\n"));
    }
    out
}

fn provisional(api: ApiKey, version: i16) -> Option<&'static str> {
    PROVISIONAL
        .iter()
        .find(|(a, v, _)| *a == api && *v == version)
        .map(|(_, _, note)| *note)
}
