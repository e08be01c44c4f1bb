//! `kafka-codec apis`: the API table this build knows.

use crate::common::{write_stdout, Failure, Run};
use kafka_codec::{ApiKey, Listener};

/// List every API key: versions, first flexible version, listeners, unstable version.
///
/// FLEXIBLE is the first version with compact encodings and tagged fields (request/response
/// when they differ); UNSTABLE names the latest version when Kafka still marks it unstable.
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
        let unstable = if api.latest_version_unstable() {
            format!("v{}", api.valid_versions().max)
        } else {
            "-".to_owned()
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
    out
}
