//! Produce v0-v2 carrying a magic-2 batch, sent to Kafka 4.4 anyway: 4.x lists Produce from
//! v0 in ApiVersions (KAFKA-18659) but serves it from v3. `data/produce-v0-v2-kafka-4.4.txt`
//! holds what a real 4.4 broker (`tools/kafka-broker/broker.sh`) did with each version and
//! acks 0 and 1: it closes the connection without an answer (its log: `UnsupportedVersion
//! Exception: Received request for api with key 0 (Produce) and unsupported version N`), not
//! UNSUPPORTED_VERSION nor CORRUPT_MESSAGE; v3, the same batch to a topic it does not hold,
//! is answered. The plain test sends the same to a cluster answering as 4.4
//! (`--as-version 4.4`); the ignored one compares a live broker with the file
//! (`KAFKA_CODEC_RECORD=1` rewrites it).

use crate::support;

use kafka_codec::{Response, ResponseFrame};
use kafka_codec_cluster::release::Release;
use kafka_codec_cluster::Cluster;
use std::net::SocketAddr;
use std::time::Duration;
use support::{Client, Outcome};

/// The recorded outcomes (`tests/data/`).
const FIXTURE: &str = "produce-v0-v2-kafka-4.4.txt";

/// A topic neither side holds.
const TOPIC: &str = "produce-legacy-versions-absent";

/// What each version and acks did, one line each, on a fresh connection each (a closed one
/// cannot go on). An answer waits at most `wait` (acks 0 never gets one).
async fn outcomes(address: SocketAddr, wait: Duration) -> Vec<String> {
    let mut lines = Vec::new();
    for version in 0..=3 {
        for acks in [0i16, 1] {
            if version == 3 && acks == 0 {
                // Answered with nothing: only the wait would tell.
                continue;
            }
            let mut client = Client::connect(address, "produce-legacy").await;
            let request = support::produce(TOPIC, 0, support::batch(0, 1)).with_acks(acks);
            let outcome = match client.send(version, request, wait).await {
                Outcome::Closed => "closed".to_owned(),
                Outcome::Nothing => "no answer".to_owned(),
                Outcome::Answer(frame) => answer_json(*frame, version),
            };
            lines.push(format!("Produce v{version} acks {acks} magic 2\t{outcome}"));
        }
    }
    lines
}

fn answer_json(frame: ResponseFrame, version: i16) -> String {
    let Response::Produce(_) = &frame.body else {
        panic!("not Produce")
    };
    let mut json = ResponseFrame::new(frame.body, version, 0)
        .to_json()
        .expect("json");
    json["body"].take().to_string()
}

#[tokio::test]
async fn a_cluster_answering_as_4_4_closes_on_produce_v0_to_v2_as_kafka_does() {
    let cluster = Cluster::builder()
        .as_version(Release::parse("4.4").expect("4.4"))
        .build()
        .await
        .expect("cluster");
    let got = outcomes(cluster.brokers()[0].address, Duration::from_secs(5)).await;
    support::assert_same_lines(&got, &support::fixture_lines(FIXTURE), "cluster");
}

#[tokio::test]
#[ignore = "needs a Kafka 4.4 broker: KAFKA_BROKER (tools/kafka-broker/broker.sh)"]
async fn kafka_4_4_closes_on_produce_v0_to_v2_as_recorded() {
    let got = outcomes(support::live_broker().await, Duration::from_secs(5)).await;
    let header =
        "# What a Kafka 4.4 broker (tools/kafka-broker/broker.sh) did with Produce v0-v3\n\
                  # carrying one magic-2 batch, to a topic it does not hold, each on a fresh\n\
                  # connection; recorded by KAFKA_CODEC_RECORD=1 cargo test -p\n\
                  # kafka-codec-cluster --test cluster -- produce_legacy_versions_kafka::\n\
                  # --ignored. One line per request <TAB> closed, or the answer's body as\n\
                  # Kafka's JSON.\n";
    if support::recorded(FIXTURE, header, &got) {
        return;
    }
    support::assert_same_lines(&got, &support::fixture_lines(FIXTURE), "live");
}
