//! UpdateFeatures compared with Kafka 4.4's controller, and UnregisterBroker's answer for an
//! unknown id. `data/update-features-kafka-4.4.txt` holds what a real 4.4 broker
//! (`tools/kafka-broker/broker.sh`) answered to each step of `STEPS`, in order: refusals
//! (unknown feature, level out of range or negative, unknown upgrade type, a downgrade without
//! a downgrade type, an upgrade typed as one, `metadata.version` and `kraft.version`
//! downgrades, the dependency of `eligible.leader.replicas.version` 1 on `metadata.version`
//! 23), validate-only updates, v0's `AllowDowngrade` against v1+'s `UpgradeType`, and real
//! downgrades and upgrades, each with the finalized features ApiVersions shows after it.
//! The plain test replays the steps against the cluster on the paused clock; the ignored one
//! compares a live broker with the file (`KAFKA_CODEC_RECORD=1` rewrites it). The steps end
//! where they began, so the live broker is left as it was.

use crate::support;

use kafka_codec::messages::update_features_request::FeatureUpdateKey;
use kafka_codec::messages::{ApiVersionsRequest, UnregisterBrokerRequest, UpdateFeaturesRequest};
use kafka_codec::{ErrorCode, Response, ResponseFrame};
use kafka_codec_cluster::Cluster;
use std::time::Duration;
use support::pipe::{paused, PipeClient};
use support::{Calls, Client};

// Kafka's `FeatureUpdate.UpgradeType` codes; at v0 the third cell is `AllowDowngrade`.
const UPGRADE: i8 = 1;
const SAFE: i8 = 2;
const UNSAFE: i8 = 3;
const TXN: &str = "transaction.version";
const MV: &str = "metadata.version";
const ELR: &str = "eligible.leader.replicas.version";

/// One UpdateFeatures: a name, the version, validate-only, the updates (feature, level,
/// upgrade type or, at v0, 1 to allow a downgrade).
type Step = (&'static str, i16, bool, &'static [(&'static str, i16, i8)]);

const STEPS: &[Step] = &[
    ("downgrade-typed-upgrade", 1, false, &[(TXN, 1, UPGRADE)]),
    (
        "unknown-feature",
        1,
        false,
        &[("no.such.feature", 1, UPGRADE)],
    ),
    (
        "unknown-feature-level-0",
        1,
        false,
        &[("no.such.feature", 0, SAFE)],
    ),
    ("level-too-high", 1, false, &[(TXN, 9, UPGRADE)]),
    ("level-negative", 1, false, &[(TXN, -1, SAFE)]),
    ("upgrade-type-0", 1, false, &[(TXN, 1, 0)]),
    ("upgrade-type-7", 1, false, &[(TXN, 1, 7)]),
    (
        "upgrade-typed-downgrade",
        1,
        false,
        &[(TXN, 1, SAFE), ("group.version", 1, SAFE)],
    ),
    ("same-level-safe", 1, false, &[(TXN, 2, SAFE)]),
    ("same-level-upgrade", 1, false, &[(TXN, 2, UPGRADE)]),
    (
        "second-refused",
        1,
        false,
        &[("group.version", 0, SAFE), (TXN, 9, UPGRADE)],
    ),
    ("duplicate", 1, false, &[(TXN, 1, SAFE), (TXN, 2, UPGRADE)]),
    ("empty-name", 1, false, &[("", 1, UPGRADE)]),
    ("none", 1, false, &[]),
    ("mv-safe-downgrade", 1, false, &[(MV, 32, SAFE)]),
    ("mv-unsafe-downgrade", 1, false, &[(MV, 32, UNSAFE)]),
    ("mv-downgrade-typed-upgrade", 1, false, &[(MV, 32, UPGRADE)]),
    ("mv-too-high", 1, false, &[(MV, 34, UPGRADE)]),
    ("mv-too-low", 1, false, &[(MV, 6, SAFE)]),
    ("mv-same", 1, false, &[(MV, 33, UPGRADE)]),
    ("kraft-downgrade", 1, false, &[("kraft.version", 0, SAFE)]),
    (
        "kraft-unsafe-downgrade",
        1,
        false,
        &[("kraft.version", 0, UNSAFE)],
    ),
    ("kraft-same", 1, false, &[("kraft.version", 1, UPGRADE)]),
    (
        "elr-needs-mv-23",
        1,
        false,
        &[(ELR, 1, UPGRADE), (MV, 22, SAFE)],
    ),
    (
        "mv-22-then-elr",
        1,
        false,
        &[(MV, 22, SAFE), (ELR, 1, UPGRADE)],
    ),
    (
        "elr-needs-mv-23-validate",
        1,
        true,
        &[(ELR, 1, UPGRADE), (MV, 22, UNSAFE)],
    ),
    ("validate-only-downgrade", 1, true, &[(TXN, 1, SAFE)]),
    ("validate-only-refused", 1, true, &[(TXN, 1, UPGRADE)]),
    ("v0-downgrade-not-allowed", 0, false, &[(TXN, 1, 0)]),
    ("v0-unknown-feature", 0, false, &[("no.such.feature", 1, 0)]),
    ("v0-mv-downgrade-allowed", 0, false, &[(MV, 32, 1)]),
    ("v0-downgrade-allowed", 0, false, &[(TXN, 1, 1)]),
    ("v0-upgrade", 0, false, &[(TXN, 2, 0)]),
    (
        "v0-upgrade-allowing-downgrade",
        0,
        false,
        &[(TXN, 1, 1), (TXN, 2, 1)],
    ),
    ("v1-safe-downgrade", 1, false, &[(TXN, 1, SAFE)]),
    ("v1-upgrade", 1, false, &[(TXN, 2, UPGRADE)]),
    ("v2-elr-to-0", 2, false, &[(ELR, 0, SAFE)]),
    ("v2-elr-to-1", 2, false, &[(ELR, 1, UPGRADE)]),
    (
        "v2-group-unsafe-to-0",
        2,
        false,
        &[("group.version", 0, UNSAFE)],
    ),
    (
        "v2-share-to-1-and-streams-to-0",
        2,
        false,
        &[("share.version", 1, SAFE), ("streams.version", 0, SAFE)],
    ),
    (
        "v2-validate-only-restore",
        2,
        true,
        &[
            ("group.version", 1, UPGRADE),
            ("share.version", 2, UPGRADE),
            ("streams.version", 1, UPGRADE),
        ],
    ),
    (
        "v2-restore",
        2,
        false,
        &[
            ("group.version", 1, UPGRADE),
            ("share.version", 2, UPGRADE),
            ("streams.version", 1, UPGRADE),
        ],
    ),
    ("v2-refused", 2, false, &[(TXN, 3, UPGRADE)]),
];

/// The recorded answers, in `tests/data`.
const FIXTURE: &str = "update-features-kafka-4.4.txt";

fn request(&(_, version, validate_only, updates): &Step) -> UpdateFeaturesRequest {
    UpdateFeaturesRequest::default()
        .with_timeout_ms(5000)
        .with_validate_only(validate_only)
        .with_feature_updates(
            updates
                .iter()
                .map(|&(name, level, kind)| {
                    let update = FeatureUpdateKey::default()
                        .with_feature(name.into())
                        .with_max_version_level(level);
                    if version == 0 {
                        update.with_allow_downgrade(kind == 1)
                    } else {
                        update.with_upgrade_type(kind)
                    }
                })
                .collect(),
        )
}

/// The finalized features ApiVersions v4 shows (`name=level`, in its order) and their epoch.
async fn finalized(client: &mut impl Calls) -> (Vec<String>, i64) {
    // v3+ needs a client software name, or the answer is an error without features.
    let request = ApiVersionsRequest::default()
        .with_client_software_name("kafka-codec".into())
        .with_client_software_version("0".into());
    let Response::ApiVersions(versions) = client.call(4, request).await else {
        panic!("not ApiVersions")
    };
    let levels = versions
        .finalized_features
        .iter()
        .map(|f| format!("{}={}", f.name.as_str(), f.max_version_level))
        .collect();
    (levels, versions.finalized_features_epoch)
}

/// `Local controller N` with the node id as a placeholder: the real broker is node 1.
fn without_node_id(message: &str) -> String {
    let marker = "Local controller ";
    match message.split_once(marker) {
        Some((before, after)) => {
            let rest = after.trim_start_matches(|c: char| c.is_ascii_digit());
            format!("{before}{marker}<id>{rest}")
        }
        None => message.to_owned(),
    }
}

/// Runs every step against `client`, one line each: the step, then the answer's body as
/// Kafka's JSON and the finalized features after it. Their epoch is not compared: Kafka's is
/// the offset of the broker's metadata image, which moves with every record (the controller
/// writes one every half second), not only with features; `settle` waits for it to move
/// after an applied update, so that a live broker's ApiVersions shows the update.
async fn answers(client: &mut impl Calls, settle: bool) -> Vec<String> {
    use kafka_codec::serde_json::{json, Value};
    let (before, mut epoch) = finalized(client).await;
    let mut lines = Vec::new();
    for step in STEPS {
        let version = step.1;
        let answer = client.call(version, request(step)).await;
        let Response::UpdateFeatures(ref body) = answer else {
            panic!("not UpdateFeatures")
        };
        let applied = body.error_code == 0 && !step.2;
        let mut after = finalized(client).await;
        if settle && applied {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
            while after.1 == epoch && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
                after = finalized(client).await;
            }
        }
        let mut json = ResponseFrame::new(answer, version, 0)
            .to_json()
            .expect("json")["body"]
            .take();
        if let Some(Value::String(message)) = json.get_mut("errorMessage") {
            *message = without_node_id(message);
        }
        epoch = after.1;
        let line = json!({"answer": json, "finalized": after.0});
        lines.push(format!("{}\t{line}", step.0));
    }
    assert_eq!(
        finalized(client).await.0,
        before,
        "the steps end where they began"
    );
    lines
}

#[test]
fn the_cluster_updates_features_as_kafka_does() {
    let want = support::fixture_lines(FIXTURE);
    paused().block_on(async {
        let cluster = support::pipe::paused_cluster(1, 29)
            .build()
            .await
            .expect("cluster");
        let mut client = PipeClient::connect(&cluster, 0);
        let got = answers(&mut client, false).await;
        support::assert_same_lines(&got, &want, "cluster");
    });
}

#[tokio::test]
#[ignore = "needs a Kafka 4.4 broker: KAFKA_BROKER (tools/kafka-broker/broker.sh)"]
async fn kafka_updates_features_as_recorded() {
    let mut client = Client::connect(support::live_broker().await, "update-features-live").await;
    let got = answers(&mut client, true).await;
    let header =
        "# What Kafka 4.4 answered to each UpdateFeatures of update_features.rs's STEPS, in\n\
             # order, on a freshly formatted broker, recorded by KAFKA_CODEC_RECORD=1 cargo test\n\
             # -p kafka-codec-cluster --test cluster -- update_features:: --ignored. One line a\n\
             # step: its name <TAB> the answer's body as Kafka's JSON (the controller's node id\n\
             # as <id>) and the finalized features ApiVersions v4 then shows.\n";
    if !support::recorded(FIXTURE, header, &got) {
        support::assert_same_lines(&got, &support::fixture_lines(FIXTURE), "live");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unregistering_an_unknown_broker_is_refused() {
    let cluster = Cluster::builder()
        .brokers(2)
        .build()
        .await
        .expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "unregister").await;
    let call = |id| UnregisterBrokerRequest::default().with_broker_id(id);
    let Response::UnregisterBroker(answer) = client.call(0, call(7)).await else {
        panic!("not UnregisterBroker")
    };
    assert_eq!(
        answer.error_code,
        ErrorCode::BROKER_ID_NOT_REGISTERED.code()
    );
    assert_eq!(
        answer.error_message.as_ref().map(|m| m.to_string()),
        Some("Broker ID 7 is not currently registered".into())
    );
    let Response::UnregisterBroker(answer) = client.call(0, call(1)).await else {
        panic!("not UnregisterBroker")
    };
    assert_eq!(answer.error_code, 0);
}
