//! The feature levels of ApiVersions v3+ against real brokers' answers (which proves
//! `release-features.tsv`, read from the releases' classes): the supported and
//! finalized features of Kafka 4.4 and 3.9 as their brokers sent them (`tests/data/`,
//! captured from `tools/kafka-broker/broker.sh`), on brokers and controllers, with
//! `transaction.version` at 2 by default or 1 when chosen, and none before v3 or on a
//! release before features.

use crate::support;

use kafka_codec::bytes::Bytes;
use kafka_codec::messages::{ApiVersionsRequest, ApiVersionsResponse, ResponseHeader};
use kafka_codec::{Message, Response};
use kafka_codec_cluster::features::TransactionVersion;
use kafka_codec_cluster::release::Release;
use kafka_codec_cluster::{Cluster, ClusterBuilder};
use std::net::SocketAddr;
use support::Client;

/// A committed broker answer: hex after `#` comment lines, a size-prefixed frame.
fn broker_answer(release: &str, version: i16) -> ApiVersionsResponse {
    let path = format!(
        "{}/tests/data/kafka-{release}-api-versions-v{version}.hex",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let hex: String = text
        .lines()
        .filter(|line| !line.starts_with('#'))
        .flat_map(|line| line.chars().filter(|c| !c.is_whitespace()))
        .collect();
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect();
    let size = u32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize;
    assert_eq!(size, bytes.len() - 4, "{path}: one whole frame");
    let mut frame = Bytes::from(bytes).slice(4..);
    // ApiVersions answers with header v0 at every version.
    ResponseHeader::decode(&mut frame, 0).expect("header");
    ApiVersionsResponse::decode_exact(frame, version).expect("the broker's answer decodes")
}

async fn ours(address: SocketAddr, version: i16) -> ApiVersionsResponse {
    let mut client = Client::connect(address, "features").await;
    match client.call(version, ApiVersionsRequest::default()).await {
        Response::ApiVersions(body) => body,
        other => panic!("not ApiVersions: {other:?}"),
    }
}

/// The features of `ours` are the broker's, but for the epoch: Kafka's is an offset of its
/// metadata log, the cluster's a constant; both are finalized (not -1).
fn assert_same_features(ours: &ApiVersionsResponse, theirs: &ApiVersionsResponse, what: &str) {
    assert_eq!(ours.supported_features, theirs.supported_features, "{what}");
    assert_eq!(ours.finalized_features, theirs.finalized_features, "{what}");
    assert!(theirs.finalized_features_epoch >= 0, "{what}");
    assert!(ours.finalized_features_epoch >= 0, "{what}");
}

async fn with_controller(builder: ClusterBuilder) -> Cluster {
    builder
        .brokers(2)
        .controllers(1)
        .build()
        .await
        .expect("cluster")
}

#[tokio::test]
async fn the_newest_release_answers_kafka_4_4s_features_on_brokers_and_controllers() {
    let cluster = with_controller(Cluster::builder()).await;
    for version in [3, 4] {
        let theirs = broker_answer("4.4", version);
        let node = |n: &kafka_codec_cluster::BrokerAddress| (n.node_id, n.address);
        for (node_id, address) in cluster
            .brokers()
            .iter()
            .chain(cluster.controllers())
            .map(node)
        {
            let ours = ours(address, version).await;
            assert_same_features(&ours, &theirs, &format!("node {node_id}, v{version}"));
        }
    }
    // v3 leaves out the features whose range starts at 0, as Kafka 4.4 does.
    let v3 = broker_answer("4.4", 3);
    assert_eq!(v3.supported_features.len(), 1);
    assert_eq!(v3.supported_features[0].name, "metadata.version");
    let tv = |response: &ApiVersionsResponse| {
        response
            .finalized_features
            .iter()
            .find(|feature| feature.name == "transaction.version")
            .map(|feature| (feature.min_version_level, feature.max_version_level))
    };
    assert_eq!(
        tv(&v3),
        Some((2, 2)),
        "Kafka 4.4 finalizes transaction version 2"
    );
    // Explicitly as 4.4: the same.
    let as_4_4 =
        with_controller(Cluster::builder().as_version(Release::parse("4.4").unwrap())).await;
    let ours = ours(as_4_4.brokers()[0].address, 4).await;
    assert_same_features(&ours, &broker_answer("4.4", 4), "--as-version 4.4");
    // Below v3 there are no features.
    let v2 = self::ours(cluster.brokers()[0].address, 2).await;
    assert!(v2.supported_features.is_empty() && v2.finalized_features.is_empty());
    assert_eq!(v2.finalized_features_epoch, -1);
}

#[tokio::test]
async fn transaction_version_1_is_finalized_when_chosen_and_nothing_else_changes() {
    let cluster =
        with_controller(Cluster::builder().transaction_version(TransactionVersion::V1)).await;
    for version in [3, 4] {
        let mut theirs = broker_answer("4.4", version);
        for feature in &mut theirs.finalized_features {
            if feature.name == "transaction.version" {
                feature.min_version_level = 1;
                feature.max_version_level = 1;
            }
        }
        let ours = ours(cluster.brokers()[0].address, version).await;
        assert_same_features(
            &ours,
            &theirs,
            &format!("transaction version 1, v{version}"),
        );
    }
}

#[tokio::test]
async fn kafka_3_9_answers_its_features_and_no_transaction_version() {
    let cluster =
        with_controller(Cluster::builder().as_version(Release::parse("3.9").unwrap())).await;
    for version in [3, 4] {
        let theirs = broker_answer("3.9", version);
        let ours = ours(cluster.brokers()[0].address, version).await;
        assert_same_features(&ours, &theirs, &format!("3.9, v{version}"));
        assert!(!ours
            .finalized_features
            .iter()
            .any(|feature| feature.name == "transaction.version"));
    }
}

#[tokio::test]
async fn a_release_before_feature_flags_answers_none() {
    // Kafka 2.6 served ApiVersions v3 (KIP-511) but had no features (KIP-584 came in 2.7).
    let cluster = Cluster::builder()
        .as_version(Release::parse("2.6").unwrap())
        .build()
        .await
        .expect("cluster");
    let ours = ours(cluster.brokers()[0].address, 3).await;
    assert!(ours.supported_features.is_empty() && ours.finalized_features.is_empty());
    assert_eq!(ours.finalized_features_epoch, -1);
}
