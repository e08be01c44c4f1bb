//! `kafka-codec quorum describe`: the quorum as `kafka-metadata-quorum describe` prints it,
//! plus the committed voter set.

use super::client::{ConnectArgs, Controllers};
use super::render::Quorum;
use crate::common::{read_input, write_stdout, Failure, Run};
use kafka_codec::messages::describe_quorum_request::{
    DescribeQuorumRequest, PartitionData, TopicData,
};
use kafka_codec::quorum::{METADATA_PARTITION, METADATA_TOPIC};
use kafka_codec::serde_json::{self, Value};
use kafka_codec::{ApiKey, Response, ResponseFrame};
use std::path::{Path, PathBuf};

/// Describe a KRaft quorum as `kafka-metadata-quorum describe` does, plus its committed
/// voter set.
///
/// Asks the controller at --bootstrap-controller for the controllers (DescribeCluster), then
/// the leader for DescribeQuorum at the highest version both sides speak. That includes v3,
/// the committed voter set: v3 is provisional (in development upstream, KIP-1204) and
/// ordinary negotiation never picks it, but showing committed voters is what this command is
/// for, so it opts in; --stable-only turns that off. Against a controller without v3 (any
/// Kafka release so far) the answer is v2 and the committed voters are "unknown".
///
/// DescribeQuorum must reach the leader: the command asks it at the address DescribeCluster
/// gives, as Kafka's admin client does, which may not be --bootstrap-controller (a note on
/// stderr says so). Through `kafka-codec tap`, give the tap --rewrite-brokers, or the question
/// goes around it.
///
/// The first lines are exactly what Kafka's tool prints for the same answer (--status: eight
/// lines; --replication: its table). Then: CommittedVoters, the voter set in force at high
/// watermark - 1, and PendingVoterChange, how the current voters differ from it. In the
/// replication view a committed voter the leader has no live state for shows its -1
/// sentinels as "-1 (unknown)".
#[derive(Debug, clap::Args)]
pub struct Describe {
    /// A controller to ask first (its controller listener), as `--bootstrap-controller`.
    #[arg(
        long,
        value_name = "HOST:PORT",
        required_unless_present = "response",
        conflicts_with = "response"
    )]
    bootstrap_controller: Option<String>,
    /// The status view (the default).
    #[arg(long, conflicts_with = "replication")]
    status: bool,
    /// The replication view: one row per voter and observer.
    #[arg(long)]
    replication: bool,
    /// Negotiate stable versions only: DescribeQuorum up to v2, never the provisional v3.
    #[arg(long)]
    stable_only: bool,
    /// Instead of asking a controller, show a DescribeQuorum response saved as JSON (what
    /// `kafka-codec decode response` prints, or a `quorum serve --trace` response).
    #[arg(long, value_name = "FILE")]
    response: Option<PathBuf>,
    /// The ClusterId to show with --response (default: unknown).
    #[arg(long, value_name = "ID", requires = "response")]
    cluster_id: Option<String>,
    #[command(flatten)]
    connect: ConnectArgs,
}

impl Run for Describe {
    fn run(self) -> Result<(), Failure> {
        let (response, version, cluster_id) = match (&self.response, &self.bootstrap_controller) {
            (Some(path), _) => {
                let (response, version) = read_response(path)?;
                let cluster_id = self.cluster_id.clone().unwrap_or_else(|| "unknown".into());
                (response, version, cluster_id)
            }
            (None, Some(bootstrap)) => self.ask(bootstrap)?,
            (None, None) => unreachable!("clap requires one of them"),
        };
        let quorum = Quorum::read(&response, version).map_err(Failure::Peer)?;
        let text = if self.replication {
            quorum.replication()
        } else {
            quorum.status(&cluster_id)
        };
        write_stdout(text.as_bytes())
    }
}

impl Describe {
    /// DescribeCluster at the bootstrap controller, then DescribeQuorum at the leader.
    fn ask(
        &self,
        bootstrap: &str,
    ) -> Result<(kafka_codec::messages::DescribeQuorumResponse, i16, String), Failure> {
        let controllers = Controllers::discover(bootstrap, &self.connect.connect()?)?;
        let cluster_id = controllers.cluster.cluster_id.to_string();
        let mut leader = controllers.connect_to_leader()?;
        if leader.address() != bootstrap {
            // Kafka's admin client does the same; a proxy in front of the bootstrap address
            // sees only the first question unless it rewrites the addresses it passes on.
            eprintln!(
                "kafka-codec: note: DescribeQuorum goes to the leader at {}, as {bootstrap} \
                 named it, not through {bootstrap} (a `kafka-codec tap` there sees it only \
                 with --rewrite-brokers)",
                leader.address()
            );
        }
        let api = ApiKey::DescribeQuorum;
        let ours = if self.stable_only {
            api.stable_versions()
                .ok_or_else(|| Failure::Peer(format!("{api} has no stable version")))?
        } else {
            api.valid_versions()
        };
        let version = leader.negotiate(api, ours)?;
        let request = DescribeQuorumRequest::default().with_topics(vec![TopicData::default()
            .with_topic_name(METADATA_TOPIC.into())
            .with_partitions(vec![
                PartitionData::default().with_partition_index(METADATA_PARTITION)
            ])]);
        let Response::DescribeQuorum(response) = leader.call(version, request)? else {
            unreachable!("the answer to DescribeQuorum is decoded as DescribeQuorum");
        };
        Ok((response, version, cluster_id))
    }
}

/// A DescribeQuorum response frame in the JSON form `decode response` prints (or a trace
/// line holding one under `"response"`), and its version.
fn read_response(
    path: &Path,
) -> Result<(kafka_codec::messages::DescribeQuorumResponse, i16), Failure> {
    let bytes = read_input(path)?;
    let bad = |why: String| Failure::Input(format!("{}: {why}", path.display()));
    let mut value: Value = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    if let Some(inner) = value.get_mut("response") {
        value = inner.take();
    }
    let frame = ResponseFrame::from_json(&value).map_err(|e| bad(e.to_string()))?;
    match frame.body {
        Response::DescribeQuorum(response) => Ok((response, frame.api_version)),
        other => Err(bad(format!(
            "{} response, not DescribeQuorum",
            crate::common::with_article(other.api_key().name())
        ))),
    }
}
