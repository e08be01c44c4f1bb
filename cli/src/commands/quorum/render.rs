//! The quorum as an operator reads it: the lines `kafka-metadata-quorum describe --status`
//! and `--replication` print (same labels, layout and arithmetic, so the two can be compared
//! line by line), then a section on the committed voter set that only DescribeQuorum v3
//! can fill.

use kafka_codec::messages::describe_quorum_response::{
    DescribeQuorumResponse, PartitionData, ReplicaState,
};
use kafka_codec::quorum::{COMMITTED_VOTERS_VERSION, METADATA_PARTITION, METADATA_TOPIC};
use kafka_codec::Uuid;
use std::collections::BTreeMap;

/// A DescribeQuorum answer, checked the way Kafka's admin client checks it.
pub struct Quorum<'a> {
    partition: &'a PartitionData,
    /// Listeners by node id, as `NAME://host:port`.
    endpoints: BTreeMap<i32, Vec<String>>,
    leader: &'a ReplicaState,
    version: i16,
}

impl<'a> Quorum<'a> {
    /// The metadata partition of `response` (read at `version`); fails as the admin client
    /// does: on an error code, on anything but exactly `__cluster_metadata`-0, and when the
    /// leader is not among the current voters.
    pub fn read(response: &'a DescribeQuorumResponse, version: i16) -> Result<Self, String> {
        if response.error_code != 0 {
            return Err(error_text(
                response.error_code,
                response.error_message.as_deref(),
            ));
        }
        let partition = match response.topics.as_slice() {
            [topic] if topic.topic_name == METADATA_TOPIC => match topic.partitions.as_slice() {
                [partition] if partition.partition_index == METADATA_PARTITION => partition,
                _ => return Err("the answer does not describe partition 0 alone".into()),
            },
            _ => {
                return Err(format!(
                    "the answer does not describe {METADATA_TOPIC} alone"
                ))
            }
        };
        if partition.error_code != 0 {
            return Err(error_text(
                partition.error_code,
                partition.error_message.as_deref(),
            ));
        }
        let leader = partition
            .current_voters
            .iter()
            .find(|voter| voter.replica_id == partition.leader_id)
            .ok_or_else(|| {
                format!(
                    "the leader ({}) is not among the current voters",
                    partition.leader_id
                )
            })?;
        let mut endpoints = BTreeMap::new();
        for node in &response.nodes {
            let listeners = node
                .listeners
                .iter()
                .map(|l| {
                    if l.host.contains(':') {
                        format!("{}://[{}]:{}", l.name, l.host, l.port)
                    } else {
                        format!("{}://{}:{}", l.name, l.host, l.port)
                    }
                })
                .collect();
            if endpoints.insert(node.node_id, listeners).is_some() {
                return Err(format!("node {} is listed twice in Nodes", node.node_id));
            }
        }
        Ok(Quorum {
            partition,
            endpoints,
            leader,
            version,
        })
    }

    /// The eight lines of `describe --status`, then the committed voter set.
    pub fn status(&self, cluster_id: &str) -> String {
        let p = self.partition;
        let leader = self.leader;
        // The voter furthest behind; on a tie the first listed, as `Stream.min` keeps it.
        let behind = p
            .current_voters
            .iter()
            .reduce(|a, b| {
                if b.log_end_offset < a.log_end_offset {
                    b
                } else {
                    a
                }
            })
            .expect("the leader is a voter");
        let lag = leader.log_end_offset - behind.log_end_offset;
        let lag_time = if std::ptr::eq(behind, leader) {
            0
        } else if leader.last_caught_up_timestamp != -1 && behind.last_caught_up_timestamp != -1 {
            leader.last_caught_up_timestamp - behind.last_caught_up_timestamp
        } else {
            -1
        };
        let mut out = String::new();
        let mut line = |label: &str, value: &dyn std::fmt::Display| {
            out.push_str(&format!("{:<24}{value}\n", format!("{label}:")));
        };
        line("ClusterId", &cluster_id);
        line("LeaderId", &p.leader_id);
        line("LeaderEpoch", &p.leader_epoch);
        line("HighWatermark", &p.high_watermark);
        line("MaxFollowerLag", &lag);
        line("MaxFollowerLagTimeMs", &lag_time);
        line("CurrentVoters", &self.replicas(&p.current_voters));
        line("CurrentObservers", &self.replicas(&p.observers));
        match self.committed() {
            Err(why) => line("CommittedVoters", &format!("unknown ({why})")),
            Ok(committed) => {
                line("CommittedVoters", &self.replicas(committed));
                line("PendingVoterChange", &self.pending_change(committed));
            }
        }
        out
    }

    /// The table of `describe --replication`, then the committed voters' table.
    pub fn replication(&self) -> String {
        let p = self.partition;
        let mut rows = Vec::new();
        rows.push(self.row(self.leader, "Leader".into()));
        for voter in p
            .current_voters
            .iter()
            .filter(|v| v.replica_id != p.leader_id)
        {
            rows.push(self.row(voter, "Follower".into()));
        }
        for observer in &p.observers {
            rows.push(self.row(observer, "Observer".into()));
        }
        let mut out = table(&rows);
        out.push('\n');
        match self.committed() {
            Err(why) => out.push_str(&format!("CommittedVoters: unknown ({why})\n")),
            Ok(committed) => {
                out.push_str(&format!(
                    "CommittedVoters (the voter set at high watermark - 1 = {}):\n",
                    p.high_watermark - 1
                ));
                let rows: Vec<Vec<String>> = committed
                    .iter()
                    .map(|voter| self.committed_row(voter))
                    .collect();
                out.push_str(&table(&rows));
            }
        }
        out
    }

    fn committed(&self) -> Result<&'a [ReplicaState], String> {
        if self.version < COMMITTED_VOTERS_VERSION {
            return Err(format!(
                "DescribeQuorum v{} has none; v{COMMITTED_VOTERS_VERSION} has them",
                self.version
            ));
        }
        self.partition
            .committed_voters
            .as_deref()
            .ok_or_else(|| "null: the leader does not know its high watermark yet".into())
    }

    /// `adds 4; removes 3`, or `none`.
    fn pending_change(&self, committed: &[ReplicaState]) -> String {
        let current = &self.partition.current_voters;
        let ids = |list: &[ReplicaState], other: &[ReplicaState]| -> Vec<String> {
            list.iter()
                .filter(|r| !other.iter().any(|o| o.replica_id == r.replica_id))
                .map(|r| r.replica_id.to_string())
                .collect()
        };
        let (added, removed) = (ids(current, committed), ids(committed, current));
        let mut parts = Vec::new();
        if !added.is_empty() {
            parts.push(format!("adds {}", added.join(", ")));
        }
        if !removed.is_empty() {
            parts.push(format!("removes {}", removed.join(", ")));
        }
        if parts.is_empty() {
            "none".into()
        } else {
            format!(
                "{} (current, not committed until the high watermark passes it)",
                parts.join("; ")
            )
        }
    }

    /// `[{"id": 1, "directoryId": "…", "endpoints": ["CONTROLLER://h:9093"]}, …]`.
    fn replicas(&self, replicas: &[ReplicaState]) -> String {
        let items: Vec<String> = replicas
            .iter()
            .map(|replica| {
                let mut item = format!("{{\"id\": {}", replica.replica_id);
                if !replica.replica_directory_id.is_zero() {
                    item.push_str(&format!(
                        ", \"directoryId\": \"{}\"",
                        replica.replica_directory_id
                    ));
                }
                if let Some(endpoints) = self
                    .endpoints
                    .get(&replica.replica_id)
                    .filter(|e| !e.is_empty())
                {
                    let quoted: Vec<String> =
                        endpoints.iter().map(|e| format!("\"{e}\"")).collect();
                    item.push_str(&format!(", \"endpoints\": [{}]", quoted.join(", ")));
                }
                item.push('}');
                item
            })
            .collect();
        format!("[{}]", items.join(", "))
    }

    fn row(&self, replica: &ReplicaState, status: String) -> Vec<String> {
        vec![
            replica.replica_id.to_string(),
            directory(replica.replica_directory_id),
            replica.log_end_offset.to_string(),
            (self.leader.log_end_offset - replica.log_end_offset).to_string(),
            replica.last_fetch_timestamp.to_string(),
            replica.last_caught_up_timestamp.to_string(),
            status,
        ]
    }

    /// A committed voter: where its live entry comes from, or that it has none (then its
    /// `-1`s are the sentinels for "no live state", not measurements).
    fn committed_row(&self, voter: &ReplicaState) -> Vec<String> {
        let p = self.partition;
        let id = voter.replica_id;
        if p.current_voters.iter().any(|v| v.replica_id == id) {
            let status = if id == p.leader_id {
                "Leader"
            } else {
                "Follower"
            };
            return self.row(voter, status.into());
        }
        if p.observers
            .iter()
            .any(|o| o.replica_id == id && o.replica_directory_id == voter.replica_directory_id)
        {
            return self.row(voter, "Observer (removal not committed)".into());
        }
        let unknown = |value: i64| {
            if value == -1 {
                "-1 (unknown)".to_owned()
            } else {
                value.to_string()
            }
        };
        vec![
            id.to_string(),
            directory(voter.replica_directory_id),
            unknown(voter.log_end_offset),
            if voter.log_end_offset == -1 {
                "unknown".into()
            } else {
                (self.leader.log_end_offset - voter.log_end_offset).to_string()
            },
            unknown(voter.last_fetch_timestamp),
            unknown(voter.last_caught_up_timestamp),
            "No live state (removal not committed)".into(),
        ]
    }
}

fn directory(id: Uuid) -> String {
    id.to_string()
}

/// Kafka's table: every cell padded to its column's width and followed by a tab.
fn table(rows: &[Vec<String>]) -> String {
    let headers = [
        "NodeId",
        "DirectoryId",
        "LogEndOffset",
        "Lag",
        "LastFetchTimestamp",
        "LastCaughtUpTimestamp",
        "Status",
    ];
    let mut widths: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
        for (cell, width) in row.iter().zip(&widths) {
            out.push_str(&format!("{cell:<width$}\t"));
        }
        out.push('\n');
    }
    out
}

fn error_text(code: i16, message: Option<&str>) -> String {
    let code = kafka_codec::ErrorCode::from(code);
    match message {
        Some(message) if !message.is_empty() => format!("{code}: {message}"),
        _ => code.to_string(),
    }
}
