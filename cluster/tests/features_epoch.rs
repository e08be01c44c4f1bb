//! The finalized-features epoch of ApiVersions v3+, compared with Kafka 4.4.
//! `data/features-epoch-kafka-4.4.txt` holds what a live `tools/kafka-broker/broker.sh` node
//! showed: Kafka's epoch is the offset of the broker's metadata image, so it is above 0,
//! moves while the node is idle (the controller appends a record every half second) and
//! moves on after each applied UpdateFeatures (here `streams.version` down to 0 and back to
//! 1). The values themselves are run-dependent: the lines say how they compare. The plain
//! test asks a cluster of one broker (its epoch is the offset of its quorum's metadata log);
//! the ignored one compares the live node with the file (`KAFKA_CODEC_RECORD=1` rewrites it).

use crate::support;

use kafka_codec::messages::update_features_request::FeatureUpdateKey;
use kafka_codec::messages::{ApiVersionsRequest, UpdateFeaturesRequest};
use kafka_codec::Response;
use std::time::Duration;
use support::{Calls, Client};

/// The recorded answers (`tests/data/`).
const FIXTURE: &str = "features-epoch-kafka-4.4.txt";

/// How long the idle line waits: a little over two of the controller's 500 ms appends.
const IDLE: Duration = Duration::from_millis(1200);

/// ApiVersions v3's finalized epoch and `streams.version`'s finalized level (0 if absent).
async fn epoch(client: &mut impl Calls) -> (i64, i16) {
    // v3+ needs a client software name, or the answer is an error without features.
    let request = ApiVersionsRequest::default()
        .with_client_software_name("kafka-codec".into())
        .with_client_software_version("0".into());
    let Response::ApiVersions(versions) = client.call(3, request).await else {
        panic!("not ApiVersions")
    };
    let level = (versions.finalized_features.iter())
        .find(|f| f.name.as_str() == "streams.version")
        .map_or(0, |f| f.max_version_level);
    (versions.finalized_features_epoch, level)
}

/// Sets `streams.version` to `level` (a safe downgrade to 0, an upgrade to 1); its error
/// code.
async fn set_streams_version(client: &mut impl Calls, level: i16) -> i16 {
    let kind = if level == 0 { 2 } else { 1 };
    let request = UpdateFeaturesRequest::default()
        .with_timeout_ms(5000)
        .with_feature_updates(vec![FeatureUpdateKey::default()
            .with_feature("streams.version".into())
            .with_max_version_level(level)
            .with_upgrade_type(kind)]);
    let Response::UpdateFeatures(answer) = client.call(1, request).await else {
        panic!("not UpdateFeatures")
    };
    answer.error_code
}

/// One line per observation: what <TAB> how it compares.
async fn answers(client: &mut Client) -> Vec<String> {
    let mut lines = Vec::new();
    let (first, level) = epoch(client).await;
    assert_eq!(level, 1, "streams.version starts at 1");
    lines.push(format!("ApiVersions v3 epoch above 0\t{}", first > 0));
    tokio::time::sleep(IDLE).await;
    let (idle, _) = epoch(client).await;
    lines.push(format!(
        "ApiVersions v3 epoch moves while idle\t{}",
        idle > first
    ));
    let mut before = idle;
    for level in [0, 1] {
        let code = set_streams_version(client, level).await;
        // A broker applies the controller's record a moment after the answer.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        let after = loop {
            let (after, now) = epoch(client).await;
            if now == level || tokio::time::Instant::now() > deadline {
                break after;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        lines.push(format!(
            "UpdateFeatures v1 streams.version {level}\terror {code}, epoch after it above \
             before: {}",
            after > before
        ));
        before = after;
    }
    lines
}

#[tokio::test]
async fn the_cluster_moves_the_features_epoch_as_kafka_does() {
    let cluster = kafka_codec_cluster::Cluster::builder()
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "features-epoch").await;
    let got = answers(&mut client).await;
    support::assert_same_lines(&got, &support::fixture_lines(FIXTURE), "cluster");
}

#[tokio::test]
#[ignore = "needs a Kafka 4.4 node: KAFKA_BROKER (tools/kafka-broker/broker.sh start)"]
async fn kafka_moves_the_features_epoch_as_recorded() {
    let mut client = Client::connect(support::live_broker().await, "features-epoch").await;
    let got = answers(&mut client).await;
    let header = "# How Kafka 4.4's finalized-features epoch (ApiVersions v3) moved on a live\n\
                  # tools/kafka-broker/broker.sh node: above 0, while idle (1.2 s), and after\n\
                  # each applied UpdateFeatures (streams.version to 0, then back to 1, each\n\
                  # waited for in ApiVersions); recorded by KAFKA_CODEC_RECORD=1 cargo test -p\n\
                  # kafka-codec-cluster --test cluster -- features_epoch:: --ignored. One line\n\
                  # per observation <TAB> how it compares (the values are run-dependent).\n";
    if support::recorded(FIXTURE, header, &got) {
        return;
    }
    support::assert_same_lines(&got, &support::fixture_lines(FIXTURE), "live");
}
