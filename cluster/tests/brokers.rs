//! Adding and removing brokers at run time, in process and over the HTTP control, through
//! this crate's own client connection: what Metadata, DescribeCluster, FindCoordinator,
//! Produce and Fetch answer before and after.

use crate::support;

use kafka_codec::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_codec::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_codec::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kafka_codec::messages::{
    DescribeClusterRequest, FetchRequest, FindCoordinatorRequest, MetadataRequest,
    MetadataResponse, OffsetCommitRequest, OffsetFetchRequest,
};
use kafka_codec::records::BatchReader;
use kafka_codec::serde_json::json;
use kafka_codec::{ErrorCode, Response};
use kafka_codec_cluster::control::OperationError;
use kafka_codec_cluster::groups::coordinator;
use kafka_codec_cluster::Cluster;
use std::net::SocketAddr;
use std::time::Duration;
use support::{batch, http, produce, Client, Outcome, GUARD};
use tokio::net::TcpStream;

async fn cluster_with_topic(brokers: usize, partitions: i32) -> Cluster {
    support::cluster_with_topic(brokers, partitions, "brokers-test").await
}

async fn metadata(client: &mut Client) -> MetadataResponse {
    let request = MetadataRequest::default().with_topics(None);
    match client.call(12, request).await {
        Response::Metadata(body) => body,
        other => panic!("not Metadata: {other:?}"),
    }
}

fn listed(metadata: &MetadataResponse) -> Vec<(i32, u16)> {
    metadata
        .brokers
        .iter()
        .map(|broker| (broker.node_id, broker.port as u16))
        .collect()
}

/// Leader, epoch and replicas of `events`' partition `index`.
fn partition(metadata: &MetadataResponse, index: i32) -> (i32, i32, Vec<i32>) {
    let topic = metadata
        .topics
        .iter()
        .find(|t| t.name.as_deref() == Some("events"))
        .expect("events listed");
    let partition = &topic.partitions[index as usize];
    (
        partition.leader_id,
        partition.leader_epoch,
        partition.replica_nodes.iter().collect(),
    )
}

fn fetch(partition: i32, epoch: i32) -> FetchRequest {
    FetchRequest::default()
        .with_max_wait_ms(0)
        .with_max_bytes(1 << 20)
        .with_topics(vec![FetchTopic::default()
            .with_topic("events".into())
            .with_partitions(vec![FetchPartition::default()
                .with_partition(partition)
                .with_current_leader_epoch(epoch)
                .with_fetch_offset(0)
                .with_partition_max_bytes(1 << 20)])])
}

fn fetched(response: &Response) -> (i16, usize) {
    let Response::Fetch(fetched) = response else {
        panic!("not Fetch: {response:?}")
    };
    let partition = &fetched.responses[0].partitions[0];
    let records = partition.records.clone().unwrap_or_default();
    (partition.error_code, BatchReader::new(records).count())
}

fn produce_error(response: &Response) -> i16 {
    let Response::Produce(produced) = response else {
        panic!("not Produce: {response:?}")
    };
    produced.responses[0].partition_responses[0].error_code
}

async fn find_coordinator(client: &mut Client, group: &str) -> (i16, i32, i32) {
    let request = FindCoordinatorRequest::default().with_key(group.into());
    let Response::FindCoordinator(found) = client.call(3, request).await else {
        panic!("not FindCoordinator")
    };
    (found.error_code, found.node_id, found.port)
}

/// Waits (under the hang guard) until `address` refuses connections.
async fn refused(address: SocketAddr) {
    tokio::time::timeout(GUARD, async {
        while TcpStream::connect(address).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("connections refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_added_broker_is_listed_serves_and_leads_what_is_moved_to_it() {
    let cluster = cluster_with_topic(3, 3).await;
    let control = cluster.control();
    let mut client = Client::connect(cluster.brokers()[0].address, "brokers-test").await;
    let before = metadata(&mut client).await;

    let added = cluster.add_broker(None).expect("added");
    assert_eq!(added.node_id, 3);
    let after = metadata(&mut client).await;
    let mut expected = listed(&before);
    expected.push((3, added.address.port()));
    assert_eq!(listed(&after), expected);
    // Nothing moved to it by itself: every partition keeps its leader and epoch.
    for index in 0..3 {
        assert_eq!(partition(&after, index), partition(&before, index));
    }
    let Response::DescribeCluster(described) =
        client.call(0, DescribeClusterRequest::default()).await
    else {
        panic!("not DescribeCluster")
    };
    let ids: Vec<i32> = described.brokers.iter().map(|b| b.broker_id).collect();
    assert_eq!(ids, [0, 1, 2, 3]);

    // It serves, and leads a partition moved to it, at the next epoch.
    assert_eq!(control.move_leader("events", 0, 3), Ok(1));
    let mut to_new = Client::connect(added.address, "brokers-test").await;
    assert_eq!(
        produce_error(&to_new.call(9, produce("events", 0, batch(0, 2))).await),
        0
    );
    assert_eq!(fetched(&to_new.call(12, fetch(0, 1)).await), (0, 1));
    // Added to its replicas, first, as Kafka's reassignment to it adds it.
    let (old_leader, _, _) = partition(&before, 0);
    let (leader, epoch, replicas) = partition(&metadata(&mut to_new).await, 0);
    assert_eq!((leader, epoch, replicas), (3, 1, vec![3, old_leader]));

    // Over HTTP, on a port given: a free one, found by binding and letting go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let http_control = support::serve_control(&cluster).await;
    let (status, answer) = http(
        http_control,
        "POST",
        "/brokers",
        Some(json!({"port": port})),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["id"], 4);
    assert_eq!(answer["address"], format!("127.0.0.1:{port}"));
    Client::connect(SocketAddr::from(([127, 0, 0, 1], port)), "brokers-test").await;
    // The same port again is taken: refused, naming it.
    let (status, answer) = http(
        http_control,
        "POST",
        "/brokers",
        Some(json!({"port": port})),
    )
    .await;
    assert_eq!(status, 409, "{answer}");
    assert!(answer["error"]
        .as_str()
        .unwrap()
        .contains(&port.to_string()));
    let (status, answer) = http(http_control, "POST", "/brokers", Some(json!({"prot": 1}))).await;
    assert_eq!(status, 400);
    assert!(
        answer["error"].as_str().unwrap().contains("\"prot\""),
        "{answer}"
    );
    let (status, answer) = http(
        http_control,
        "POST",
        "/brokers",
        Some(json!({"port": 70000})),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    let (status, answer) = http(http_control, "GET", "/brokers", None).await;
    assert_eq!(status, 200);
    let ids: Vec<i64> = answer
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [0, 1, 2, 3, 4]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_reassigned_and_removed_is_gone_and_what_it_led_and_coordinated_moves() {
    let cluster = cluster_with_topic(3, 3).await;
    let control = cluster.control();
    let gone = cluster.brokers()[1].address;
    // A group broker 1 coordinates, with an offset committed there.
    let group = (0..)
        .map(|n| format!("group-{n}"))
        .find(|group| coordinator(group, 3) == 1)
        .unwrap();
    let mut at_one = Client::connect(gone, "brokers-test").await;
    assert_eq!(
        produce_error(&at_one.call(9, produce("events", 1, batch(0, 3))).await),
        0
    );
    let commit = OffsetCommitRequest::default()
        .with_group_id(group.as_str().into())
        .with_generation_id_or_member_epoch(-1)
        .with_topics(vec![OffsetCommitRequestTopic::default()
            .with_name("events".into())
            .with_partitions(vec![OffsetCommitRequestPartition::default()
                .with_partition_index(1)
                .with_committed_offset(3)])]);
    let Response::OffsetCommit(committed) = at_one.call(2, commit).await else {
        panic!("not OffsetCommit")
    };
    assert_eq!(committed.topics[0].partitions[0].error_code, 0);

    let removed = control.reassign_and_remove_broker(1).expect("removed");
    assert_eq!(removed.node_id, 1);
    let [(topic, index, leader)] = &removed.moved_leaders[..] else {
        panic!("one partition moved: {removed:?}")
    };
    assert_eq!((topic.as_str(), *index), ("events", 1));
    assert!([0, 2].contains(leader));
    assert_eq!(removed.moved_groups, std::slice::from_ref(&group));

    // Its connections are dropped and its listener closed.
    assert!(matches!(
        at_one
            .send(12, MetadataRequest::default().with_topics(None), GUARD)
            .await,
        Outcome::Closed
    ));
    refused(gone).await;

    // Metadata lists the others only; its partition has a new leader at the next epoch,
    // and no replica names it.
    let mut client = Client::connect(cluster.brokers()[0].address, "brokers-test").await;
    let now = metadata(&mut client).await;
    let ids: Vec<i32> = listed(&now).iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, [0, 2]);
    assert_eq!(now.controller_id, 0);
    let (new_leader, epoch, replicas) = partition(&now, 1);
    assert_eq!((new_leader, epoch, replicas), (*leader, 1, vec![*leader]));
    // The records are there at the new leader, which fences the old epoch.
    let address = cluster
        .brokers()
        .iter()
        .find(|b| b.node_id == *leader)
        .unwrap()
        .address;
    let mut at_leader = Client::connect(address, "brokers-test").await;
    assert_eq!(
        fetched(&at_leader.call(12, fetch(1, 0)).await).0,
        ErrorCode::FENCED_LEADER_EPOCH.code()
    );
    assert_eq!(fetched(&at_leader.call(12, fetch(1, 1)).await), (0, 1));

    // The group is found at the successor, with its offset.
    let (error, node, port) = find_coordinator(&mut client, &group).await;
    assert_eq!((error, node), (0, removed.successor));
    assert_ne!(node, 1);
    let successor = cluster
        .brokers()
        .iter()
        .find(|b| b.node_id == node)
        .unwrap()
        .address;
    assert_eq!(port, i32::from(successor.port()));
    let mut at_successor = Client::connect(successor, "brokers-test").await;
    let request = OffsetFetchRequest::default()
        .with_group_id(group.as_str().into())
        .with_topics(Some(vec![OffsetFetchRequestTopic::default()
            .with_name("events".into())
            .with_partition_indexes(vec![1].into())]));
    let Response::OffsetFetch(offsets) = at_successor.call(3, request).await else {
        panic!("not OffsetFetch")
    };
    assert_eq!(offsets.topics[0].partitions[0].committed_offset, 3);
    // Every group id is found at a broker still there.
    for n in 0..30 {
        let (error, node, _) = find_coordinator(&mut client, &format!("g{n}")).await;
        assert_eq!(error, 0);
        assert!([0, 2].contains(&node), "g{n} at {node}");
    }

    // A topic created now is led by brokers still there.
    support::make_topic(&mut client, 7, "later", 3, 2).await;
    let now = metadata(&mut client).await;
    let later = now
        .topics
        .iter()
        .find(|t| t.name.as_deref() == Some("later"))
        .unwrap();
    for partition in &later.partitions {
        assert!([0, 2].contains(&partition.leader_id));
        assert!(!partition.replica_nodes.iter().any(|node| node == 1));
        assert_eq!(partition.replica_nodes.len(), 2);
    }

    assert_eq!(
        control.reassign_and_remove_broker(1).unwrap_err(),
        OperationError::NoSuchBroker(1)
    );
    assert!(control.stop_broker(1).is_err());
    // Over HTTP: the next one goes, the last is refused.
    let http_control = support::serve_control(&cluster).await;
    let reassign = "reassign-and-remove";
    let (status, answer) = http(
        http_control,
        "POST",
        &format!("/brokers/2/{reassign}"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["successor"], 0);
    let (status, answer) = http(
        http_control,
        "POST",
        &format!("/brokers/0/{reassign}"),
        None,
    )
    .await;
    assert_eq!(status, 409, "{answer}");
    assert!(
        answer["error"].as_str().unwrap().contains("last broker"),
        "{answer}"
    );
    let (status, _) = http(
        http_control,
        "POST",
        &format!("/brokers/7/{reassign}"),
        None,
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = http(http_control, "GET", &format!("/brokers/0/{reassign}"), None).await;
    assert_eq!(status, 405);
    // Everything is led by the one left: broker 1's share went to 2, then 2's to 0.
    let now = metadata(&mut client).await;
    for index in 0..3 {
        assert_eq!(partition(&now, index).0, 0);
    }
    let leaders: Vec<i32> = now
        .topics
        .iter()
        .find(|t| t.name.as_deref() == Some("later"))
        .unwrap()
        .partitions
        .iter()
        .map(|p| p.leader_id)
        .collect();
    assert_eq!(leaders, [0, 0, 0]);
    let (error, node, _) = find_coordinator(&mut client, &group).await;
    assert_eq!((error, node), (0, 0));
}

async fn describe_quorum(
    address: SocketAddr,
) -> kafka_codec::messages::describe_quorum_response::PartitionData {
    use kafka_codec::messages::describe_quorum_request::{PartitionData, TopicData};
    let request = kafka_codec::messages::DescribeQuorumRequest::default().with_topics(vec![
        TopicData::default()
            .with_topic_name("__cluster_metadata".into())
            .with_partitions(vec![PartitionData::default().with_partition_index(0)]),
    ]);
    let mut client = Client::connect(address, "brokers-test").await;
    match client.call(2, request).await {
        Response::DescribeQuorum(body) => body.topics[0].partitions[0].clone(),
        other => panic!("not DescribeQuorum: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_controller_stops_voting_and_a_stopped_leader_is_replaced() {
    let cluster = Cluster::builder()
        .brokers(1)
        .controllers(3)
        .quorum_fetch_interval(Duration::from_millis(20))
        .build()
        .await
        .expect("cluster");
    let control = cluster.control();
    let address = |id: i32| {
        cluster
            .controllers()
            .iter()
            .find(|c| c.node_id == id)
            .unwrap()
            .address
    };
    // Fetches by hand only, so that each step is the test's.
    control.set_quorum_fetching(false).unwrap();
    control.stop_broker(3002).unwrap();
    assert_eq!(
        control.quorum_fetch(3002).unwrap_err(),
        OperationError::Stopped(3002)
    );
    // The leader and one follower are a majority: the high watermark moves with them (to
    // at least the log end before the fetches; the leader's timed no-op appends may add).
    let before = control.quorum().unwrap().log_end_offset;
    control.quorum_fetch(3001).unwrap();
    let view = control.quorum_fetch(3001).unwrap();
    assert_eq!((view.leader, view.epoch), (3000, 1));
    assert!(
        view.high_watermark.is_some_and(|hw| hw >= before),
        "{view:?}"
    );

    // The leader stops too: one voter of three runs, no majority, no election.
    let http_control = support::serve_control(&cluster).await;
    let (status, answer) = http(http_control, "POST", "/brokers/3000/stop", None).await;
    assert_eq!(status, 200, "{answer}");
    let view = control.quorum().unwrap();
    assert_eq!((view.leader, view.epoch), (3000, 1));
    // 3002 restarts: two of three run, and the first of them leads the next epoch.
    control.restart_broker(3002).unwrap();
    let view = control.quorum().unwrap();
    assert_eq!((view.leader, view.epoch), (3001, 2));
    assert_eq!(view.current_voters, [3000, 3001, 3002]);
    // Nobody fetched in its epoch yet: it does not know the high watermark.
    assert_eq!(view.high_watermark, None);
    let elected_at = view.log_end_offset;
    refused(address(3000)).await;
    let quorum = describe_quorum(address(3001)).await;
    assert_eq!(quorum.error_code, 0);
    assert_eq!((quorum.leader_id, quorum.leader_epoch), (3001, 2));
    // The new leader learns the high watermark once a majority fetched in its epoch.
    control.quorum_fetch(3002).unwrap();
    let view = control.quorum_fetch(3002).unwrap();
    assert!(
        view.high_watermark.is_some_and(|hw| hw >= elected_at),
        "{view:?}"
    );
    // The old leader restarts as a follower and catches up.
    control.restart_broker(3000).unwrap();
    control.quorum_fetch(3000).unwrap();
    control.quorum_fetch(3000).unwrap();
    let quorum = describe_quorum(address(3001)).await;
    assert_eq!((quorum.leader_id, quorum.leader_epoch), (3001, 2));
    let voter_3000 = quorum
        .current_voters
        .iter()
        .find(|v| v.replica_id == 3000)
        .unwrap();
    assert!(voter_3000.log_end_offset >= elected_at, "{quorum:?}");
    // Stopping a follower elects nobody.
    control.stop_broker(3002).unwrap();
    assert_eq!(control.quorum().unwrap().leader, 3001);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_added_broker_observes_the_quorum_and_a_removed_one_stops() {
    let cluster = Cluster::builder()
        .brokers(2)
        .controllers(3)
        .quorum_fetch_interval(Duration::from_millis(20))
        .build()
        .await
        .expect("cluster");
    let control = cluster.control();
    assert_eq!(control.quorum().unwrap().observers, [0, 1]);
    let added = cluster.add_broker(None).expect("added");
    // It fetches on its timer (20-40 ms here): wait for it under the hang guard.
    tokio::time::timeout(GUARD, async {
        while !control.quorum().unwrap().observers.contains(&added.node_id) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the added broker observes the quorum");
    let leader = cluster.controllers()[0].address;
    let quorum = describe_quorum(leader).await;
    let observers: Vec<i32> = quorum.observers.iter().map(|o| o.replica_id).collect();
    assert_eq!(observers, [0, 1, 2]);
    // Removed, it fetches no more: a hand fetch is refused as a stopped node's.
    cluster.remove_broker(added.node_id).expect("removed");
    control.set_quorum_fetching(false).unwrap();
    assert_eq!(
        control.quorum_fetch(added.node_id).unwrap_err(),
        OperationError::Stopped(added.node_id)
    );
    control.quorum_fetch(1).unwrap();
}
