//! What ApiVersions lists, compared with Kafka 4.4 listener by listener.
//! `data/api-versions-kafka-4.4.txt` holds the APIs and versions a real 4.4 node
//! (`tools/kafka-broker/broker.sh`: broker and controller in one process) listed in its
//! ApiVersions v4 answer on its broker listener and on its controller listener, in the order
//! listed. The plain test asks a cluster of one broker and one controller answering as 4.4
//! (`--as-version 4.4`; and the default, which lists every version this crate knows, for the
//! APIs only) and checks that each API both list has the same versions and order, and that what Kafka lists and the cluster does not is
//! exactly [`NOT_SERVED_ON_BROKERS`] and [`NOT_SERVED_ON_CONTROLLERS`] (the gaps, each with
//! why); the ignored one compares a live node with the file (`KAFKA_CODEC_RECORD=1` rewrites
//! it).

use crate::support;

use kafka_codec::messages::ApiVersionsRequest;
use kafka_codec::{ApiKey, Response};
use kafka_codec_cluster::release::Release;
use kafka_codec_cluster::Cluster;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use support::Client;

const FIXTURE: &str = "api-versions-kafka-4.4.txt";

/// What a Kafka 4.4 broker listener lists and the cluster's brokers do not serve
/// (DescribeQuorum, AddRaftVoter and RemoveRaftVoter are listed with or without controllers:
/// a broker forwards them to the active controller, or without controllers answers them as
/// a combined node, as `broker.sh`'s does).
const NOT_SERVED_ON_BROKERS: [(ApiKey, &str); 6] = [
    (
        ApiKey::WriteTxnMarkers,
        "inter-broker: a transaction coordinator to the partition leaders",
    ),
    (
        ApiKey::InitializeShareGroupState,
        "inter-broker: the share coordinator's state",
    ),
    (
        ApiKey::ReadShareGroupState,
        "inter-broker: the share coordinator's state",
    ),
    (
        ApiKey::WriteShareGroupState,
        "inter-broker: the share coordinator's state",
    ),
    (
        ApiKey::DeleteShareGroupState,
        "inter-broker: the share coordinator's state",
    ),
    (
        ApiKey::ReadShareGroupStateSummary,
        "inter-broker: the share coordinator's state",
    ),
];

/// What a Kafka 4.4 controller listener lists and the cluster's controllers do not serve:
/// the KRaft protocol between nodes, and the admin APIs a client may send with
/// `--bootstrap-controller` (the cluster's brokers serve those).
const NOT_SERVED_ON_CONTROLLERS: [(ApiKey, &str); 36] = [
    (
        ApiKey::Fetch,
        "KRaft: followers and observers fetch the metadata log",
    ),
    (ApiKey::SaslHandshake, "SASL on the controller listener"),
    (ApiKey::CreateTopics, "admin, --bootstrap-controller"),
    (ApiKey::DeleteTopics, "admin, --bootstrap-controller"),
    (ApiKey::DescribeAcls, "admin, --bootstrap-controller"),
    (ApiKey::CreateAcls, "admin, --bootstrap-controller"),
    (ApiKey::DeleteAcls, "admin, --bootstrap-controller"),
    (ApiKey::DescribeConfigs, "admin, --bootstrap-controller"),
    (ApiKey::AlterConfigs, "admin, --bootstrap-controller"),
    (ApiKey::SaslAuthenticate, "SASL on the controller listener"),
    (ApiKey::CreatePartitions, "admin, --bootstrap-controller"),
    (
        ApiKey::CreateDelegationToken,
        "admin, --bootstrap-controller",
    ),
    (
        ApiKey::RenewDelegationToken,
        "admin, --bootstrap-controller",
    ),
    (
        ApiKey::ExpireDelegationToken,
        "admin, --bootstrap-controller",
    ),
    (
        ApiKey::DescribeDelegationToken,
        "admin, --bootstrap-controller",
    ),
    (ApiKey::ElectLeaders, "admin, --bootstrap-controller"),
    (
        ApiKey::IncrementalAlterConfigs,
        "admin, --bootstrap-controller",
    ),
    (
        ApiKey::AlterPartitionReassignments,
        "admin, --bootstrap-controller",
    ),
    (
        ApiKey::ListPartitionReassignments,
        "admin, --bootstrap-controller",
    ),
    (ApiKey::AlterClientQuotas, "admin, --bootstrap-controller"),
    (
        ApiKey::DescribeUserScramCredentials,
        "admin, --bootstrap-controller",
    ),
    (
        ApiKey::AlterUserScramCredentials,
        "admin, --bootstrap-controller",
    ),
    (ApiKey::Vote, "KRaft: elections"),
    (ApiKey::BeginQuorumEpoch, "KRaft: elections"),
    (ApiKey::EndQuorumEpoch, "KRaft: elections"),
    (ApiKey::AlterPartition, "broker to controller: ISR changes"),
    (ApiKey::UpdateFeatures, "admin, --bootstrap-controller"),
    (ApiKey::Envelope, "broker to controller: forwarded requests"),
    (ApiKey::FetchSnapshot, "KRaft: snapshots"),
    (
        ApiKey::BrokerRegistration,
        "broker to controller: registration",
    ),
    (ApiKey::BrokerHeartbeat, "broker to controller: heartbeats"),
    (ApiKey::UnregisterBroker, "admin, --bootstrap-controller"),
    (
        ApiKey::AllocateProducerIds,
        "broker to controller: producer id blocks",
    ),
    (
        ApiKey::ControllerRegistration,
        "controller to controller: registration",
    ),
    (
        ApiKey::AssignReplicasToDirs,
        "broker to controller: JBOD directories",
    ),
    (ApiKey::UpdateRaftVoter, "KRaft: a voter's endpoints"),
];

/// `listener key name min-max` lines of an ApiVersions v4 answer, in the order listed.
async fn listed(listener: &str, address: SocketAddr) -> Vec<String> {
    let mut client = Client::connect(address, "api-versions").await;
    // KIP-511: an empty software name is INVALID_REQUEST, with no APIs listed.
    let request = ApiVersionsRequest::default()
        .with_client_software_name("kafka-codec".into())
        .with_client_software_version("0.1".into());
    let Response::ApiVersions(versions) = client.call(4, request).await else {
        panic!("not ApiVersions")
    };
    assert_eq!(versions.error_code, 0, "{listener}");
    versions
        .api_keys
        .iter()
        .map(|k| {
            let name = ApiKey::from_key(k.api_key)
                .map_or_else(|| format!("key-{}", k.api_key), |api| format!("{api:?}"));
            format!(
                "{listener} {} {name}\t{}-{}",
                k.api_key, k.min_version, k.max_version
            )
        })
        .collect()
}

/// The fixture's lines of `listener`, by key: (position, line).
fn by_key(lines: &[String], listener: &str) -> BTreeMap<i16, String> {
    lines
        .iter()
        .filter(|line| line.starts_with(&format!("{listener} ")))
        .map(|line| {
            let key = line
                .split(' ')
                .nth(1)
                .expect("a key")
                .parse()
                .expect("a key");
            (key, line.clone())
        })
        .collect()
}

/// `ours` lists what `theirs` lists on `listener` but for `gaps`, nothing more, in key order,
/// and (`versions`) at the same versions.
fn compare(ours: &[String], theirs: &[String], listener: &str, gaps: &[ApiKey], versions: bool) {
    let ours_by_key = by_key(ours, listener);
    let theirs_by_key = by_key(theirs, listener);
    // Both in key order.
    for lines in [ours, theirs] {
        let keys: Vec<i16> = by_key(lines, listener).into_keys().collect();
        let in_order: Vec<i16> = lines
            .iter()
            .filter(|line| line.starts_with(&format!("{listener} ")))
            .map(|line| line.split(' ').nth(1).unwrap().parse().unwrap())
            .collect();
        assert_eq!(keys, in_order, "{listener}: not in key order");
    }
    let mut missing = Vec::new();
    for (key, line) in &theirs_by_key {
        match ours_by_key.get(key) {
            Some(our_line) if versions => {
                assert_eq!(our_line, line, "{listener}: the versions differ")
            }
            Some(_) => {}
            None => missing.push(*key),
        }
    }
    let mut gaps: Vec<i16> = gaps.iter().map(|api| api.key()).collect();
    gaps.sort();
    assert_eq!(
        missing, gaps,
        "{listener}: Kafka lists these, the cluster does not"
    );
    let extra: Vec<&String> = ours_by_key
        .iter()
        .filter(|(key, _)| !theirs_by_key.contains_key(key))
        .map(|(_, line)| line)
        .collect();
    assert!(
        extra.is_empty(),
        "{listener}: the cluster lists more than Kafka: {extra:?}"
    );
}

#[tokio::test]
async fn the_cluster_lists_what_kafka_4_4_lists_but_for_the_gaps_named() {
    let theirs = support::fixture_lines(FIXTURE);
    let broker_gaps: Vec<ApiKey> = NOT_SERVED_ON_BROKERS.iter().map(|(api, _)| *api).collect();
    let controller_gaps: Vec<ApiKey> = NOT_SERVED_ON_CONTROLLERS
        .iter()
        .map(|(api, _)| *api)
        .collect();
    for release in [Some("4.4"), None] {
        let mut builder = Cluster::builder().brokers(1).controllers(1);
        if let Some(release) = release {
            builder = builder.as_version(Release::parse(release).expect("a release"));
        }
        // Kafka's controller lists DescribeQuorum v0-v2; v3 is provisional, left out.
        let cluster = builder
            .controller_stable_only(true)
            .build()
            .await
            .expect("cluster");
        let mut ours = listed("broker", cluster.brokers()[0].address).await;
        ours.extend(listed("controller", cluster.controllers()[0].address).await);
        // The default lists every version this crate knows (more than 4.4 for some APIs).
        let versions = release.is_some();
        compare(&ours, &theirs, "broker", &broker_gaps, versions);
        compare(&ours, &theirs, "controller", &controller_gaps, versions);
    }
    // Without controllers (combined nodes, as the recorded one is), the broker lists the same.
    let cluster = Cluster::builder()
        .as_version(Release::parse("4.4").expect("a release"))
        .build()
        .await
        .expect("cluster");
    let ours = listed("broker", cluster.brokers()[0].address).await;
    compare(&ours, &theirs, "broker", &broker_gaps, true);
}

#[tokio::test]
#[ignore = "needs a Kafka 4.4 node: KAFKA_BROKER, KAFKA_CONTROLLER (tools/kafka-broker/broker.sh)"]
async fn kafka_4_4_lists_as_recorded() {
    let controller = std::env::var("KAFKA_CONTROLLER").expect("KAFKA_CONTROLLER");
    let controller = tokio::net::lookup_host(controller)
        .await
        .expect("resolves")
        .next()
        .expect("an address");
    let mut got = listed("broker", support::live_broker().await).await;
    got.extend(listed("controller", controller).await);
    let header =
        "# What a Kafka 4.4 node (tools/kafka-broker/broker.sh: broker and controller in\n\
                  # one process) listed in ApiVersions v4 on its broker and controller listeners,\n\
                  # in the order listed; recorded by KAFKA_CODEC_RECORD=1 cargo test -p\n\
                  # kafka-codec-cluster --test cluster -- api_versions_kafka:: --ignored. One\n\
                  # line per API: listener, key, name <TAB> min-max.\n";
    if support::recorded(FIXTURE, header, &got) {
        return;
    }
    support::assert_same_lines(&got, &support::fixture_lines(FIXTURE), "live");
}
