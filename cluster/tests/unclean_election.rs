//! The controller's periodic unclean leader election (issue 30), on the paused clock: Kafka
//! 4.4's controller elects nothing as `unclean.leader.election.enable` is set (its
//! documentation says to wait for the periodic task or run an unclean ElectLeaders); its task
//! `electUnclean` runs every `unclean.leader.election.interval.ms` (5 minutes) from the
//! controller's activation and elects the leaderless partitions then. The states expected
//! are Kafka 4.4's `PartitionChangeBuilder`'s for the trace `scenario 0,1,2,3 1 0 1 0,1,2`,
//! `fence 2`, `fence 1`, `fence 0`, `unfence 1`, `unclean 1`, `elect_unclean`
//! (`tools/elr-reference`).

use crate::support;

use kafka_codec::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_codec::messages::IncrementalAlterConfigsRequest;
use kafka_codec::Response;
use std::time::Duration;
use support::pipe::{paused, paused_cluster, PipeClient as Client};

/// Leader, epoch, ISR, ELR, last known ELR.
type Shown = support::ElrState;

async fn describe(client: &mut Client) -> Shown {
    support::elr_state(client, "e").await
}

#[test]
fn leaderless_partitions_are_elected_uncleanly_by_the_periodic_task() {
    paused().block_on(async {
        let start = tokio::time::Instant::now();
        let cluster = paused_cluster(4, 30).build().await.expect("cluster");
        let control = cluster.control();
        let mut client = Client::connect(&cluster, 3);
        support::make_topic(&mut client, 5, "e", 1, 3).await;
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
        let cluster = paused_cluster(2, 30).build().await.expect("cluster");
        let control = cluster.control();
        let mut client = Client::connect(&cluster, 1);
        support::make_topic(&mut client, 5, "e", 1, 2).await;
        let http = support::serve_control(&cluster).await;
        let (status, answer) = support::http(http, "POST", "/leaders/unclean", None).await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["electedLeaders"], kafka_codec::serde_json::json!([]));
        let (status, _) = support::http(http, "GET", "/leaders/unclean", None).await;
        assert_eq!(status, 405);
        drop(control);
    });
}
