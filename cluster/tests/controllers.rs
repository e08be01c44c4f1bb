//! The cluster's KRaft controllers, through this crate's client connection over TCP: what
//! each controller advertises and answers (DescribeCluster for controller endpoints,
//! DescribeQuorum v0-v3 from the leader model, NOT_LEADER_OR_FOLLOWER on a follower), voter
//! changes over the wire answered once committed, and voter changes from the control surface
//! (Rust and HTTP) seen as current voters at once and as committed voters once the high
//! watermark passes them.

use crate::support;

use kafka_codec::messages::add_raft_voter_request::Listener;
use kafka_codec::messages::describe_quorum_request::{PartitionData, TopicData};
use kafka_codec::messages::describe_quorum_response::{self, DescribeQuorumResponse};
use kafka_codec::messages::{
    AddRaftVoterRequest, ApiVersionsRequest, DescribeClusterRequest, DescribeQuorumRequest,
    MetadataRequest, RemoveRaftVoterRequest,
};
use kafka_codec::serde_json::json;
use kafka_codec::{ApiKey, ErrorCode, Response, Uuid};
use kafka_codec_cluster::control::OperationError;
use kafka_codec_cluster::Cluster;
use std::time::Duration;
use support::{http, Client};

async fn cluster(brokers: usize, controllers: usize) -> Cluster {
    Cluster::builder()
        .brokers(brokers)
        .controllers(controllers)
        .quorum_fetch_interval(Duration::from_millis(20))
        .build()
        .await
        .expect("a cluster")
}

async fn controller(cluster: &Cluster, node_id: i32) -> Client {
    let address = cluster
        .controllers()
        .iter()
        .find(|c| c.node_id == node_id)
        .expect("a controller")
        .address;
    Client::connect(address, "controllers-test").await
}

fn describe_quorum_request() -> DescribeQuorumRequest {
    DescribeQuorumRequest::default().with_topics(vec![TopicData::default()
        .with_topic_name("__cluster_metadata".into())
        .with_partitions(vec![PartitionData::default().with_partition_index(0)])])
}

async fn describe_quorum(client: &mut Client, version: i16) -> DescribeQuorumResponse {
    match client.call(version, describe_quorum_request()).await {
        Response::DescribeQuorum(body) => body,
        other => panic!("not DescribeQuorum: {other:?}"),
    }
}

fn ids(replicas: &[describe_quorum_response::ReplicaState]) -> Vec<i32> {
    replicas.iter().map(|r| r.replica_id).collect()
}

/// (current voters, committed voters) as DescribeQuorum v3 shows them.
async fn voters(client: &mut Client) -> (Vec<i32>, Option<Vec<i32>>) {
    let response = describe_quorum(client, 3).await;
    let partition = &response.topics[0].partitions[0];
    assert_eq!(partition.error_code, 0);
    (
        ids(&partition.current_voters),
        partition.committed_voters.as_deref().map(ids),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_advertise_and_answer_what_admin_tools_send() {
    let cluster = cluster(2, 3).await;
    let node_ids: Vec<i32> = cluster.controllers().iter().map(|c| c.node_id).collect();
    assert_eq!(node_ids, [3000, 3001, 3002]);
    assert_eq!(cluster.bootstrap_controllers().split(',').count(), 3);
    let mut leader = controller(&cluster, 3000).await;
    let Response::ApiVersions(versions) = leader.call(3, ApiVersionsRequest::default()).await
    else {
        panic!("not ApiVersions")
    };
    let listed: Vec<(i16, i16, i16)> = versions
        .api_keys
        .iter()
        .map(|k| (k.api_key, k.min_version, k.max_version))
        .collect();
    let expected: Vec<(i16, i16, i16)> = [
        ApiKey::ApiVersions,
        ApiKey::DescribeCluster,
        ApiKey::DescribeQuorum,
        ApiKey::AddRaftVoter,
        ApiKey::RemoveRaftVoter,
        ApiKey::UnregisterController,
    ]
    .into_iter()
    .map(|api| {
        let range = api.valid_versions();
        (api.key(), range.min, range.max)
    })
    .collect();
    let mut sorted = listed.clone();
    sorted.sort();
    let mut expected_sorted = expected;
    expected_sorted.sort();
    assert_eq!(sorted, expected_sorted);
    assert!(listed.contains(&(ApiKey::DescribeQuorum.key(), 0, 3)));
    // A broker API on a controller is not served: the connection closes, as Kafka does.
    let mut other = controller(&cluster, 3001).await;
    assert!(other.closed_after(12, MetadataRequest::default()).await);

    // DescribeCluster, controller endpoints (what --bootstrap-controller asks), from any
    // controller: all three, the leader as controller id, the brokers' cluster id.
    let mut follower = controller(&cluster, 3002).await;
    for client in [&mut leader, &mut follower] {
        let Response::DescribeCluster(body) = client
            .call(1, DescribeClusterRequest::default().with_endpoint_type(2))
            .await
        else {
            panic!("not DescribeCluster")
        };
        assert_eq!((body.error_code, body.endpoint_type), (0, 2));
        assert_eq!(body.controller_id, 3000);
        assert_eq!(body.cluster_id.as_str(), cluster.shared().cluster_id);
        let listed: Vec<(i32, u16)> = body
            .brokers
            .iter()
            .map(|b| (b.broker_id, b.port as u16))
            .collect();
        let expected: Vec<(i32, u16)> = cluster
            .controllers()
            .iter()
            .map(|c| (c.node_id, c.address.port()))
            .collect();
        assert_eq!(listed, expected);
        let Response::DescribeCluster(body) = client
            .call(1, DescribeClusterRequest::default().with_endpoint_type(1))
            .await
        else {
            panic!("not DescribeCluster")
        };
        assert_eq!(body.error_code, ErrorCode::MISMATCHED_ENDPOINT_TYPE.code());
    }
    // A broker forwards DescribeQuorum to the leader (v0-v2: the provisional v3 is not
    // listed on brokers), and refuses controller endpoints.
    let mut broker = Client::connect(cluster.brokers()[0].address, "t").await;
    let Response::DescribeCluster(body) = broker
        .call(1, DescribeClusterRequest::default().with_endpoint_type(2))
        .await
    else {
        panic!("not DescribeCluster")
    };
    assert_eq!(body.error_code, ErrorCode::MISMATCHED_ENDPOINT_TYPE.code());
    let Response::DescribeQuorum(forwarded) = broker.call(2, describe_quorum_request()).await
    else {
        panic!("not DescribeQuorum")
    };
    assert_eq!(forwarded.topics[0].partitions[0].leader_id, 3000);
    assert!(broker.closed_after(3, describe_quorum_request()).await);
    // A broker names a live broker as the controller, as a KRaft broker does (never a
    // controller, which clients cannot reach through it): 0, then 1 once 0 is stopped.
    let mut second = Client::connect(cluster.brokers()[1].address, "t").await;
    for (stopped, named) in [(false, 0), (true, 1)] {
        if stopped {
            cluster.control().stop_broker(0).unwrap();
        }
        let Response::Metadata(body) = second.call(12, MetadataRequest::default()).await else {
            panic!("not Metadata")
        };
        assert_eq!(body.controller_id, named);
        let Response::DescribeCluster(body) = second
            .call(1, DescribeClusterRequest::default().with_endpoint_type(1))
            .await
        else {
            panic!("not DescribeCluster")
        };
        assert_eq!(body.controller_id, named);
    }

    // DescribeQuorum at every version from the leader: the three voters, the brokers as
    // observers, a known high watermark; v3 adds the committed voters, the same three.
    for version in 0..=3 {
        let response = describe_quorum(&mut leader, version).await;
        let partition = &response.topics[0].partitions[0];
        assert_eq!(partition.error_code, 0, "v{version}");
        assert_eq!(partition.leader_id, 3000);
        assert_eq!(partition.leader_epoch, 1);
        assert!(partition.high_watermark > 0, "v{version}");
        assert_eq!(ids(&partition.current_voters), [3000, 3001, 3002]);
        let mut observers = ids(&partition.observers);
        observers.sort();
        assert_eq!(observers, [0, 1]);
        let committed = partition.committed_voters.as_deref().map(ids);
        if version == 3 {
            assert_eq!(committed, Some(vec![3000, 3001, 3002]));
        } else {
            assert_eq!(committed, None);
        }
        if version >= 2 {
            let mut nodes: Vec<(i32, u16)> = response
                .nodes
                .iter()
                .map(|n| (n.node_id, n.listeners[0].port))
                .collect();
            nodes.sort();
            let expected: Vec<(i32, u16)> = cluster
                .controllers()
                .iter()
                .map(|c| (c.node_id, c.address.port()))
                .collect();
            assert_eq!(nodes, expected);
        }
    }
    // A follower: NOT_LEADER_OR_FOLLOWER on the partition, as Kafka's followers answer.
    let response = describe_quorum(&mut follower, 2).await;
    assert_eq!(
        response.topics[0].partitions[0].error_code,
        ErrorCode::NOT_LEADER_OR_FOLLOWER.code()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn voter_changes_over_the_wire_are_answered_once_committed() {
    let cluster = cluster(1, 3).await;
    let quorum = cluster.control();
    let mut leader = controller(&cluster, 3000).await;
    let key = |id: i32| quorum.quorum_key(id).expect("a controller");
    let remove = |id: i32, directory: Uuid| {
        RemoveRaftVoterRequest::default()
            .with_cluster_id(None)
            .with_voter_id(id)
            .with_voter_directory_id(directory)
    };
    // A follower refuses: NOT_LEADER_OR_FOLLOWER.
    let mut follower = controller(&cluster, 3001).await;
    let Response::RemoveRaftVoter(body) = follower.call(0, remove(3002, key(3002))).await else {
        panic!("not RemoveRaftVoter")
    };
    assert_eq!(body.error_code, ErrorCode::NOT_LEADER_OR_FOLLOWER.code());
    // The wrong directory: VOTER_NOT_FOUND, at once.
    let Response::RemoveRaftVoter(body) = leader
        .call(0, remove(3002, Uuid::from_bytes([7; 16])))
        .await
    else {
        panic!("not RemoveRaftVoter")
    };
    assert_eq!(body.error_code, ErrorCode::VOTER_NOT_FOUND.code());
    // The right key: answered NONE once committed, and then the committed set has it too.
    let Response::RemoveRaftVoter(body) = leader.call(0, remove(3002, key(3002))).await else {
        panic!("not RemoveRaftVoter")
    };
    assert_eq!((body.error_code, body.error_message), (0, None));
    assert_eq!(
        voters(&mut leader).await,
        (vec![3000, 3001], Some(vec![3000, 3001]))
    );
    // Added back, as `kafka-metadata-quorum add-controller` sends it (it keeps fetching as
    // an observer, so it is caught up).
    let add = AddRaftVoterRequest::default()
        .with_cluster_id(Some(cluster.shared().cluster_id.as_str().into()))
        .with_timeout_ms(30_000)
        .with_voter_id(3002)
        .with_voter_directory_id(key(3002))
        .with_listeners(vec![Listener::default()
            .with_name("CONTROLLER".into())
            .with_host("127.0.0.1".into())
            .with_port(cluster.controllers()[2].address.port())]);
    let Response::AddRaftVoter(body) = leader.call(0, add.clone()).await else {
        panic!("not AddRaftVoter")
    };
    assert_eq!((body.error_code, body.error_message), (0, None));
    assert_eq!(
        voters(&mut leader).await,
        (vec![3000, 3001, 3002], Some(vec![3000, 3001, 3002]))
    );
    // Again: DUPLICATE_VOTER.
    let Response::AddRaftVoter(body) = leader.call(0, add).await else {
        panic!("not AddRaftVoter")
    };
    assert_eq!(body.error_code, ErrorCode::DUPLICATE_VOTER.code());
    // The leader removes itself: once committed it resigns, 3001 leads epoch 2, and every
    // controller's DescribeCluster names the new leader.
    let Response::RemoveRaftVoter(body) = leader.call(0, remove(3000, key(3000))).await else {
        panic!("not RemoveRaftVoter")
    };
    assert_eq!(body.error_code, 0);
    let view = quorum.quorum().expect("controllers");
    assert_eq!((view.leader, view.epoch), (3001, 2));
    let Response::DescribeCluster(body) = leader
        .call(1, DescribeClusterRequest::default().with_endpoint_type(2))
        .await
    else {
        panic!("not DescribeCluster")
    };
    assert_eq!(body.controller_id, 3001);
    let response = describe_quorum(&mut leader, 2).await;
    assert_eq!(
        response.topics[0].partitions[0].error_code,
        ErrorCode::NOT_LEADER_OR_FOLLOWER.code()
    );
    let mut new_leader = controller(&cluster, 3001).await;
    let response = describe_quorum(&mut new_leader, 2).await;
    assert_eq!(response.topics[0].partitions[0].leader_id, 3001);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_voter_change_from_the_control_surface_is_current_first_then_committed() {
    let cluster = cluster(1, 3).await;
    let control = cluster.control();
    let mut leader = controller(&cluster, 3000).await;
    // Hold the followers: the high watermark stands still.
    control.set_quorum_fetching(false).unwrap();
    let offset = control.remove_voter(3002).expect("accepted");
    assert!(offset > 0);
    assert_eq!(
        voters(&mut leader).await,
        (vec![3000, 3001], Some(vec![3000, 3001, 3002]))
    );
    // A second change before the first commits: refused, as the leader refuses it.
    match control.add_voter(3002) {
        Err(OperationError::VoterChangeRefused(why)) => {
            assert!(why.contains("REQUEST_TIMED_OUT"), "{why}")
        }
        other => panic!("not refused: {other:?}"),
    }
    // One fetch by 3001 reports what it had before the change: still uncommitted.
    control.quorum_fetch(3001).unwrap();
    assert_eq!(voters(&mut leader).await.1, Some(vec![3000, 3001, 3002]));
    // Its second fetch acknowledges the record: with the leader, a majority of the new set.
    let view = control.quorum_fetch(3001).unwrap();
    assert!(view.high_watermark.unwrap() > offset);
    assert_eq!(view.committed_voters, Some(vec![3000, 3001]));
    assert_eq!(
        voters(&mut leader).await,
        (vec![3000, 3001], Some(vec![3000, 3001]))
    );
    // Unknown nodes are refused by name.
    assert_eq!(
        control.remove_voter(9),
        Err(OperationError::NoSuchController(9))
    );
    // Controller ids that are not node ids, or a broker's: refused at build.
    for (first, brokers) in [(-1, 1), (i32::MAX, 1), (0, 1)] {
        let built = Cluster::builder()
            .brokers(brokers)
            .controllers(2)
            .first_controller_id(first)
            .build()
            .await;
        assert_eq!(
            built.map(drop).unwrap_err().kind(),
            std::io::ErrorKind::InvalidInput,
            "{first}"
        );
    }
    // Without controllers the broker is the one voter (a combined node) and leads.
    let brokers_only = Cluster::builder().build().await.unwrap();
    let view = brokers_only.control().quorum().unwrap();
    assert_eq!((view.leader, view.current_voters), (0, vec![0]));

    // The same over HTTP: add 3002 back while the followers are held.
    let address = support::serve_control(&cluster).await;
    // 3002 fetches twice as an observer to be caught up.
    for _ in 0..2 {
        let (status, _) = http(address, "POST", "/quorum/fetch", Some(json!({"id": 3002}))).await;
        assert_eq!(status, 200);
    }
    let (status, body) = http(address, "POST", "/quorum/voters", Some(json!({"id": 3002}))).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["currentVoters"], json!([3000, 3001, 3002]));
    assert_eq!(body["committedVoters"], json!([3000, 3001]));
    let (status, body) = http(address, "GET", "/quorum", None).await;
    assert_eq!((status, &body["fetching"]), (200, &json!(false)));
    // Fetching again: the change commits on the followers' timers.
    let (status, _) = http(
        address,
        "PUT",
        "/quorum/fetching",
        Some(json!({"fetching": true})),
    )
    .await;
    assert_eq!(status, 200);
    let mut committed = None;
    for _ in 0..500 {
        let (_, body) = http(address, "GET", "/quorum", None).await;
        if body["committedVoters"] == json!([3000, 3001, 3002]) {
            committed = Some(body);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(committed.is_some(), "the addition never committed");
    // Bad input: 4xx naming it.
    let (status, body) = http(address, "POST", "/quorum/voters", Some(json!({"node": 1}))).await;
    assert_eq!(status, 400);
    assert!(
        body["error"].as_str().unwrap().contains("\"node\""),
        "{body}"
    );
    let (status, _) = http(address, "DELETE", "/quorum/voters/77", None).await;
    assert_eq!(status, 404);
    let (status, body) = http(address, "POST", "/quorum/voters", Some(json!({"id": 3001}))).await;
    assert_eq!(status, 409);
    assert!(
        body["error"].as_str().unwrap().contains("DUPLICATE_VOTER"),
        "{body}"
    );
}

/// The shape `kafka-codec quorum serve` runs: one controller served, the other voters and a
/// spare modelled (no listener, `.invalid` endpoints), a modelled broker observing. The
/// modelled ones fetch and vote, the spare answers the new-voter probe, only the served one
/// is listed by DescribeCluster, and what no request shows reaches the event observer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modelled_controllers_fetch_and_vote_without_a_listener() {
    use kafka_codec_cluster::Event;
    use std::sync::{Arc, Mutex};
    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&events);
    let cluster = Cluster::builder()
        .brokers(0)
        .controllers(1)
        .first_controller_id(1)
        .modelled_controller(2, true)
        .modelled_controller(3, true)
        .modelled_controller(4, false)
        .modelled_broker(100)
        .quorum_fetch_interval(Duration::from_millis(20))
        .on_event(move |event| {
            let line = match event {
                Event::Connection {
                    node_id, message, ..
                } => format!("{node_id}: {message}"),
                Event::Server(message) => format!("server: {message}"),
                Event::Quorum(message) => format!("quorum: {message}"),
            };
            seen.lock().unwrap().push(line);
        })
        .build()
        .await
        .expect("a quorum of one served controller");
    let served = cluster.controllers();
    assert_eq!(served.len(), 1);
    let mut leader = Client::connect(served[0].address, "modelled-test").await;
    let response = describe_quorum(&mut leader, 3).await;
    let partition = &response.topics[0].partitions[0];
    assert_eq!(partition.leader_id, 1);
    assert_eq!(ids(&partition.current_voters), [1, 2, 3]);
    assert_eq!(
        partition.committed_voters.as_deref().map(ids),
        Some(vec![1, 2, 3])
    );
    assert_eq!(ids(&partition.observers), [4, 100]);
    let Response::DescribeCluster(body) = leader
        .call(1, DescribeClusterRequest::default().with_endpoint_type(2))
        .await
    else {
        panic!("not DescribeCluster")
    };
    let listed: Vec<(i32, String, i32)> = body
        .brokers
        .iter()
        .map(|b| (b.broker_id, b.host.to_string(), b.port))
        .collect();
    let port = i32::from(served[0].address.port());
    assert_eq!(listed, [(1, "127.0.0.1".to_owned(), port)]);
    assert_eq!(body.controller_id, 1);

    // The spare joins the voters, as add-controller sends it: the leader's probe reaches the
    // modelled controller, and the change commits through the modelled voters' fetches.
    let four = cluster
        .control()
        .quorum_key(4)
        .expect("a modelled controller");
    let add = AddRaftVoterRequest::default()
        .with_cluster_id(Some(cluster.shared().cluster_id.as_str().into()))
        .with_timeout_ms(30_000)
        .with_voter_id(4)
        .with_voter_directory_id(four)
        .with_listeners(vec![Listener::default()
            .with_name("CONTROLLER".into())
            .with_host("controller-4.invalid".into())
            .with_port(9093)]);
    let Response::AddRaftVoter(body) = leader.call(0, add).await else {
        panic!("not AddRaftVoter")
    };
    assert_eq!((body.error_code, body.error_message), (0, None));
    assert_eq!(
        voters(&mut leader).await,
        (vec![1, 2, 3, 4], Some(vec![1, 2, 3, 4]))
    );
    // The commit was told as a quorum event; a connection sending garbage is told too.
    assert!(
        events
            .lock()
            .unwrap()
            .iter()
            .any(|e| e.starts_with("quorum: ") && e.ends_with("committed voters now {1, 2, 3, 4}")),
        "{:?}",
        events.lock().unwrap()
    );
    let mut garbage = tokio::net::TcpStream::connect(served[0].address)
        .await
        .unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut garbage, &[0, 0, 0, 6, 0x7f, 0x7f, 0, 0, 0, 0])
        .await
        .unwrap();
    let mut rest = Vec::new();
    let _ = tokio::io::AsyncReadExt::read_to_end(&mut garbage, &mut rest).await;
    assert!(rest.is_empty(), "no answer to garbage");
    let told = events.lock().unwrap().clone();
    assert!(
        told.iter()
            .any(|e| e.starts_with("1: closing the connection: ")),
        "{told:?}"
    );

    // Ids taken twice, or modelled members with no served controller to lead them: refused.
    for builder in [
        Cluster::builder()
            .controllers(1)
            .first_controller_id(1)
            .modelled_controller(1, true),
        Cluster::builder().controllers(1).modelled_broker(0),
        Cluster::builder().brokers(1).modelled_controller(5, true),
    ] {
        let error = builder.build().await.expect_err("refused");
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput, "{error}");
    }
}
