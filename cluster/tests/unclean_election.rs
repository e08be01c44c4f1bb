//! The controller's periodic unclean leader election (issue 30), on the paused clock: Kafka
//! 4.4's controller elects nothing as `unclean.leader.election.enable` is set (its
//! documentation says to wait for the periodic task or run an unclean ElectLeaders); its task
//! `electUnclean` runs every `unclean.leader.election.interval.ms` (5 minutes) from the
//! controller's activation and elects the leaderless partitions then. The states expected
//! are Kafka 4.4's `PartitionChangeBuilder`'s for the trace `scenario 0,1,2,3 1 0 1 0,1,2`,
//! `fence 2`, `fence 1`, `fence 0`, `unfence 1`, `unclean 1`, `elect_unclean`
//! (`tools/elr-reference`).

mod support;

use kafka_codec::messages::create_topics_request::CreatableTopic;
use kafka_codec::messages::describe_topic_partitions_request::TopicRequest;
use kafka_codec::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_codec::messages::{
    CreateTopicsRequest, DescribeTopicPartitionsRequest, IncrementalAlterConfigsRequest,
};
use kafka_codec::Response;
use kafka_codec_cluster::Cluster;
use std::time::Duration;
use support::pipe::{paused, PipeClient as Client};

/// Leader, epoch, ISR, ELR, last known ELR.
type Shown = (i32, i32, Vec<i32>, Vec<i32>, Vec<i32>);

async fn describe(client: &mut Client) -> Shown {
    let request = DescribeTopicPartitionsRequest::default()
        .with_topics(vec![TopicRequest::default().with_name("e".into())])
        .with_response_partition_limit(10);
    let Response::DescribeTopicPartitions(described) = client.call(0, request).await else {
        panic!("not DescribeTopicPartitions")
    };
    let p = &described.topics[0].partitions[0];
    let list = |list: &Option<kafka_codec::wire::PrimitiveArray<i32>>| -> Vec<i32> {
        list.as_ref().expect("a list").iter().collect()
    };
    (
        p.leader_id,
        p.leader_epoch,
        p.isr_nodes.iter().collect(),
        list(&p.eligible_leader_replicas),
        list(&p.last_known_elr),
    )
}

#[test]
fn leaderless_partitions_are_elected_uncleanly_by_the_periodic_task() {
    paused().block_on(async {
        let start = tokio::time::Instant::now();
        let cluster = Cluster::builder()
            .brokers(4)
            .in_memory()
            .seed(30)
            .idle_timeout(None)
            .build()
            .await
            .expect("cluster");
        let control = cluster.control();
        let mut client = Client::connect(&cluster, 3);
        let request = CreateTopicsRequest::default().with_topics(vec![CreatableTopic::default()
            .with_name("e".into())
            .with_num_partitions(1)
            .with_replication_factor(3)]);
        let Response::CreateTopics(created) = client.call(5, request).await else {
            panic!("not CreateTopics")
        };
        assert_eq!(created.topics[0].error_code, 0);
        for node in [2, 1, 0] {
            control.stop_broker(node).expect("stop");
            control.fence_broker(node).expect("fence");
        }
        assert_eq!(
            describe(&mut client).await,
            (-1, 1, vec![], vec![0], vec![0])
        );
        // 1 back: not eligible, nothing elected.
        control.restart_broker(1).expect("restart");
        assert_eq!(
            describe(&mut client).await,
            (-1, 1, vec![], vec![0], vec![0])
        );
        let request = IncrementalAlterConfigsRequest::default().with_resources(vec![
            AlterConfigsResource::default()
                .with_resource_type(2)
                .with_resource_name("e".into())
                .with_configs(vec![AlterableConfig::default()
                    .with_name("unclean.leader.election.enable".into())
                    .with_config_operation(0)
                    .with_value(Some("true".into()))]),
        ]);
        let Response::IncrementalAlterConfigs(altered) = client.call(1, request).await else {
            panic!("not IncrementalAlterConfigs")
        };
        assert_eq!(altered.responses[0].error_code, 0);
        // Set: nothing elected until the task runs, 5 minutes after the start.
        tokio::time::sleep_until(start + Duration::from_millis(299_900)).await;
        assert_eq!(
            describe(&mut client).await,
            (-1, 1, vec![], vec![0], vec![0])
        );
        tokio::time::sleep_until(start + Duration::from_millis(300_100)).await;
        assert_eq!(describe(&mut client).await, (1, 2, vec![1], vec![], vec![]));
        // Running it by hand finds nothing more to elect.
        assert!(control.elect_unclean_leaders().is_empty());
    });
}

/// `POST /leaders/unclean` runs the task now.
#[test]
fn the_periodic_unclean_election_runs_over_http() {
    paused().block_on(async {
        let cluster = Cluster::builder()
            .brokers(2)
            .in_memory()
            .seed(30)
            .idle_timeout(None)
            .build()
            .await
            .expect("cluster");
        let control = cluster.control();
        let mut client = Client::connect(&cluster, 1);
        let request = CreateTopicsRequest::default().with_topics(vec![CreatableTopic::default()
            .with_name("e".into())
            .with_num_partitions(1)
            .with_replication_factor(2)]);
        let Response::CreateTopics(created) = client.call(5, request).await else {
            panic!("not CreateTopics")
        };
        assert_eq!(created.topics[0].error_code, 0);
        let http = support::serve_control(&cluster).await;
        let (status, answer) = support::http(http, "POST", "/leaders/unclean", None).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["electedLeaders"], kafka_codec::serde_json::json!([]));
        let (status, _) = support::http(http, "GET", "/leaders/unclean", None).await;
        assert_eq!(status, 405);
        drop(control);
    });
}
