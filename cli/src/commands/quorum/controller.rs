//! What `quorum serve` answers, without I/O: one request in, the answer (now, after a voter
//! change commits, or a closed connection) out, as a KRaft controller answers admin tools.

use super::sim::{Quorum, LISTENER};
use kafka_codec::conn::{IncomingRequest, SupportedVersions};
use kafka_codec::messages::api_versions_response::ApiVersionsResponse;
use kafka_codec::messages::describe_cluster_response::{
    DescribeClusterBroker, DescribeClusterResponse,
};
use kafka_codec::messages::describe_quorum_response::DescribeQuorumResponse;
use kafka_codec::messages::{
    AddRaftVoterResponse, DescribeClusterRequest, RemoveRaftVoterResponse,
};
use kafka_codec::quorum::{PendingVoterChange, ReplicaKey, VoterChangeError};
use kafka_codec::ErrorCode;
use kafka_codec::{ApiKey, Request, Response, ResponseFrame, VersionRange};

/// `EndpointType` 2: the controllers (KIP-919).
const CONTROLLER_ENDPOINTS: i8 = 2;

/// How long an accepted voter change may take to commit before the leader answers
/// `REQUEST_TIMED_OUT` (Kafka's `controller.quorum.request.timeout.ms`, 2 s by default;
/// longer here because the simulated followers fetch only every second or two, and still
/// below the admin client's 30 s request timeout).
pub const VOTER_CHANGE_TIMEOUT_MS: i64 = 15_000;

/// The APIs the server answers, and at which versions.
#[derive(Debug, Clone)]
pub struct Controller {
    advertised: SupportedVersions,
    host: String,
    port: u16,
}

/// What to do with one request.
#[derive(Debug)]
pub enum Answer {
    /// Send this.
    Now(Box<ResponseFrame>),
    /// A voter change was appended: answer once it commits (or times out).
    AfterCommit(PendingVoterChange),
    /// Close the connection, as Kafka does for a request it cannot serve.
    Close(String),
}

impl Controller {
    /// A controller reachable at `host:port`; with `stable_only`, DescribeQuorum v3 (in
    /// development) is not advertised, as a Kafka node without `unstable.api.versions.enable`
    /// would not.
    pub fn new(host: &str, port: u16, stable_only: bool) -> Self {
        let apis = [
            ApiKey::ApiVersions,
            ApiKey::DescribeCluster,
            ApiKey::DescribeQuorum,
            ApiKey::AddRaftVoter,
            ApiKey::RemoveRaftVoter,
        ];
        let advertised = SupportedVersions::from_ranges(apis.into_iter().filter_map(|api| {
            let range = if stable_only {
                api.stable_versions()?
            } else {
                api.valid_versions()
            };
            Some((api.key(), range))
        }));
        Controller {
            advertised,
            host: host.to_owned(),
            port,
        }
    }

    /// What `ApiVersions` lists.
    pub fn advertised(&self) -> &SupportedVersions {
        &self.advertised
    }

    /// The answer to `request` from the quorum's leader at `now_ms`, and a short summary
    /// for the log.
    pub fn answer(
        &self,
        cluster: &mut Quorum,
        request: &IncomingRequest,
        now_ms: i64,
    ) -> (Answer, String) {
        let api = request.api_key();
        if request.is_unsupported_api_versions() {
            let ours = self
                .advertised
                .get(ApiKey::ApiVersions.key())
                .unwrap_or(VersionRange::new(0, 0));
            return (
                Answer::Now(Box::new(request.unsupported_api_versions_response(ours))),
                format!("UNSUPPORTED_VERSION, retry at v{} or lower", ours.max),
            );
        }
        let advertised = self
            .advertised
            .get(api.key())
            .is_some_and(|range| range.contains(request.api_version));
        if !advertised {
            return (
                Answer::Close(format!("{api} v{} is not advertised", request.api_version)),
                "not advertised: closing the connection".into(),
            );
        }
        match &request.body {
            Request::ApiVersions(_) => {
                let body =
                    ApiVersionsResponse::default().with_api_keys(self.advertised.to_api_keys());
                (
                    Answer::Now(Box::new(request.respond(body))),
                    format!("{}", self.advertised),
                )
            }
            Request::DescribeCluster(body) => self.describe_cluster(cluster, request, body),
            Request::DescribeQuorum(body) => {
                let version = request.api_version;
                match cluster
                    .leader_mut()
                    .handle_describe_quorum(body, now_ms, version)
                {
                    Ok(response) => {
                        let summary = summarize(&response);
                        (Answer::Now(Box::new(request.respond(response))), summary)
                    }
                    Err(error) => (Answer::Close(error.to_string()), "failed".into()),
                }
            }
            Request::AddRaftVoter(body) => {
                let key = ReplicaKey::from_wire(body.voter_id, body.voter_directory_id);
                let probe = cluster.probe(&key);
                let id = cluster.cluster_id().to_owned();
                let result = cluster.leader_mut().handle_add_raft_voter(
                    body,
                    &id,
                    LISTENER,
                    probe,
                    now_ms,
                    VOTER_CHANGE_TIMEOUT_MS,
                );
                let what = format!("add {key}");
                voter_change(request, result, what, |e| {
                    Response::from(e.to_add_raft_voter_response())
                })
            }
            Request::RemoveRaftVoter(body) => {
                let key = ReplicaKey::from_wire(body.voter_id, body.voter_directory_id);
                let id = cluster.cluster_id().to_owned();
                let result = cluster.leader_mut().handle_remove_raft_voter(
                    body,
                    &id,
                    now_ms,
                    VOTER_CHANGE_TIMEOUT_MS,
                );
                let what = format!("remove {key}");
                voter_change(request, result, what, |e| {
                    Response::from(e.to_remove_raft_voter_response())
                })
            }
            _ => (
                Answer::Close(format!("{api} is not served")),
                "not served".into(),
            ),
        }
    }

    fn describe_cluster(
        &self,
        cluster: &Quorum,
        request: &IncomingRequest,
        body: &DescribeClusterRequest,
    ) -> (Answer, String) {
        if body.endpoint_type != CONTROLLER_ENDPOINTS {
            let response = DescribeClusterResponse::default()
                .with_error_code(ErrorCode::MISMATCHED_ENDPOINT_TYPE.code())
                .with_error_message(Some(
                    format!(
                        "this is a controller endpoint; the request asked for endpoint type {}",
                        body.endpoint_type
                    )
                    .into(),
                ));
            return (
                Answer::Now(Box::new(request.respond(response))),
                "MISMATCHED_ENDPOINT_TYPE".into(),
            );
        }
        // Only the leader has a socket: it is the one controller listed, at this server's
        // address.
        let leader = cluster.leader().leader_id();
        let response = DescribeClusterResponse::default()
            .with_endpoint_type(CONTROLLER_ENDPOINTS)
            .with_cluster_id(cluster.cluster_id().into())
            .with_controller_id(leader)
            .with_brokers(vec![DescribeClusterBroker::default()
                .with_broker_id(leader)
                .with_host(self.host.as_str().into())
                .with_port(i32::from(self.port))
                .with_rack(None)])
            .with_cluster_authorized_operations(i32::MIN);
        let summary = format!(
            "cluster {}, controller {leader} at {}:{}",
            cluster.cluster_id(),
            self.host,
            self.port
        );
        (Answer::Now(Box::new(request.respond(response))), summary)
    }

    /// The response to a voter change once [`PendingVoterChange::poll`] has an outcome.
    pub fn voter_change_response(
        request: &IncomingRequest,
        outcome: &Result<(), VoterChangeError>,
    ) -> ResponseFrame {
        let (error_code, error_message) = match outcome {
            Ok(()) => (0, None),
            Err(error) => (error.code.code(), Some(error.message.as_str().into())),
        };
        match request.api_key() {
            ApiKey::AddRaftVoter => request.respond(
                AddRaftVoterResponse::default()
                    .with_error_code(error_code)
                    .with_error_message(error_message),
            ),
            _ => request.respond(
                RemoveRaftVoterResponse::default()
                    .with_error_code(error_code)
                    .with_error_message(error_message),
            ),
        }
    }
}

fn voter_change(
    request: &IncomingRequest,
    result: Result<PendingVoterChange, VoterChangeError>,
    what: String,
    refusal: impl FnOnce(&VoterChangeError) -> Response,
) -> (Answer, String) {
    match result {
        Ok(pending) => (
            Answer::AfterCommit(pending),
            format!(
                "{what}: VotersRecord appended at offset {}, answering once it commits",
                pending.offset()
            ),
        ),
        Err(error) => (
            Answer::Now(Box::new(request.respond(refusal(&error)))),
            format!("{what}: {error}"),
        ),
    }
}

/// `leader 1, epoch 1, HW 57, voters {1, 2, 3}, committed {1, 2, 3}, observers {4, 100}`.
fn summarize(response: &DescribeQuorumResponse) -> String {
    let Some(partition) = response.topics.first().and_then(|t| t.partitions.first()) else {
        return "no partition".into();
    };
    if partition.error_code != 0 {
        return format!("{}", ErrorCode::from(partition.error_code));
    }
    let ids = |replicas: &[kafka_codec::messages::describe_quorum_response::ReplicaState]| {
        let ids: Vec<String> = replicas.iter().map(|r| r.replica_id.to_string()).collect();
        format!("{{{}}}", ids.join(", "))
    };
    let committed = match &partition.committed_voters {
        Some(committed) => format!(", committed {}", ids(committed)),
        None => String::new(),
    };
    format!(
        "leader {}, epoch {}, HW {}, voters {}{committed}, observers {}",
        partition.leader_id,
        partition.leader_epoch,
        partition.high_watermark,
        ids(&partition.current_voters),
        ids(&partition.observers)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_codec::messages::{
        ApiVersionsRequest, DescribeQuorumRequest, MetadataRequest, RemoveRaftVoterRequest,
        RequestHeader,
    };

    const T0: i64 = 1_700_000_000_000;

    fn request(body: impl Into<Request>, version: i16) -> IncomingRequest {
        let body = body.into();
        IncomingRequest {
            header: RequestHeader::default()
                .with_request_api_key(body.api_key().key())
                .with_request_api_version(version)
                .with_correlation_id(9),
            body,
            api_version: version,
        }
    }

    fn setup(stable_only: bool) -> (Controller, Quorum) {
        let controller = Controller::new("127.0.0.1", 9093, stable_only);
        (
            controller,
            super::super::sim::quorum(1, 1_000, ("127.0.0.1", 9093), T0),
        )
    }

    fn now(answer: Answer) -> ResponseFrame {
        match answer {
            Answer::Now(frame) => *frame,
            other => panic!("not answered now: {other:?}"),
        }
    }

    #[test]
    fn advertises_what_it_answers_and_v3_only_when_asked() {
        let (controller, _) = setup(false);
        let dq = ApiKey::DescribeQuorum.key();
        assert_eq!(
            controller.advertised().get(dq),
            Some(VersionRange::new(0, 3))
        );
        assert_eq!(controller.advertised().len(), 5);
        let (stable, mut cluster) = setup(true);
        assert_eq!(stable.advertised().get(dq), Some(VersionRange::new(0, 2)));
        // A version it does not advertise closes the connection, as Kafka does.
        let (answer, _) = stable.answer(
            &mut cluster,
            &request(DescribeQuorumRequest::default(), 3),
            T0,
        );
        assert!(matches!(answer, Answer::Close(_)), "{answer:?}");
        let (answer, _) = stable.answer(&mut cluster, &request(MetadataRequest::default(), 12), T0);
        assert!(matches!(answer, Answer::Close(_)), "{answer:?}");
    }

    #[test]
    fn api_versions_lists_the_table_and_falls_back() {
        let (controller, mut cluster) = setup(false);
        let (answer, _) =
            controller.answer(&mut cluster, &request(ApiVersionsRequest::default(), 3), T0);
        let Response::ApiVersions(body) = now(answer).body else {
            panic!("not ApiVersions")
        };
        assert_eq!(body.error_code, 0);
        assert_eq!(body.api_keys, controller.advertised().to_api_keys());
        // A newer client's ApiVersions (read as an empty v0 request): UNSUPPORTED_VERSION at
        // v0, naming the versions to retry with.
        let mut newer = request(ApiVersionsRequest::default(), 0);
        newer.header.request_api_version = ApiKey::ApiVersions.valid_versions().max + 1;
        let frame = now(controller.answer(&mut cluster, &newer, T0).0);
        assert_eq!(frame.api_version, 0);
        let Response::ApiVersions(body) = frame.body else {
            panic!("not ApiVersions")
        };
        assert_eq!(body.error_code, ErrorCode::UNSUPPORTED_VERSION.code());
        assert_eq!(body.api_keys.len(), 1);
        assert_eq!(
            body.api_keys[0].max_version,
            ApiKey::ApiVersions.valid_versions().max
        );
    }

    #[test]
    fn describe_cluster_names_the_leader_for_controller_endpoints_only() {
        let (controller, mut cluster) = setup(false);
        let ask =
            |endpoint_type: i8| DescribeClusterRequest::default().with_endpoint_type(endpoint_type);
        let frame = now(controller.answer(&mut cluster, &request(ask(2), 2), T0).0);
        let Response::DescribeCluster(body) = frame.body else {
            panic!("not DescribeCluster")
        };
        assert_eq!(
            (body.error_code, body.endpoint_type, body.controller_id),
            (0, 2, 1)
        );
        assert_eq!(body.cluster_id.as_str(), cluster.cluster_id());
        assert_eq!(body.brokers.len(), 1);
        assert_eq!(
            (body.brokers[0].host.as_str(), body.brokers[0].port),
            ("127.0.0.1", 9093)
        );
        assert_eq!(body.cluster_authorized_operations, i32::MIN);
        for (endpoint_type, version) in [(1, 2), (1, 0)] {
            let frame = now(controller
                .answer(&mut cluster, &request(ask(endpoint_type), version), T0)
                .0);
            let Response::DescribeCluster(body) = frame.body else {
                panic!("not DescribeCluster")
            };
            assert_eq!(body.error_code, ErrorCode::MISMATCHED_ENDPOINT_TYPE.code());
        }
    }

    #[test]
    fn voter_changes_are_refused_at_once_or_answered_after_the_commit() {
        let (controller, mut cluster) = setup(false);
        let remove = |id: i32| {
            RemoveRaftVoterRequest::default()
                .with_cluster_id(None)
                .with_voter_id(id)
                .with_voter_directory_id(kafka_codec::Uuid::from_bytes([7; 16]))
        };
        // No high watermark yet: REQUEST_TIMED_OUT, at once.
        let frame = now(controller
            .answer(&mut cluster, &request(remove(3), 0), T0)
            .0);
        let Response::RemoveRaftVoter(body) = frame.body else {
            panic!("not RemoveRaftVoter")
        };
        assert_eq!(body.error_code, ErrorCode::REQUEST_TIMED_OUT.code());
        cluster.advance(T0 + 5_000);
        // The right id with a directory the voter does not have: VOTER_NOT_FOUND.
        let frame = now(controller
            .answer(&mut cluster, &request(remove(3), 0), T0 + 5_000)
            .0);
        let Response::RemoveRaftVoter(body) = frame.body else {
            panic!("not RemoveRaftVoter")
        };
        assert_eq!(body.error_code, ErrorCode::VOTER_NOT_FOUND.code());
        // The right key: appended, answered later.
        let three = cluster.leader().voter_state(3).unwrap().key();
        let mut right = remove(3);
        right.voter_directory_id = three.directory_id_or_zero();
        let incoming = request(right, 0);
        let (answer, _) = controller.answer(&mut cluster, &incoming, T0 + 5_000);
        let Answer::AfterCommit(pending) = answer else {
            panic!("not pending: {answer:?}")
        };
        cluster.advance(T0 + 15_000);
        let outcome = pending.poll(cluster.leader(), T0 + 15_000).unwrap();
        let frame = Controller::voter_change_response(&incoming, &outcome);
        let Response::RemoveRaftVoter(body) = frame.body else {
            panic!("not RemoveRaftVoter")
        };
        assert_eq!((body.error_code, body.error_message), (0, None));
        assert_eq!(frame.header.correlation_id, 9);
    }
}
