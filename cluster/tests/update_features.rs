//! UpdateFeatures and UnregisterBroker through this crate's own client: Kafka 4.4's
//! refusals (messages as its `FeatureControlManager` and `QuorumFeatures` write them), a
//! validate-only update that changes nothing, a real one ApiVersions then shows, and
//! UnregisterBroker's answer for an unknown id.

mod support;

use kafka_codec::messages::update_features_request::FeatureUpdateKey;
use kafka_codec::messages::{
    ApiVersionsRequest, UnregisterBrokerRequest, UpdateFeaturesRequest, UpdateFeaturesResponse,
};
use kafka_codec::{ErrorCode, Response};
use kafka_codec_cluster::Cluster;
use support::Client;

async fn update(
    client: &mut Client,
    version: i16,
    updates: &[(&str, i16, i8)],
    validate_only: bool,
) -> UpdateFeaturesResponse {
    let request = UpdateFeaturesRequest::default()
        .with_timeout_ms(1000)
        .with_validate_only(validate_only)
        .with_feature_updates(
            updates
                .iter()
                .map(|(name, level, upgrade_type)| {
                    FeatureUpdateKey::default()
                        .with_feature((*name).into())
                        .with_max_version_level(*level)
                        .with_upgrade_type(*upgrade_type)
                })
                .collect(),
        );
    let Response::UpdateFeatures(answer) = client.call(version, request).await else {
        panic!("not UpdateFeatures")
    };
    answer
}

async fn finalized(client: &mut Client, name: &str) -> (Option<i16>, i64) {
    let Response::ApiVersions(versions) = client.call(4, ApiVersionsRequest::default()).await
    else {
        panic!("not ApiVersions")
    };
    let level = versions
        .finalized_features
        .iter()
        .find(|f| f.name.as_str() == name)
        .map(|f| f.max_version_level);
    (level, versions.finalized_features_epoch)
}

fn refusal(answer: &UpdateFeaturesResponse) -> (i16, String) {
    (
        answer.error_code,
        answer
            .error_message
            .as_ref()
            .map(|m| m.to_string())
            .unwrap_or_default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn features_are_updated_as_kafkas_controller_updates_them() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "features").await;
    let invalid = ErrorCode::INVALID_UPDATE_VERSION.code();
    let (before, epoch) = finalized(&mut client, "transaction.version").await;
    assert_eq!(before, Some(2));

    // Refusals, each failing the whole request with no per-feature results.
    let answer = update(&mut client, 1, &[("transaction.version", 1, 1)], false).await;
    assert_eq!(
        refusal(&answer),
        (
            invalid,
            "Invalid update version 1 for feature transaction.version. Can't downgrade the \
             version of this feature without setting the upgrade type to either safe or unsafe \
             downgrade."
                .into()
        )
    );
    assert!(answer.results.is_empty());
    let answer = update(&mut client, 1, &[("no.such.feature", 1, 1)], false).await;
    assert_eq!(
        refusal(&answer),
        (
            invalid,
            "Invalid update version 1 for feature no.such.feature. Local controller 0 does not \
             support this feature."
                .into()
        )
    );
    let answer = update(&mut client, 1, &[("transaction.version", 9, 1)], false).await;
    assert_eq!(
        refusal(&answer),
        (
            invalid,
            "Invalid update version 9 for feature transaction.version. Local controller 0 only \
             supports versions 0-2"
                .into()
        )
    );
    let answer = update(&mut client, 1, &[("transaction.version", -1, 1)], false).await;
    assert_eq!(
        refusal(&answer).1,
        "Invalid update version -1 for feature transaction.version. A feature version cannot \
         be less than 0."
    );
    let answer = update(&mut client, 1, &[("transaction.version", 1, 7)], false).await;
    assert_eq!(
        refusal(&answer).1,
        "Invalid update version 1 for feature transaction.version. The controller does not \
         support the given upgrade type."
    );

    // Validate only: accepted, nothing changes.
    let answer = update(&mut client, 1, &[("transaction.version", 1, 2)], true).await;
    assert_eq!(answer.error_code, 0);
    assert_eq!(answer.results.len(), 1);
    assert_eq!(
        finalized(&mut client, "transaction.version").await,
        (Some(2), epoch)
    );
    // A safe downgrade: ApiVersions shows it, at a later epoch.
    let answer = update(&mut client, 2, &[("transaction.version", 1, 2)], false).await;
    assert_eq!((answer.error_code, answer.results.len()), (0, 0));
    let (after, later) = finalized(&mut client, "transaction.version").await;
    assert_eq!(after, Some(1));
    assert!(later > epoch);
    // An upgrade typed as a downgrade.
    let answer = update(&mut client, 1, &[("transaction.version", 2, 2)], false).await;
    assert_eq!(
        refusal(&answer).1,
        "Invalid update version 2 for feature transaction.version. Can't downgrade to a newer \
         version."
    );
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
