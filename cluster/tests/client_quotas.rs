//! Client quotas through this crate's own client: AlterClientQuotas sets, replaces and
//! removes quotas of user, client-id and ip entities (default entities too), checks entries
//! one by one with Kafka's errors and changes nothing with `validate_only`;
//! DescribeClientQuotas finds them by exact name, default or any entity, strictly or not,
//! and refuses a bad filter whole.

use crate::support;

use kafka_codec::messages::alter_client_quotas_request::{EntityData, EntryData, OpData};
use kafka_codec::messages::describe_client_quotas_request::ComponentData;
use kafka_codec::messages::{
    AlterClientQuotasRequest, AlterClientQuotasResponse, DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
};
use kafka_codec::{ErrorCode, Response};
use kafka_codec_cluster::Cluster;
use support::Client;

type Described = Vec<(Vec<(String, Option<String>)>, Vec<(String, f64)>)>;

fn entry(entity: &[(&str, Option<&str>)], ops: &[(&str, f64, bool)]) -> EntryData {
    EntryData::default()
        .with_entity(
            entity
                .iter()
                .map(|(t, n)| {
                    EntityData::default()
                        .with_entity_type((*t).into())
                        .with_entity_name(n.map(Into::into))
                })
                .collect(),
        )
        .with_ops(
            ops.iter()
                .map(|(key, value, remove)| {
                    OpData::default()
                        .with_key((*key).into())
                        .with_value(*value)
                        .with_remove(*remove)
                })
                .collect(),
        )
}

async fn alter(
    client: &mut Client,
    entries: Vec<EntryData>,
    validate_only: bool,
) -> Vec<(i16, Option<String>)> {
    let request = AlterClientQuotasRequest::default()
        .with_entries(entries)
        .with_validate_only(validate_only);
    let Response::AlterClientQuotas(AlterClientQuotasResponse { entries, .. }) =
        client.call(1, request).await
    else {
        panic!("not AlterClientQuotas")
    };
    entries
        .iter()
        .map(|e| {
            (
                e.error_code,
                e.error_message.as_ref().map(|m| m.to_string()),
            )
        })
        .collect()
}

async fn describe(
    client: &mut Client,
    components: &[(&str, i8, Option<&str>)],
    strict: bool,
) -> Result<Described, (i16, String)> {
    let request = DescribeClientQuotasRequest::default()
        .with_strict(strict)
        .with_components(
            components
                .iter()
                .map(|(t, match_type, name)| {
                    ComponentData::default()
                        .with_entity_type((*t).into())
                        .with_match_type(*match_type)
                        .with_match(name.map(Into::into))
                })
                .collect(),
        );
    let Response::DescribeClientQuotas(DescribeClientQuotasResponse {
        error_code,
        error_message,
        entries,
        ..
    }) = client.call(1, request).await
    else {
        panic!("not DescribeClientQuotas")
    };
    if error_code != 0 {
        assert!(entries.is_none());
        return Err((
            error_code,
            error_message.map(|m| m.to_string()).unwrap_or_default(),
        ));
    }
    Ok(entries
        .expect("entries")
        .iter()
        .map(|e| {
            (
                e.entity
                    .iter()
                    .map(|d| {
                        (
                            d.entity_type.to_string(),
                            d.entity_name.as_ref().map(|n| n.to_string()),
                        )
                    })
                    .collect(),
                e.values
                    .iter()
                    .map(|v| (v.key.to_string(), v.value))
                    .collect(),
            )
        })
        .collect())
}

const EXACT: i8 = 0;
const DEFAULT: i8 = 1;
const ANY: i8 = 2;

fn s(x: &str) -> String {
    x.to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quotas_are_stored_checked_and_described() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "quotas").await;
    let invalid = ErrorCode::INVALID_REQUEST.code();

    // Each entry on its own: the good ones are stored, the bad ones answered with why.
    let answers = alter(
        &mut client,
        vec![
            entry(
                &[("user", Some("alice"))],
                &[("producer_byte_rate", 1024.0, false)],
            ),
            entry(
                &[("user", Some("alice")), ("client-id", Some("app"))],
                &[
                    ("consumer_byte_rate", 2048.0, false),
                    ("request_percentage", 50.0, false),
                ],
            ),
            entry(
                &[("client-id", None)],
                &[("consumer_byte_rate", 100.0, false)],
            ),
            entry(
                &[("ip", Some("10.1.2.3"))],
                &[("connection_creation_rate", 5.0, false)],
            ),
            entry(&[("ip", None)], &[("connection_creation_rate", 7.0, false)]),
            entry(
                &[("user", Some("bob"))],
                &[("producer_byte_rate", 1.5, false)],
            ),
            entry(&[("user", Some("bob"))], &[("nonsense", 1.0, false)]),
            entry(
                &[("user", Some("bob"))],
                &[("producer_byte_rate", 0.0, false)],
            ),
            entry(
                &[("group", Some("g"))],
                &[("producer_byte_rate", 1.0, false)],
            ),
            entry(&[("ip", Some("10.1.2.3")), ("user", Some("bob"))], &[]),
            entry(&[("ip", Some("not an address"))], &[]),
            entry(&[("user", Some(""))], &[]),
            entry(&[], &[]),
        ],
        false,
    )
    .await;
    let errors: Vec<i16> = answers.iter().map(|(code, _)| *code).collect();
    assert_eq!(
        errors,
        [0, 0, 0, 0, 0, invalid, invalid, invalid, invalid, invalid, invalid, invalid, invalid]
    );
    let messages: Vec<Option<String>> = answers.into_iter().map(|(_, m)| m).collect();
    assert_eq!(
        messages[5..],
        [
            Some(s("producer_byte_rate cannot be a fractional value.")),
            Some(s("Invalid configuration key nonsense")),
            Some(s("Quota producer_byte_rate must be greater than 0")),
            Some(s("Unhandled client quota entity type: group")),
            Some(s("Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId entities.")),
            Some(s("Illegal ip address not an address")),
            Some(s("Empty user not supported")),
            Some(s("Invalid empty client quota entity")),
        ]
    );

    // validate_only changes nothing.
    let checked = alter(
        &mut client,
        vec![entry(
            &[("user", Some("carol"))],
            &[("producer_byte_rate", 9.0, false)],
        )],
        true,
    )
    .await;
    assert_eq!(checked, [(0, None)]);

    // Exact: alice's own quota; not strict: her entity with a client id too.
    let alice = vec![(s("user"), Some(s("alice")))];
    let alice_app = vec![
        (s("client-id"), Some(s("app"))),
        (s("user"), Some(s("alice"))),
    ];
    assert_eq!(
        describe(&mut client, &[("user", EXACT, Some("alice"))], true).await,
        Ok(vec![(
            alice.clone(),
            vec![(s("producer_byte_rate"), 1024.0)]
        )])
    );
    assert_eq!(
        describe(&mut client, &[("user", EXACT, Some("alice"))], false).await,
        Ok(vec![
            (
                alice_app.clone(),
                vec![
                    (s("consumer_byte_rate"), 2048.0),
                    (s("request_percentage"), 50.0)
                ]
            ),
            (alice.clone(), vec![(s("producer_byte_rate"), 1024.0)]),
        ])
    );
    // Default and any.
    assert_eq!(
        describe(&mut client, &[("client-id", DEFAULT, None)], false).await,
        Ok(vec![(
            vec![(s("client-id"), None)],
            vec![(s("consumer_byte_rate"), 100.0)]
        )])
    );
    let ips = describe(&mut client, &[("ip", ANY, None)], true)
        .await
        .expect("ips");
    assert_eq!(ips.len(), 2, "{ips:?}");
    // No components, not strict: everything (5 entities; carol was only validated).
    assert_eq!(
        describe(&mut client, &[], false).await.expect("all").len(),
        5
    );

    // Replacing one key and removing another; an entity left with none is gone.
    let changed = alter(
        &mut client,
        vec![
            entry(
                &[("user", Some("alice")), ("client-id", Some("app"))],
                &[
                    ("consumer_byte_rate", 4096.0, false),
                    ("request_percentage", 0.0, true),
                ],
            ),
            entry(
                &[("user", Some("alice"))],
                &[("producer_byte_rate", 0.0, true)],
            ),
        ],
        false,
    )
    .await;
    assert_eq!(changed, [(0, None), (0, None)]);
    assert_eq!(
        describe(&mut client, &[("user", EXACT, Some("alice"))], false).await,
        Ok(vec![(alice_app, vec![(s("consumer_byte_rate"), 4096.0)])])
    );

    // A bad filter is refused whole.
    assert_eq!(
        describe(
            &mut client,
            &[("user", ANY, None), ("user", ANY, None)],
            false
        )
        .await,
        Err((invalid, s("Duplicate user filter component entity type")))
    );
    assert_eq!(
        describe(
            &mut client,
            &[("ip", ANY, None), ("user", ANY, None)],
            false
        )
        .await
        .map_err(|(code, _)| code),
        Err(invalid)
    );
    assert_eq!(
        describe(&mut client, &[("group", ANY, None)], false).await,
        Err((
            ErrorCode::UNSUPPORTED_VERSION.code(),
            s("Custom entity type 'group' not supported")
        ))
    );
}
