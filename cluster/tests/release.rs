//! `as_version` (`--as-version`): a cluster answering as each Kafka release from 0.8 to 4.4
//! lists that release's versions in ApiVersions, closes the connection on a request above
//! them, and answers an ApiVersions request the release could not read as it did.
//!
//! The expected versions come from `release-api-versions.tsv` as the jars gave it, of the
//! APIs that `release-api-listeners.tsv` says the release's broker listed (its ZooKeeper-mode
//! broker before 3.3, its KRaft broker from 3.3 on; `tools/release-api-versions/run.sh check`
//! proves both files against the jars, in CI), read here by a parser of this test's own,
//! intersected with what the cluster serves without a release.

use kafka_codec::bytes::BytesMut;
use kafka_codec::conn::ClientConnection;
use kafka_codec::messages::{ApiVersionsRequest, FetchRequest, MetadataRequest, ProduceRequest};
use kafka_codec::{ApiKey, ErrorCode, Request, Response, ResponseFrame};
use kafka_codec_cluster::release::{Listener, Release};
use kafka_codec_cluster::Cluster;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A hang guard, not a measurement.
const GUARD: Duration = Duration::from_secs(30);

/// API key → (min, max).
type Versions = BTreeMap<i16, (i16, i16)>;

/// Release name → the API keys its broker listed (the cluster answers as its ZooKeeper-mode
/// broker, `Z`, before 3.3 and as its KRaft broker, `B`, from 3.3 on), or with `controller`
/// its KRaft controller (`C`).
fn listed_by(controller: bool) -> BTreeMap<String, Vec<i16>> {
    let text = include_str!("../release-api-listeners.tsv");
    let mut rows = text.lines().filter(|line| !line.starts_with('#'));
    let header: Vec<&str> = rows.next().expect("a header").split('\t').collect();
    let kraft_from = header.iter().position(|name| *name == "3.3").expect("3.3");
    let mut listed: BTreeMap<String, Vec<i16>> = BTreeMap::new();
    for row in rows {
        let cells: Vec<&str> = row.split('\t').collect();
        let key: i16 = cells[0].parse().expect("an API key");
        for (column, (name, cell)) in header.iter().zip(&cells).enumerate().skip(2) {
            let letter = match (controller, column >= kraft_from) {
                (true, _) => 'C',
                (false, false) => 'Z',
                (false, true) => 'B',
            };
            let entry = listed.entry(name.to_string()).or_default();
            if cell.contains(letter) {
                entry.push(key);
            }
        }
    }
    listed
}

/// Release name → API key → (min, max) as its brokers' ApiVersions listed them, from the
/// committed tables.
fn expected_table() -> Vec<(String, Versions)> {
    let listed = listed_by(false);
    let mut releases = defined_table();
    for (name, versions) in &mut releases {
        versions.retain(|key, _| listed[name.as_str()].contains(key));
    }
    releases
}

/// Release name → API key → (min, max) of every API the release defined.
fn defined_table() -> Vec<(String, Versions)> {
    let text = include_str!("../release-api-versions.tsv");
    let mut rows = text.lines().filter(|line| !line.starts_with('#'));
    let header: Vec<&str> = rows.next().expect("a header").split('\t').collect();
    let mut releases: Vec<(String, Versions)> = header[2..]
        .iter()
        .map(|name| (name.to_string(), BTreeMap::new()))
        .collect();
    for row in rows {
        let cells: Vec<&str> = row.split('\t').collect();
        let key: i16 = cells[0].parse().expect("an API key");
        for (release, cell) in releases.iter_mut().zip(&cells[2..]) {
            if *cell == "-" {
                continue;
            }
            // `A-B (lists C-B)`: served A-B, listed C-B.
            let cell = cell
                .split_once(" (lists ")
                .map_or(*cell, |(_, listed)| listed.trim_end_matches(')'));
            let (min, max) = cell.split_once('-').unwrap_or((cell, cell));
            release
                .1
                .insert(key, (min.parse().expect("min"), max.parse().expect("max")));
        }
    }
    releases
}

async fn connect(address: SocketAddr) -> (TcpStream, ClientConnection) {
    (
        TcpStream::connect(address).await.expect("connect"),
        ClientConnection::new().with_client_id("release-test"),
    )
}

/// Sends `body` at `version`; the response, or `None` if the broker closed the connection.
async fn call(
    address: SocketAddr,
    version: i16,
    body: impl Into<Request>,
) -> Option<ResponseFrame> {
    let (mut tcp, mut connection) = connect(address).await;
    let mut out = BytesMut::new();
    connection
        .send(version, &body.into(), &mut out)
        .expect("encode");
    tcp.write_all(&out).await.expect("write");
    let mut received = BytesMut::new();
    tokio::time::timeout(GUARD, async {
        loop {
            if let Some(response) = connection.receive(&mut received).expect("decode") {
                return Some(response);
            }
            match tcp.read_buf(&mut received).await {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    })
    .await
    .expect("an answer or a close before the guard")
}

fn listed(frame: &ResponseFrame) -> BTreeMap<i16, (i16, i16)> {
    let Response::ApiVersions(body) = &frame.body else {
        panic!("not ApiVersions: {:?}", frame.body)
    };
    assert_eq!(body.error_code, 0);
    body.api_keys
        .iter()
        .map(|key| (key.api_key, (key.min_version, key.max_version)))
        .collect()
}

/// What the cluster serves with no release: every version this crate knows.
async fn served() -> BTreeMap<i16, (i16, i16)> {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let frame = call(
        cluster.brokers()[0].address,
        0,
        ApiVersionsRequest::default(),
    )
    .await
    .expect("an answer");
    listed(&frame)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_release_lists_its_versions_of_the_served_apis() {
    let served = served().await;
    let table = expected_table();
    assert_eq!(table.len(), Release::all().count());
    for (name, versions) in &table {
        let release = Release::parse(name).expect("a release the cluster knows");
        assert_eq!(release.name(), name);
        let cluster = Cluster::builder()
            .as_version(release)
            .build()
            .await
            .expect("cluster");
        let address = cluster.brokers()[0].address;
        let expected: BTreeMap<i16, (i16, i16)> = served
            .iter()
            .filter_map(|(key, &(ours_min, ours_max))| {
                let &(min, max) = versions.get(key)?;
                let (min, max) = (min.max(ours_min), max.min(ours_max));
                (min <= max).then_some((*key, (min, max)))
            })
            .collect();
        match versions.get(&ApiKey::ApiVersions.key()) {
            Some(_) => {
                let frame = call(address, 0, ApiVersionsRequest::default())
                    .await
                    .unwrap_or_else(|| panic!("{name}: ApiVersions closed the connection"));
                assert_eq!(listed(&frame), expected, "Kafka {name}");
            }
            // 0.8 and 0.9 had no ApiVersions: their brokers closed the connection.
            None => assert!(
                call(address, 0, ApiVersionsRequest::default())
                    .await
                    .is_none(),
                "Kafka {name} answered ApiVersions"
            ),
        }
    }
}

/// A controller lists what the release's KRaft controller listed, of what it serves; before
/// 2.8 (no KRaft controllers) nothing, and it closes the connection on ApiVersions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_release_s_controllers_list_what_its_controllers_listed() {
    let served = {
        let cluster = Cluster::builder()
            .controllers(1)
            .build()
            .await
            .expect("cluster");
        let frame = call(
            cluster.controllers()[0].address,
            0,
            ApiVersionsRequest::default(),
        )
        .await
        .expect("an answer");
        listed(&frame)
    };
    let controllers = listed_by(true);
    for (name, versions) in defined_table() {
        let cluster = Cluster::builder()
            .controllers(1)
            .as_version(Release::parse(&name).expect("release"))
            .build()
            .await
            .expect("cluster");
        let expected: BTreeMap<i16, (i16, i16)> = served
            .iter()
            .filter(|(key, _)| controllers[name.as_str()].contains(key))
            .filter_map(|(key, &(ours_min, ours_max))| {
                let &(min, max) = versions.get(key)?;
                let (min, max) = (min.max(ours_min), max.min(ours_max));
                (min <= max).then_some((*key, (min, max)))
            })
            .collect();
        let answer = call(
            cluster.controllers()[0].address,
            0,
            ApiVersionsRequest::default(),
        )
        .await;
        match answer {
            Some(frame) => assert_eq!(listed(&frame), expected, "Kafka {name}'s controller"),
            None => assert!(
                !expected.contains_key(&ApiKey::ApiVersions.key()),
                "Kafka {name}'s controller closed on ApiVersions"
            ),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_above_the_release_closes_the_connection() {
    let served = served().await;
    let mut checked = 0;
    for (name, versions) in expected_table() {
        let cluster = Cluster::builder()
            .as_version(Release::parse(&name).expect("release"))
            .build()
            .await
            .expect("cluster");
        let address = cluster.brokers()[0].address;
        for api in [ApiKey::Produce, ApiKey::Fetch, ApiKey::Metadata] {
            let (Some(&(_, max)), Some(&(_, ours))) =
                (versions.get(&api.key()), served.get(&api.key()))
            else {
                continue;
            };
            let body = |api| -> Request {
                match api {
                    ApiKey::Produce => ProduceRequest::default().with_acks(1).into(),
                    ApiKey::Fetch => FetchRequest::default().with_max_wait_ms(0).into(),
                    _ => MetadataRequest::default().with_topics(Some(vec![])).into(),
                }
            };
            let top = max.min(ours);
            assert!(
                call(address, top, body(api)).await.is_some(),
                "Kafka {name}: {api} v{top} was refused"
            );
            if max < ours {
                assert!(
                    call(address, max + 1, body(api)).await.is_none(),
                    "Kafka {name}: {api} v{} was answered",
                    max + 1
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no release older than this crate's versions");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_versions_request_too_new_for_the_release_gets_unsupported_version() {
    let ours = ApiKey::ApiVersions.valid_versions();
    for (name, lists_itself) in [("0.10.0", false), ("2.3", false), ("2.4", true)] {
        let release = Release::parse(name).expect("release");
        let theirs = release
            .versions(ApiKey::ApiVersions.key())
            .expect("ApiVersions");
        assert!(theirs.max < ours.max, "{name} is too new for this test");
        let cluster = Cluster::builder()
            .as_version(release)
            .build()
            .await
            .expect("cluster");
        let frame = call(
            cluster.brokers()[0].address,
            theirs.max + 1,
            ApiVersionsRequest::default(),
        )
        .await
        .expect("an answer");
        // Read at v0, as Kafka writes it.
        assert_eq!(frame.api_version, 0);
        let Response::ApiVersions(body) = frame.body else {
            panic!("not ApiVersions")
        };
        assert_eq!(body.error_code, ErrorCode::UNSUPPORTED_VERSION.code());
        let keys: Vec<_> = body
            .api_keys
            .iter()
            .map(|key| (key.api_key, key.min_version, key.max_version))
            .collect();
        if lists_itself {
            // KIP-511: the broker's own ApiVersions range, as 2.4.1's
            // ApiVersionsRequest.getErrorResponse gives it.
            assert_eq!(
                keys,
                [(ApiKey::ApiVersions.key(), theirs.min, theirs.max)],
                "{name}"
            );
        } else {
            // Before 2.4 the error answer listed nothing (2.3.1's getErrorResponse).
            assert!(keys.is_empty(), "{name}: {keys:?}");
        }
    }
}

/// Kafka 4.x lists Produce from v0 (KAFKA-18659: librdkafka needs to see v0-v2) but serves it
/// from v3, closing the connection on the older versions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_4_lists_produce_v0_to_v2_and_closes_on_them() {
    let release = Release::parse("4.0").expect("release");
    let served = release.versions(ApiKey::Produce.key()).expect("Produce");
    let listed = release
        .listed_versions(ApiKey::Produce.key())
        .expect("Produce");
    assert!(
        listed.min < served.min,
        "4.0 lists Produce from v{}",
        listed.min
    );
    let cluster = Cluster::builder()
        .as_version(release)
        .build()
        .await
        .expect("cluster");
    let address = cluster.brokers()[0].address;
    let frame = call(address, 0, ApiVersionsRequest::default())
        .await
        .expect("an answer");
    assert_eq!(
        listed_of(&frame, ApiKey::Produce),
        Some((listed.min, served.max))
    );
    for version in listed.min..served.min {
        assert!(
            call(address, version, ProduceRequest::default().with_acks(1))
                .await
                .is_none(),
            "Produce v{version} answered"
        );
    }
    assert!(
        call(address, served.min, ProduceRequest::default().with_acks(1))
            .await
            .is_some()
    );
}

/// An API the release defined but its broker did not list closes the connection, as any API
/// not served: DescribeQuorum on a 2.7 broker (defined, not enabled) and on a 3.2 one
/// (ZooKeeper mode, which never listed it), DescribeUserScramCredentials on a 3.3 one (KRaft
/// brokers listed it from 3.5). A 3.3 KRaft broker lists DescribeQuorum; a 3.9 controller
/// lists it too, and before 2.8, which had no controllers, a controller lists nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_the_release_did_not_list_is_refused() {
    use kafka_codec::messages::{DescribeQuorumRequest, DescribeUserScramCredentialsRequest};
    let release = |name: &str| Release::parse(name).expect("release");
    for (name, api, body) in [
        (
            "2.7",
            ApiKey::DescribeQuorum,
            Request::from(DescribeQuorumRequest::default()),
        ),
        (
            "3.2",
            ApiKey::DescribeQuorum,
            DescribeQuorumRequest::default().into(),
        ),
        (
            "3.3",
            ApiKey::DescribeUserScramCredentials,
            DescribeUserScramCredentialsRequest::default().into(),
        ),
    ] {
        assert!(release(name).versions(api.key()).is_some(), "{name} {api}");
        let cluster = Cluster::builder()
            .as_version(release(name))
            .build()
            .await
            .expect("cluster");
        let address = cluster.brokers()[0].address;
        let frame = call(address, 0, ApiVersionsRequest::default())
            .await
            .expect("an answer");
        assert_eq!(listed_of(&frame, api), None, "Kafka {name} lists {api}");
        assert!(
            call(address, 0, body).await.is_none(),
            "Kafka {name}: {api} v0 was answered"
        );
    }
    let cluster = Cluster::builder()
        .as_version(release("3.3"))
        .build()
        .await
        .expect("cluster");
    let frame = call(
        cluster.brokers()[0].address,
        0,
        ApiVersionsRequest::default(),
    )
    .await
    .expect("an answer");
    assert!(listed_of(&frame, ApiKey::DescribeQuorum).is_some());
    let controllers = listed_by(true);
    for (name, lists) in [("3.9", true), ("2.7", false)] {
        assert_eq!(
            controllers[name].contains(&ApiKey::DescribeQuorum.key()),
            lists,
            "{name}"
        );
        let cluster = Cluster::builder()
            .controllers(1)
            .as_version(release(name))
            .build()
            .await
            .expect("cluster");
        let address = cluster.controllers()[0].address;
        let answer = call(address, 0, ApiVersionsRequest::default()).await;
        match answer {
            Some(frame) => {
                assert!(lists, "Kafka {name}'s controller answered");
                assert!(listed_of(&frame, ApiKey::DescribeQuorum).is_some());
            }
            None => assert!(!lists, "Kafka {name}'s controller closed"),
        }
    }
}

fn listed_of(frame: &ResponseFrame, api: ApiKey) -> Option<(i16, i16)> {
    listed(frame).get(&api.key()).copied()
}

#[test]
fn every_release_line_from_0_8_to_4_4_is_known() {
    let names: Vec<_> = Release::all().map(Release::name).collect();
    for line in [
        "0.8", "0.9", "0.10.0", "0.10.1", "0.10.2", "0.11", "1.0", "1.1", "2.0", "2.1", "2.2",
        "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6",
        "3.7", "3.8", "3.9", "4.0", "4.1", "4.2", "4.3", "4.4",
    ] {
        assert!(names.contains(&line), "{line} missing from {names:?}");
    }
}

/// kafka-python against a cluster per release: what the cluster lists equals, API by API,
/// the ApiVersions answers kafka-python recorded from real brokers of each release
/// (`tools/clients/cluster_release_versions.py`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python kafka-python (KAFKA_CLIENTS_PYTHON=$(bash tools/clients/venv.sh))"]
async fn kafka_python_sees_what_real_brokers_of_each_release_listed() {
    let python = std::env::var("KAFKA_CLIENTS_PYTHON")
        .expect("KAFKA_CLIENTS_PYTHON names the clients' venv python (tools/clients/venv.sh)");
    let mut clusters = Vec::new();
    let mut pairs = Vec::new();
    for release in Release::all() {
        let cluster = Cluster::builder()
            .as_version(release)
            .build()
            .await
            .expect("cluster");
        // The table's letter of the broker the cluster answers as.
        let listener = match release.broker_listener() {
            Listener::ZooKeeperBroker => 'Z',
            Listener::KRaftBroker => 'B',
            Listener::Controller => unreachable!("brokers answer as brokers"),
        };
        pairs.push(format!("{release}={}={listener}", cluster.bootstrap()));
        clusters.push(cluster);
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tools/clients/cluster_release_versions.py");
    let run = tokio::process::Command::new(python)
        .arg(script)
        .args(&pairs)
        .kill_on_drop(true)
        .output();
    // A hang guard, not a measurement.
    let output = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the client finished")
        .expect("the client started");
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    print!("{}", String::from_utf8_lossy(&output.stdout));
    assert!(output.status.success(), "kafka-python: {}", output.status);
}
