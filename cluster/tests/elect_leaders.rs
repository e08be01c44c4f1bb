//! ElectLeaders through this crate's own client: preferred elections move a moved leader
//! back (bumping the leader epoch), unclean ones are needed only where a partition has no
//! leader, and the per-partition errors are Kafka's (ELECTION_NOT_NEEDED,
//! PREFERRED_LEADER_NOT_AVAILABLE, ELIGIBLE_LEADERS_NOT_AVAILABLE,
//! UNKNOWN_TOPIC_OR_PARTITION); null partitions elect everywhere and list only what moved
//! or failed otherwise.

use crate::support;

use kafka_codec::messages::elect_leaders_request::TopicPartitions;
use kafka_codec::messages::{ElectLeadersRequest, ElectLeadersResponse};
use kafka_codec::{ErrorCode, Response};
use kafka_codec_cluster::Cluster;
use support::Client;

const PREFERRED: i8 = 0;
const UNCLEAN: i8 = 1;

fn elect(election: i8, topics: Option<&[(&str, &[i32])]>) -> ElectLeadersRequest {
    ElectLeadersRequest::default()
        .with_election_type(election)
        .with_topic_partitions(topics.map(|topics| {
            topics
                .iter()
                .map(|(topic, partitions)| {
                    TopicPartitions::default()
                        .with_topic((*topic).into())
                        .with_partitions(partitions.to_vec().into())
                })
                .collect()
        }))
}

async fn call(
    client: &mut Client,
    version: i16,
    request: ElectLeadersRequest,
) -> ElectLeadersResponse {
    match client.call(version, request).await {
        Response::ElectLeaders(response) => response,
        other => panic!("not ElectLeaders: {other:?}"),
    }
}

/// (topic, partition, error code, message) of every result, in order.
fn results(response: &ElectLeadersResponse) -> Vec<(String, i32, i16, Option<String>)> {
    response
        .replica_election_results
        .iter()
        .flat_map(|topic| {
            topic.partition_result.iter().map(|p| {
                (
                    topic.topic.to_string(),
                    p.partition_id,
                    p.error_code,
                    p.error_message.as_ref().map(|m| m.to_string()),
                )
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preferred_and_unclean_elections_as_kafka_answers_them() {
    let cluster = Cluster::builder()
        .brokers(3)
        .build()
        .await
        .expect("cluster");
    let brokers = 3;
    cluster.shared().state().add_topic("e", 3, 3);
    cluster.shared().state().add_topic("single", 3, 1);
    let leader =
        |topic: &str, partition: i32| cluster.shared().state().leader(topic, partition, brokers);
    let mut client = Client::connect(cluster.brokers()[1].address, "elections").await;

    // Partition 0 moved off its preferred replica (broker 0) to broker 1, at epoch 1.
    cluster.control().elect_leader("e", 0, 1).expect("moved");
    let answer = call(
        &mut client,
        2,
        elect(PREFERRED, Some(&[("e", &[0, 1, 7]), ("nope", &[0])])),
    )
    .await;
    assert_eq!(answer.error_code, 0);
    let not_needed = Some("Leader election not needed for topic partition.".to_owned());
    assert_eq!(
        results(&answer),
        vec![
            ("e".into(), 0, 0, None),
            (
                "e".into(),
                1,
                ErrorCode::ELECTION_NOT_NEEDED.code(),
                not_needed.clone()
            ),
            (
                "e".into(),
                7,
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code(),
                Some("No such partition as e-7".into())
            ),
            (
                "nope".into(),
                0,
                ErrorCode::UNKNOWN_TOPIC_OR_PARTITION.code(),
                Some("No such topic as nope".into())
            ),
        ]
    );
    assert_eq!(
        leader("e", 0),
        (0, 2),
        "back on its preferred replica, epoch bumped"
    );

    // Null partitions: every partition; those already led by their preferred replica are
    // left out. Partition 2 of "e" moved to broker 0; its preferred replica, broker 2, is
    // stopped but not fenced yet: elected, as Kafka's controller elects it
    // (tests/elect_leaders_preferred_kafka.rs).
    cluster.control().elect_leader("e", 2, 0).expect("moved");
    cluster.control().stop_broker(2).expect("stopped");
    let everything = call(&mut client, 1, elect(PREFERRED, None)).await;
    assert_eq!(results(&everything), vec![("e".into(), 2, 0, None)]);
    assert_eq!(leader("e", 2), (2, 2));

    // Unclean: a partition with a leader needs none, as on Kafka's controller, even where
    // the leader is the stopped broker 2 that is not fenced yet ("e"-1 moved there, and
    // "single"-2, broker 2's alone).
    cluster.control().elect_leader("e", 1, 2).expect("moved");
    let wanted: &[(&str, &[i32])] = &[("e", &[0, 1]), ("single", &[2])];
    let unclean = call(&mut client, 2, elect(UNCLEAN, Some(wanted))).await;
    let not_needed_at = |topic: &str, partition| {
        (
            topic.to_owned(),
            partition,
            ErrorCode::ELECTION_NOT_NEEDED.code(),
            not_needed.clone(),
        )
    };
    assert_eq!(
        results(&unclean),
        vec![
            not_needed_at("e", 0),
            not_needed_at("e", 1),
            not_needed_at("single", 2)
        ]
    );
    // Fenced, broker 2 hands "e"-1 to its ISR (0); "single"-2 has no leader and no other
    // replica to elect (the unclean elections themselves: tests/elect_leaders_unclean.rs).
    cluster.control().fence_broker(2).expect("fenced");
    let unclean = call(&mut client, 2, elect(UNCLEAN, Some(wanted))).await;
    assert_eq!(
        results(&unclean),
        vec![
            not_needed_at("e", 0),
            not_needed_at("e", 1),
            (
                "single".into(),
                2,
                ErrorCode::ELIGIBLE_LEADERS_NOT_AVAILABLE.code(),
                Some("Eligible topic partition leaders are not available.".into())
            ),
        ]
    );
    assert_eq!(leader("e", 1), (0, 2));
    // Fenced, its preferred partition "e"-2 went to the ISR too, and cannot come back.
    assert_eq!(leader("e", 2).0, 0);
    let fenced = call(&mut client, 1, elect(PREFERRED, Some(&[("e", &[2])]))).await;
    assert_eq!(
        results(&fenced),
        vec![(
            "e".into(),
            2,
            ErrorCode::PREFERRED_LEADER_NOT_AVAILABLE.code(),
            Some("The preferred leader was not available.".into())
        )]
    );

    // v0 (no election type) elects preferred leaders: broker 2 is back and in the ISR again
    // (a follower fetch round after its restart), so "e"-2 returns.
    cluster.control().restart_broker(2).expect("restarted");
    while cluster.control().is_catching_up(2) {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let v0 = call(&mut client, 0, elect(PREFERRED, Some(&[("e", &[2])]))).await;
    assert_eq!(results(&v0), vec![("e".into(), 2, 0, None)]);
    assert_eq!(leader("e", 2), (2, 4));

    // An election type Kafka does not know.
    let unknown = call(&mut client, 2, elect(5, Some(&[("e", &[0])]))).await;
    assert_eq!(unknown.error_code, ErrorCode::INVALID_REQUEST.code());
}
