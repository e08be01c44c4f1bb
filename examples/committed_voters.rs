//! A controller quorum reconfigured while an operator watches DescribeQuorum.
//!
//! Three controllers (1, 2, 3) with controller 2 leading; controller 4 joins, then
//! controller 1 leaves. At each step the example prints the quorum the way an operator tool
//! reads it from the v3 response, and the v2 and v3 responses side by side: a voter change
//! is *current* as soon as the leader appends it and *committed* only once the high
//! watermark passes it, and only v3 can tell the two apart.
//!
//! DescribeQuorum v3 is provisional: this crate's implementation of KIP-1204, a draft
//! upstream, laid out as upstream's draft schema has it. Kafka 4.4.0 speaks v0-v2.
//! To watch the same thing over a socket, see `kafka-codec quorum serve` in the README.
//!
//! ```text
//! cargo run --example committed_voters            # compact
//! cargo run --example committed_voters -- --json  # plus both responses as Kafka JSON
//! ```

use kafka_codec::messages::describe_quorum_response::{PartitionData, ReplicaState};
use kafka_codec::messages::{DescribeQuorumResponse, KRaftVersionRecord};
use kafka_codec::quorum::{
    ControlRecord, ControlRecordStateMachine, Endpoints, LeaderState, LocalReplica, ReplicaKey,
    VoterNode, VoterSet,
};
use kafka_codec::{ApiKey, Message, Response, ResponseFrame, Uuid};
use std::error::Error;

type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// Wall clock at the start (2023-11-14T22:13:20Z), in ms.
const START: i64 = 1_700_000_000_000;

fn key(id: i32) -> ReplicaKey {
    ReplicaKey::new(id, Some(Uuid::from_bytes([id as u8; 16])))
}

fn node(id: i32) -> VoterNode {
    let endpoints = Endpoints::single("CONTROLLER", &format!("controller-{id}.example"), 9093);
    VoterNode::new(key(id), endpoints, (0, 1))
}

struct Demo {
    leader: LeaderState,
    now: i64,
    step: usize,
    json: bool,
}

impl Demo {
    /// Controllers 1-3 formatted with `--initial-controllers` (kraft.version 1), controller
    /// 2 elected for epoch 1.
    fn start(json: bool) -> Result<Self> {
        let voters = VoterSet::new([node(1), node(2), node(3)])?;
        let mut log = ControlRecordStateMachine::new(None);
        log.load_snapshot(
            0,
            &[
                ControlRecord::kraft_version(
                    &KRaftVersionRecord::default().with_k_raft_version(1),
                )?,
                ControlRecord::voters(&voters.to_voters_record())?,
            ],
        )?;
        let me = LocalReplica {
            key: key(2),
            listeners: node(2).listeners().clone(),
            supported_kraft_versions: (0, 1),
        };
        Ok(Demo {
            leader: LeaderState::new(me, 1, log)?,
            now: START,
            step: 0,
            json,
        })
    }

    /// Replicas fetch at the leader's log end offset, each a few ms apart.
    fn fetch_all(&mut self, ids: &[i32]) -> Result<()> {
        for &id in ids {
            self.now += 15;
            let end = self.leader.log_end_offset();
            self.leader.update_replica_state(key(id), self.now, end)?;
        }
        Ok(())
    }

    /// The leader's answer at `version` as a response frame's bytes, and what a client
    /// decodes from them.
    fn round_trip(&mut self, version: i16) -> Result<(DescribeQuorumResponse, usize)> {
        let answer = self.leader.describe_quorum(self.now, version)?;
        let frame = ResponseFrame::new(answer, version, self.step as i32);
        let bytes = frame.encode_to_bytes()?;
        let decoded = ResponseFrame::decode(bytes.clone(), ApiKey::DescribeQuorum, version)?;
        let Response::DescribeQuorum(body) = decoded.body else {
            unreachable!("decoded as DescribeQuorum");
        };
        Ok((body, bytes.len()))
    }

    fn show(&mut self, title: &str, note: &str) -> Result<()> {
        self.step += 1;
        self.now += 40;
        // What goes on the wire (a whole response frame, answering request `step`), read
        // back as a client would.
        let (v2, v2_len) = self.round_trip(2)?;
        let (v3, v3_len) = self.round_trip(3)?;

        println!("\n━━ {}. {title}", self.step);
        for line in wrap(note, 86) {
            println!("   {line}");
        }
        operator_view(&v3, self.now);
        side_by_side(&v2, v2_len, &v3, v3_len);
        if self.json {
            println!("   v2 JSON: {}", v2.to_json(2)?);
            println!("   v3 JSON: {}", v3.to_json(3)?);
        }
        Ok(())
    }
}

/// The quorum as `kafka-metadata-quorum describe --status --replication` would show it,
/// plus the committed column only v3 can fill.
fn operator_view(response: &DescribeQuorumResponse, now: i64) {
    let p = &response.topics[0].partitions[0];
    let hw = if p.high_watermark < 0 {
        "unknown".to_string()
    } else {
        p.high_watermark.to_string()
    };
    let leader_end = p
        .current_voters
        .iter()
        .chain(&p.observers)
        .find(|r| r.replica_id == p.leader_id)
        .map_or(-1, |r| r.log_end_offset);
    println!(
        "   leader {}  epoch {}  high watermark {hw}  log end {leader_end}",
        p.leader_id, p.leader_epoch
    );
    println!(
        "   {:<4} {:<8} {:>4} {:>4} {:>11} {:>11}  {:<9} committed",
        "id", "dir", "LEO", "lag", "fetched", "caught up", "role"
    );
    let committed = p.committed_voters.as_deref();
    let mut rows: Vec<(&ReplicaState, &str)> = Vec::new();
    for r in &p.current_voters {
        rows.push((
            r,
            if r.replica_id == p.leader_id {
                "leader"
            } else {
                "voter"
            },
        ));
    }
    for r in &p.observers {
        rows.push((r, "observer"));
    }
    for c in committed.unwrap_or_default() {
        if !rows.iter().any(|(r, _)| same_replica(r, c)) {
            rows.push((c, "-"));
        }
    }
    rows.sort_by_key(|(r, _)| r.replica_id);
    for (r, role) in rows {
        let is_committed = match committed {
            None => "? (HW unknown)",
            Some(list) if list.iter().any(|c| same_replica(c, r)) => "yes",
            Some(_) => "no",
        };
        let dir = r.replica_directory_id.to_string();
        println!(
            "   {:<4} {:<8} {:>4} {:>4} {:>11} {:>11}  {:<9} {is_committed}",
            r.replica_id,
            format!("{}…", &dir[..6]),
            offset(r.log_end_offset),
            if r.log_end_offset < 0 {
                "-".into()
            } else {
                (leader_end - r.log_end_offset).to_string()
            },
            ago(now, r.last_fetch_timestamp),
            ago(now, r.last_caught_up_timestamp),
            role,
        );
    }
}

/// Greedy word wrap.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("never empty");
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

fn same_replica(a: &ReplicaState, b: &ReplicaState) -> bool {
    a.replica_id == b.replica_id && a.replica_directory_id == b.replica_directory_id
}

fn offset(value: i64) -> String {
    if value < 0 {
        "-".into()
    } else {
        value.to_string()
    }
}

fn ago(now: i64, at: i64) -> String {
    match at {
        -1 => "never".into(),
        at if at == now => "now".into(),
        at => format!("{} ms ago", now - at),
    }
}

/// The fields the two versions carry, next to each other; a replica is `id@LEO`.
fn side_by_side(
    v2: &DescribeQuorumResponse,
    v2_len: usize,
    v3: &DescribeQuorumResponse,
    v3_len: usize,
) {
    let (a, b) = (&v2.topics[0].partitions[0], &v3.topics[0].partitions[0]);
    let list = |replicas: &[ReplicaState]| {
        if replicas.is_empty() {
            "-".to_string()
        } else {
            replicas
                .iter()
                .map(|r| format!("{}@{}", r.replica_id, offset(r.log_end_offset)))
                .collect::<Vec<_>>()
                .join(" ")
        }
    };
    let nodes = |response: &DescribeQuorumResponse| {
        response
            .nodes
            .iter()
            .map(|n| n.node_id.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let committed = |p: &PartitionData| match &p.committed_voters {
        None => "null".to_string(),
        Some(list_) => list(list_),
    };
    let rows = [
        (
            "HighWatermark",
            a.high_watermark.to_string(),
            b.high_watermark.to_string(),
        ),
        (
            "CurrentVoters",
            list(&a.current_voters),
            list(&b.current_voters),
        ),
        // Wire order: v3 puts CommittedVoters between CurrentVoters and Observers.
        ("CommittedVoters", "(not in v2)".into(), committed(b)),
        ("Observers", list(&a.observers), list(&b.observers)),
        ("Nodes", nodes(v2), nodes(v3)),
    ];
    let v2_title = format!("v2 ({v2_len} bytes)");
    println!("   {:<16} {v2_title:<26} v3 ({v3_len} bytes)", "");
    for (name, left, right) in rows {
        println!("   {name:<16} {left:<26} {right}");
    }
}

fn main() -> Result<()> {
    let json = std::env::args().any(|arg| arg == "--json");
    let mut demo = Demo::start(json)?;
    println!(
        "DescribeQuorum and the committed voter set: controllers 1-3 led by 2; 4 joins, 1 leaves."
    );
    println!("Committed = the voter set in force at HW - 1. Replicas below are id@LogEndOffset;");
    println!(
        "lag is counted from the leader's log end. Each step shows the v3 answer as an operator"
    );
    println!("reads it, then what the v2 and v3 answers carry.");

    demo.show(
        "controller 2 is elected leader of epoch 1",
        "No follower has fetched the epoch's first record yet: the high watermark is unknown, so v3 says CommittedVoters = null.",
    )?;

    demo.fetch_all(&[1, 3])?;
    demo.show(
        "followers 1 and 3 catch up",
        "The epoch's first records are on a majority: HW known, committed voters = current voters.",
    )?;

    demo.fetch_all(&[4])?;
    let at = demo.leader.add_voter(node(4))?;
    demo.show(
        &format!("controller 4 joins: AddVoter(4) appended at offset {at}"),
        &format!(
            "The leader counts 4 at once (CurrentVoters); it is committed only when HW > {at}."
        ),
    )?;

    demo.fetch_all(&[1])?;
    demo.show(
        "follower 1 replicates the VotersRecord",
        "Two of four voters have it: not a majority of the new set, HW does not move.",
    )?;

    demo.fetch_all(&[4])?;
    demo.show(
        "controller 4 replicates it: the VotersRecord commits",
        "Three of four voters have it: HW passes it, and voter 4 is committed.",
    )?;

    let at = demo.leader.remove_voter(&key(1))?;
    demo.fetch_all(&[1])?;
    demo.show(
        &format!("controller 1 leaves: RemoveVoter(1) appended at offset {at}"),
        "1 is no longer a current voter and fetches as an observer, but stays committed (and keeps its node) until the removal commits.",
    )?;

    demo.fetch_all(&[3, 4, 1])?;
    demo.show(
        "the removal commits",
        "Committed voters = current voters = {2, 3, 4}; controller 1 is just an observer now.",
    )?;
    if !json {
        println!("\n(add `-- --json` to also print both answers in Kafka's JSON form)");
    }
    Ok(())
}
