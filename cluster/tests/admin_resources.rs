//! AlterReplicaLogDirs and ListConfigResources.
//!
//! AlterReplicaLogDirs as Kafka 4.4's `ReplicaManager.alterReplicaLogDirs` answers a broker
//! with one log directory (`in-memory` here): another directory LOG_DIR_NOT_FOUND, a
//! partition not held UNKNOWN_TOPIC_OR_PARTITION, one without a replica here
//! REPLICA_NOT_AVAILABLE, a replica already there NONE.
//!
//! ListConfigResources as Kafka 4.4's `KafkaApis.handleListConfigResources` answers: v0
//! (ListClientMetricsResources) lists client metrics resources only (none here); v1 the
//! types asked for, or every type it knows, in Kafka's order (groups with configs, broker
//! loggers, brokers, topics); a type it does not know: UNSUPPORTED_VERSION, nothing listed.

use crate::support;

use kafka_codec::messages::alter_replica_log_dirs_request::{
    AlterReplicaLogDir, AlterReplicaLogDirTopic,
};
use kafka_codec::messages::{AlterReplicaLogDirsRequest, ListConfigResourcesRequest};
use kafka_codec::{ErrorCode, Response};
use kafka_codec_cluster::Cluster;
use std::collections::BTreeMap;
use support::pipe::{paused, PipeClient as Client};

async fn list(client: &mut Client, version: i16, types: &[i8]) -> (i16, Vec<(String, i8)>) {
    let request = ListConfigResourcesRequest::default().with_resource_types(types.to_vec().into());
    let Response::ListConfigResources(listed) = client.call(version, request).await else {
        panic!("not ListConfigResources")
    };
    let resources = listed
        .config_resources
        .iter()
        .map(|r| (r.resource_name.to_string(), r.resource_type))
        .collect();
    (listed.error_code, resources)
}

fn named(entries: &[(&str, i8)]) -> Vec<(String, i8)> {
    entries.iter().map(|(n, t)| ((*n).to_owned(), *t)).collect()
}

#[test]
fn resources_by_type_as_kafka_lists_them() {
    paused().block_on(async {
        let cluster = Cluster::builder()
            .brokers(2)
            .in_memory()
            .idle_timeout(None)
            .build()
            .await
            .expect("cluster");
        {
            let mut state = cluster.shared().state();
            state.add_topic("b", 1, 1);
            state.add_topic("a", 1, 1);
            let props =
                BTreeMap::from([("consumer.session.timeout.ms".to_owned(), "50000".to_owned())]);
            state.configs.groups.insert("g".to_owned(), props);
        }
        let mut client = Client::connect(&cluster, 0);
        // v0: client metrics resources only, of which the cluster has none.
        assert_eq!(list(&mut client, 0, &[]).await, (0, vec![]));
        assert_eq!(
            list(&mut client, 1, &[]).await,
            (
                0,
                named(&[
                    ("g", 32),
                    ("0", 8),
                    ("1", 8),
                    ("0", 4),
                    ("1", 4),
                    ("a", 2),
                    ("b", 2)
                ])
            )
        );
        assert_eq!(
            list(&mut client, 1, &[2, 16]).await,
            (0, named(&[("a", 2), ("b", 2)]))
        );
        // An unknown type refuses the whole request.
        assert_eq!(
            list(&mut client, 1, &[2, 1]).await,
            (ErrorCode::UNSUPPORTED_VERSION.code(), vec![])
        );
    });
}

/// (topic, partition, error code) of AlterReplicaLogDirs for `dirs`: (path, topic, partitions).
async fn alter_dirs(
    client: &mut Client,
    version: i16,
    dirs: &[(&str, &str, &[i32])],
) -> Vec<(String, i32, i16)> {
    let dirs = dirs
        .iter()
        .map(|(path, topic, partitions)| {
            AlterReplicaLogDir::default()
                .with_path((*path).into())
                .with_topics(vec![AlterReplicaLogDirTopic::default()
                    .with_name((*topic).into())
                    .with_partitions(partitions.to_vec().into())])
        })
        .collect();
    let request = AlterReplicaLogDirsRequest::default().with_dirs(dirs);
    let Response::AlterReplicaLogDirs(answer) = client.call(version, request).await else {
        panic!("not AlterReplicaLogDirs")
    };
    answer
        .results
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| (t.topic_name.to_string(), p.partition_index, p.error_code))
        })
        .collect()
}

#[test]
fn replica_log_dirs_as_a_broker_with_one_dir_answers() {
    paused().block_on(async {
        let cluster = Cluster::builder()
            .brokers(3)
            .in_memory()
            .idle_timeout(None)
            .build()
            .await
            .expect("cluster");
        // "t": partition p on broker p alone.
        cluster.shared().state().add_topic("t", 3, 1);
        let mut client = Client::connect(&cluster, 1);
        let long = "x".repeat(214);
        let answer = alter_dirs(
            &mut client,
            2,
            &[
                ("in-memory", "t", &[1, 0, 9]),
                ("/var/lib/kafka", "t", &[2]),
                ("in-memory", "gone", &[0]),
                ("in-memory", &long, &[0]),
            ],
        )
        .await;
        let code = |e: ErrorCode| e.code();
        assert_eq!(
            answer,
            [
                ("t".to_owned(), 1, 0),
                ("t".to_owned(), 0, code(ErrorCode::REPLICA_NOT_AVAILABLE)),
                (
                    "t".to_owned(),
                    9,
                    code(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION)
                ),
                ("t".to_owned(), 2, code(ErrorCode::LOG_DIR_NOT_FOUND)),
                (
                    "gone".to_owned(),
                    0,
                    code(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION)
                ),
                (long.clone(), 0, code(ErrorCode::INVALID_TOPIC_EXCEPTION)),
            ]
        );
        // A name one byte shorter fits a future log directory's 255 bytes.
        let fits = "x".repeat(213);
        assert_eq!(
            alter_dirs(&mut client, 1, &[("in-memory", &fits, &[0])]).await,
            [(fits.clone(), 0, code(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION))]
        );
    });
}
