//! `json::redact`: the table of secret fields against every schema, and the adapter against
//! real messages of every table entry at every version where its field exists, random
//! messages of every API, and hand-made token streams.

use arbitrary::Unstructured;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;
use kafka_codec::bytes::Bytes;
use kafka_codec::json::redact::{
    self, is_secret_config_name, Direction, Form, Redactor, Secret, Type, When, METADATA_TOPIC,
    METADATA_TOPIC_ID, NOT_SECRETS, SECRETS,
};
use kafka_codec::json::{JsonOptions, JsonSink, JsonWriter, RecordsJson, ValueSink};
use kafka_codec::random::{Random, RandomOptions};
use kafka_codec::serde_json::{self, json, Value};
use kafka_codec::{ApiKey, MessageCodec, MessageKind, RandomMessageVisitor};
use kafka_codec::{Request, RequestFrame, Response, ResponseFrame, Uuid};
use kafka_codec_codegen::model::{self, Field, FieldType, Primitive, SchemaSet, Versions};
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};
use std::collections::{BTreeSet, HashSet};
use std::sync::OnceLock;

// ---------------------------------------------------------------------------------------------
// The schemas, as the generator reads them.

fn schemas() -> &'static SchemaSet {
    static SET: OnceLock<SchemaSet> = OnceLock::new();
    SET.get_or_init(|| {
        kafka_codec_codegen::Generator::new(concat!(env!("CARGO_MANIFEST_DIR"), "/schemas"))
            .load()
            .expect("schemas load")
    })
}

fn json_key(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn schema_name(api: ApiKey, direction: Direction) -> String {
    let suffix = match direction {
        Direction::Request => "Request",
        Direction::Response => "Response",
    };
    format!("{}{suffix}", api.name())
}

fn message(name: &str) -> &'static model::Message {
    schemas()
        .live()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no live schema {name}"))
}

/// One field reached from a message's root, with the versions in which the whole path exists.
struct Reached<'a> {
    path: String,
    field: &'a Field,
    /// The fields of the struct holding it, in schema order.
    siblings: &'a [Field],
    versions: Versions,
}

/// Every field of `message`, depth first in schema order.
fn fields(message: &model::Message) -> Vec<Reached<'_>> {
    fn walk<'a>(
        message: &'a model::Message,
        fields: &'a [Field],
        prefix: &str,
        versions: Versions,
        out: &mut Vec<Reached<'a>>,
    ) {
        for field in fields {
            let mut path = format!("{prefix}{}", json_key(&field.name));
            if field.ty.is_array() {
                path.push_str("[]");
            }
            let versions = versions.intersect(&field.versions);
            out.push(Reached {
                path: path.clone(),
                field,
                siblings: fields,
                versions,
            });
            if let Some(name) = field.ty.struct_name() {
                let inner = message
                    .struct_by_name(name)
                    .unwrap_or_else(|| panic!("{}: no struct {name}", message.name));
                walk(message, &inner.fields, &format!("{path}."), versions, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(
        message,
        &message.root.fields,
        "",
        message.valid_versions,
        &mut out,
    );
    out
}

fn reach<'a>(message: &'a model::Message, path: &str) -> Option<Reached<'a>> {
    fields(message).into_iter().find(|r| r.path == path)
}

fn element_primitive(ty: &FieldType) -> Option<Primitive> {
    match ty {
        FieldType::Primitive(p) => Some(*p),
        FieldType::Array(inner) => element_primitive(inner),
        FieldType::Struct(_) => None,
    }
}

/// Words in a field name that suggest a credential (or a config value), so that a field
/// carrying one needs a decision.
const CREDENTIAL_WORDS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "hmac",
    "salt",
    "credential",
    "auth",
    "key",
    "jaas",
    "principal",
    "sasl",
    "scram",
    "nonce",
    "signature",
    "cert",
    "private",
    "config",
    "value",
];

fn needs_decision(field: &Field) -> bool {
    let name = field.name.to_ascii_lowercase();
    matches!(
        element_primitive(&field.ty),
        Some(Primitive::Bytes | Primitive::Records)
    ) || CREDENTIAL_WORDS.iter().any(|word| name.contains(word))
}

fn kind_direction(kind: model::MessageKind) -> Option<Direction> {
    match kind {
        model::MessageKind::Request => Some(Direction::Request),
        model::MessageKind::Response => Some(Direction::Response),
        _ => None,
    }
}

fn in_table(message: &model::Message, path: &str) -> bool {
    let (Some(key), Some(direction)) = (message.api_key, kind_direction(message.kind)) else {
        return false;
    };
    SECRETS.iter().any(|secret| {
        secret.api.key() == key && secret.direction == direction && secret.path == path
    })
}

fn reviewed(message: &model::Message, path: &str) -> bool {
    NOT_SECRETS
        .iter()
        .flat_map(|group| group.fields.iter())
        .any(|(schema, reviewed)| *schema == message.name && *reviewed == path)
}

#[test]
fn every_bytes_field_and_every_credential_like_field_is_decided() {
    let mut undecided = Vec::new();
    let mut decided = 0;
    for message in schemas().live() {
        for reached in fields(message) {
            if !needs_decision(reached.field) {
                continue;
            }
            decided += 1;
            if !in_table(message, &reached.path) && !reviewed(message, &reached.path) {
                undecided.push(format!(
                    "{} {} ({})",
                    message.name, reached.path, reached.field.ty
                ));
            }
        }
    }
    assert!(decided > 100, "only {decided} fields looked at");
    assert!(
        undecided.is_empty(),
        "fields that may carry secrets, in neither json::redact::SECRETS nor NOT_SECRETS \
         (decide, with a reason):\n  {}",
        undecided.join("\n  ")
    );
}

#[test]
fn every_table_entry_names_a_field_of_a_type_that_can_hold_a_secret() {
    let mut seen = BTreeSet::new();
    for secret in SECRETS {
        let name = schema_name(secret.api, secret.direction);
        let reached = reach(message(&name), secret.path)
            .unwrap_or_else(|| panic!("{name} has no field at {}", secret.path));
        let ty = match reached.field.ty {
            FieldType::Primitive(Primitive::String) => Type::String,
            FieldType::Primitive(Primitive::Bytes) => Type::Bytes,
            FieldType::Primitive(Primitive::Records) => Type::Records,
            ref other => panic!(
                "{name} {}: {other} cannot be redacted as one value",
                secret.path
            ),
        };
        assert_eq!(secret.ty, ty, "{name} {}", secret.path);
        assert!(!reached.versions.is_empty(), "{name} {}", secret.path);
        assert!(!secret.reason.is_empty());
        assert!(
            seen.insert((name.clone(), secret.path)),
            "{name} {} twice",
            secret.path
        );
    }
    for group in NOT_SECRETS {
        assert!(!group.reason.is_empty());
        for (schema, path) in group.fields {
            assert!(
                reach(message(schema), path).is_some(),
                "reviewed {schema} {path} does not exist"
            );
            assert!(
                seen.insert((schema.to_string(), path)),
                "{schema} {path} is listed twice (or is both secret and not)"
            );
        }
    }
}

#[test]
fn conditions_find_what_they_need_before_the_value() {
    for secret in SECRETS {
        let name = schema_name(secret.api, secret.direction);
        let message = message(&name);
        let reached = reach(message, secret.path).unwrap();
        match secret.when {
            When::Always => {}
            When::SecretConfigName { key } => {
                // The name is a string field of the same struct, before the value, in every
                // version that has the value.
                let value_at = reached
                    .siblings
                    .iter()
                    .position(|f| std::ptr::eq(f, reached.field))
                    .unwrap();
                let name_at = reached
                    .siblings
                    .iter()
                    .position(|f| json_key(&f.name) == key)
                    .unwrap_or_else(|| panic!("{name} {}: no `{key}` beside it", secret.path));
                let name_field = &reached.siblings[name_at];
                assert!(name_at < value_at, "{name} {}", secret.path);
                assert_eq!(name_field.ty, FieldType::Primitive(Primitive::String));
                assert!(
                    name_field.versions.contains_range(&reached.versions),
                    "{name} {}: `{key}` is missing in some version of the value",
                    secret.path
                );
                assert!(
                    name_field.tag.is_none(),
                    "a tagged name could be written last"
                );
            }
            When::MetadataTopic { element } => {
                // `topic` or `topicId` in the element, before the field leading to the value,
                // in every version that has the value.
                let rest = secret
                    .path
                    .strip_prefix(element)
                    .unwrap()
                    .trim_start_matches('.');
                let next = rest.split(['.', '[']).next().unwrap();
                let next = reach(message, &format!("{element}.{next}"))
                    .or_else(|| reach(message, &format!("{element}.{next}[]")))
                    .unwrap();
                let at = |key: &str| next.siblings.iter().position(|f| json_key(&f.name) == key);
                let next_at =
                    at(next.path.rsplit('.').next().unwrap().trim_end_matches("[]")).unwrap();
                for version in reached.versions.min..=reached.versions.max {
                    let named = ["topic", "topicId"].iter().any(|key| {
                        at(key).is_some_and(|i| {
                            i < next_at && next.siblings[i].versions.contains(version)
                        })
                    });
                    assert!(
                        named,
                        "{name} {} v{version}: no topic before it",
                        secret.path
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Each table entry with a real message, at every version where its field exists.

/// A secret config name as a broker takes it per listener.
const SECRET_NAME: &str = "listener.name.sasl_ssl.ssl.key.password";
const PASSWORD: &str = "s3cr3t-password-7Qz";
const PLAIN_NAME: &str = "retention.ms";
const PLAIN_VALUE: &str = "604800000";
/// SASL/PLAIN: authzid, user and password separated by NUL.
const PLAIN_AUTH: &[u8] = b"\0alice\0s3cr3t-password";
/// A SCRAM server-first message: nonce, salt, iterations.
const SCRAM_SERVER_FIRST: &[u8] =
    b"r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096";
const SALT: &[u8] = b"\x8e\x17\x0b\xdb\x1a\x93\x08\x9f\x42\x5c\xab\x61";
const SALTED_PASSWORD: &[u8] =
    b"\x1d\x96\xee\x3a\x52\x9b\x5a\x5f\x9e\x47\xc0\x1f\x22\x9a\x2c\xb8\xa6\xe1\x5f\x7d";
const HMAC: &[u8] = b"\x9b\x1f\x55\x02\xe4\x8c\x33\x71\xa0\x0d\x6e\x11\xc2\x45\x88\x3a";
const HMAC_2: &[u8] = b"\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff\x01";
const METADATA_RECORDS: &[u8] =
    b"\0\0\0\0\0\0\0\0UserScramCredentialRecord storedKey=s3cr3t-stored-key";
const PLAIN_RECORDS: &[u8] = b"\0\0\0\0\0\0\0\x01an ordinary record value";

enum Frame {
    Request(RequestFrame),
    Response(ResponseFrame),
}

impl Frame {
    fn write(&self, options: &JsonOptions<'_>, out: &mut dyn JsonSink) {
        match self {
            Frame::Request(frame) => frame.write_json(options, out).unwrap(),
            Frame::Response(frame) => frame.write_json(options, out).unwrap(),
        }
    }

    fn write_body(&self, options: &JsonOptions<'_>, out: &mut dyn JsonSink) {
        match self {
            Frame::Request(frame) => {
                let version = frame.header.request_api_version;
                frame.body.write_json_with(version, options, out).unwrap()
            }
            Frame::Response(frame) => frame
                .body
                .write_json_with(frame.api_version, options, out)
                .unwrap(),
        }
    }
}

fn request(body: impl Into<Request>, version: i16) -> Frame {
    Frame::Request(RequestFrame::new(body, version, 11).with_client_id("console-producer"))
}

fn response(body: impl Into<Response>, version: i16) -> Frame {
    Frame::Response(ResponseFrame::new(body, version, 11))
}

/// A secret planted in a message: where, and how the unredacted JSON shows it.
struct Planted {
    /// The concrete path from the body.
    path: String,
    secret: Vec<u8>,
    /// Its JSON text, quotes included, as written without redaction.
    shown: String,
    /// The marker's JSON text.
    marker: String,
}

fn text(path: &str, value: &str) -> Planted {
    Planted {
        path: path.into(),
        secret: value.as_bytes().to_vec(),
        shown: serde_json::to_string(value).unwrap(),
        marker: format!("\"<redacted: {} bytes>\"", value.len()),
    }
}

fn bytes(path: &str, value: &[u8]) -> Planted {
    Planted {
        path: path.into(),
        secret: value.to_vec(),
        shown: format!("\"{}\"", STANDARD.encode(value)),
        marker: format!("\"<redacted: {} bytes>\"", value.len()),
    }
}

struct Case {
    frame: Frame,
    planted: Vec<Planted>,
    /// Secrets inside a planted value (a password inside a forwarded frame) that must not
    /// show either.
    inside: Vec<&'static [u8]>,
}

fn case(frame: Frame, planted: Vec<Planted>) -> Case {
    Case {
        frame,
        planted,
        inside: Vec::new(),
    }
}

mod build {
    //! One message per table entry, for a version that has the entry's field.
    use super::*;
    use kafka_codec::messages::{
        alter_configs_request as ac, alter_user_scram_credentials_request as scram,
        create_delegation_token_response as cdt, create_topics_request as ctq,
        create_topics_response as cts, describe_configs_response as dc,
        describe_delegation_token_response as ddt, envelope_request as envq,
        envelope_response as envs, expire_delegation_token_request as edt, fetch_response as fetch,
        fetch_snapshot_response as snap, incremental_alter_configs_request as iac,
        renew_delegation_token_request as rdt, sasl_authenticate_request as saq,
        sasl_authenticate_response as sas, streams_group_describe_response as sgd,
        streams_group_heartbeat_request as sgh,
    };

    pub fn sasl_request(version: i16) -> Case {
        let body =
            saq::SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from_static(PLAIN_AUTH));
        case(request(body, version), vec![bytes("authBytes", PLAIN_AUTH)])
    }

    pub fn sasl_response(version: i16) -> Case {
        let body = sas::SaslAuthenticateResponse::default()
            .with_auth_bytes(Bytes::from_static(SCRAM_SERVER_FIRST));
        case(
            response(body, version),
            vec![bytes("authBytes", SCRAM_SERVER_FIRST)],
        )
    }

    pub fn create_topics_request(version: i16) -> Case {
        let config = |name: &str, value: &str| {
            ctq::CreatableTopicConfig::default()
                .with_name(name.to_owned().into())
                .with_value(Some(value.to_owned().into()))
        };
        let body = ctq::CreateTopicsRequest::default()
            .with_topics(vec![ctq::CreatableTopic::default()
                .with_name("orders".into())
                .with_num_partitions(3)
                .with_replication_factor(1)
                .with_configs(vec![
                    config(PLAIN_NAME, PLAIN_VALUE),
                    config(SECRET_NAME, PASSWORD),
                ])])
            .with_timeout_ms(30_000);
        case(
            request(body, version),
            vec![text("topics[0].configs[1].value", PASSWORD)],
        )
    }

    pub fn create_topics_response(version: i16) -> Case {
        let config = |name: &str, value: &str| {
            cts::CreatableTopicConfigs::default()
                .with_name(name.to_owned().into())
                .with_value(Some(value.to_owned().into()))
        };
        let body = cts::CreateTopicsResponse::default().with_topics(vec![
            cts::CreatableTopicResult::default()
                .with_name("orders".into())
                .with_num_partitions(3)
                .with_replication_factor(1)
                .with_configs(Some(vec![
                    config(PLAIN_NAME, PLAIN_VALUE),
                    config(SECRET_NAME, PASSWORD),
                ])),
        ]);
        case(
            response(body, version),
            vec![text("topics[0].configs[1].value", PASSWORD)],
        )
    }

    pub fn alter_configs(version: i16) -> Case {
        let config = |name: &str, value: &str| {
            ac::AlterableConfig::default()
                .with_name(name.to_owned().into())
                .with_value(Some(value.to_owned().into()))
        };
        let body = ac::AlterConfigsRequest::default().with_resources(vec![
            ac::AlterConfigsResource::default()
                .with_resource_type(2)
                .with_resource_name("orders".into())
                .with_configs(vec![config(PLAIN_NAME, PLAIN_VALUE)]),
            ac::AlterConfigsResource::default()
                .with_resource_type(4)
                .with_resource_name("1".into())
                .with_configs(vec![
                    config("log.cleaner.threads", "2"),
                    config(SECRET_NAME, PASSWORD),
                ]),
        ]);
        case(
            request(body, version),
            vec![text("resources[1].configs[1].value", PASSWORD)],
        )
    }

    pub fn incremental_alter_configs(version: i16) -> Case {
        let config = |name: &str, value: Option<&str>, operation: i8| {
            iac::AlterableConfig::default()
                .with_name(name.to_owned().into())
                .with_config_operation(operation)
                .with_value(value.map(|v| v.to_owned().into()))
        };
        let body = iac::IncrementalAlterConfigsRequest::default().with_resources(vec![
            iac::AlterConfigsResource::default()
                .with_resource_type(4)
                .with_resource_name("1".into())
                .with_configs(vec![
                    config(PLAIN_NAME, Some(PLAIN_VALUE), 0),
                    // Deleting a secret config: its null value stays null.
                    config("ssl.keystore.password", None, 1),
                    config(
                        "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config",
                        Some(PASSWORD),
                        0,
                    ),
                ]),
        ]);
        case(
            request(body, version),
            vec![text("resources[0].configs[2].value", PASSWORD)],
        )
    }

    fn described(name: &str, value: Option<&str>) -> dc::DescribeConfigsResourceResult {
        dc::DescribeConfigsResourceResult::default()
            .with_name(name.to_owned().into())
            .with_value(value.map(|v| v.to_owned().into()))
    }

    pub fn describe_configs_value(version: i16) -> Case {
        let body = dc::DescribeConfigsResponse::default().with_results(vec![
            dc::DescribeConfigsResult::default()
                .with_resource_type(4)
                .with_resource_name("1".into())
                .with_configs(vec![
                    described(PLAIN_NAME, Some(PLAIN_VALUE)),
                    // What Kafka's broker sends for a password config: null.
                    described("ssl.truststore.password", None),
                    // What a broker that did not hide it would send.
                    described("sasl.jaas.config", Some(PASSWORD)),
                ]),
        ]);
        case(
            response(body, version),
            vec![text("results[0].configs[2].value", PASSWORD)],
        )
    }

    pub fn describe_configs_synonym(version: i16) -> Case {
        let mut config = described("ssl.key.password", None);
        config.synonyms = vec![
            dc::DescribeConfigsSynonym::default()
                .with_name(SECRET_NAME.into())
                .with_value(Some(PASSWORD.into()))
                .with_source(1),
            dc::DescribeConfigsSynonym::default()
                .with_name("ssl.key.password".into())
                .with_value(None)
                .with_source(5),
        ];
        let body = dc::DescribeConfigsResponse::default().with_results(vec![
            dc::DescribeConfigsResult::default()
                .with_resource_type(4)
                .with_resource_name("1".into())
                .with_configs(vec![described(PLAIN_NAME, Some(PLAIN_VALUE)), config]),
        ]);
        case(
            response(body, version),
            vec![text("results[0].configs[1].synonyms[0].value", PASSWORD)],
        )
    }

    pub fn streams_heartbeat(version: i16, changelog: bool) -> Case {
        let topic = sgh::TopicInfo::default()
            .with_name("app-store-changelog".into())
            .with_partitions(3)
            .with_topic_configs(vec![
                sgh::KeyValue::default()
                    .with_key("cleanup.policy".into())
                    .with_value("compact".into()),
                sgh::KeyValue::default()
                    .with_key(SECRET_NAME.into())
                    .with_value(PASSWORD.into()),
            ]);
        let (subtopology, path) = if changelog {
            (
                sgh::Subtopology::default()
                    .with_subtopology_id("0".into())
                    .with_state_changelog_topics(vec![topic]),
                "topology.subtopologies[0].stateChangelogTopics[0].topicConfigs[1].value",
            )
        } else {
            (
                sgh::Subtopology::default()
                    .with_subtopology_id("0".into())
                    .with_repartition_source_topics(vec![topic]),
                "topology.subtopologies[0].repartitionSourceTopics[0].topicConfigs[1].value",
            )
        };
        let body = sgh::StreamsGroupHeartbeatRequest::default()
            .with_group_id("app".into())
            .with_member_id("m".into())
            .with_topology(Some(
                sgh::Topology::default()
                    .with_epoch(1)
                    .with_subtopologies(vec![subtopology]),
            ));
        case(request(body, version), vec![text(path, PASSWORD)])
    }

    pub fn streams_describe(version: i16, changelog: bool) -> Case {
        let topic = sgd::TopicInfo::default()
            .with_name("app-store-changelog".into())
            .with_partitions(3)
            .with_topic_configs(vec![
                sgd::KeyValue::default()
                    .with_key("cleanup.policy".into())
                    .with_value("compact".into()),
                sgd::KeyValue::default()
                    .with_key(SECRET_NAME.into())
                    .with_value(PASSWORD.into()),
            ]);
        let (subtopology, path) = if changelog {
            (
                sgd::Subtopology::default()
                    .with_subtopology_id("0".into())
                    .with_state_changelog_topics(vec![topic]),
                "groups[0].topology.subtopologies[0].stateChangelogTopics[0].topicConfigs[1].value",
            )
        } else {
            (
                sgd::Subtopology::default()
                    .with_subtopology_id("0".into())
                    .with_repartition_source_topics(vec![topic]),
                "groups[0].topology.subtopologies[0].repartitionSourceTopics[0].topicConfigs[1].value",
            )
        };
        let body = sgd::StreamsGroupDescribeResponse::default().with_groups(vec![
            sgd::DescribedGroup::default()
                .with_group_id("app".into())
                .with_topology(Some(
                    sgd::Topology::default()
                        .with_epoch(1)
                        .with_subtopologies(Some(vec![subtopology])),
                )),
        ]);
        case(response(body, version), vec![text(path, PASSWORD)])
    }

    pub fn scram_upsertion(version: i16) -> Case {
        let body = scram::AlterUserScramCredentialsRequest::default()
            .with_deletions(vec![scram::ScramCredentialDeletion::default()
                .with_name("bob".into())
                .with_mechanism(2)])
            .with_upsertions(vec![scram::ScramCredentialUpsertion::default()
                .with_name("alice".into())
                .with_mechanism(1)
                .with_iterations(8192)
                .with_salt(Bytes::from_static(SALT))
                .with_salted_password(Bytes::from_static(SALTED_PASSWORD))]);
        case(
            request(body, version),
            vec![
                bytes("upsertions[0].salt", SALT),
                bytes("upsertions[0].saltedPassword", SALTED_PASSWORD),
            ],
        )
    }

    pub fn create_token(version: i16) -> Case {
        let body = cdt::CreateDelegationTokenResponse::default()
            .with_principal_type("User".into())
            .with_principal_name("alice".into())
            .with_token_id("0tL1qJ3dRDSg4TPxz1mB1w".into())
            .with_hmac(Bytes::from_static(HMAC));
        case(response(body, version), vec![bytes("hmac", HMAC)])
    }

    pub fn renew_token(version: i16) -> Case {
        let body = rdt::RenewDelegationTokenRequest::default()
            .with_hmac(Bytes::from_static(HMAC))
            .with_renew_period_ms(86_400_000);
        case(request(body, version), vec![bytes("hmac", HMAC)])
    }

    pub fn expire_token(version: i16) -> Case {
        let body = edt::ExpireDelegationTokenRequest::default()
            .with_hmac(Bytes::from_static(HMAC))
            .with_expiry_time_period_ms(-1);
        case(request(body, version), vec![bytes("hmac", HMAC)])
    }

    pub fn describe_tokens(version: i16) -> Case {
        let token = |id: &str, hmac: &'static [u8]| {
            ddt::DescribedDelegationToken::default()
                .with_principal_type("User".into())
                .with_principal_name("alice".into())
                .with_token_id(id.to_owned().into())
                .with_hmac(Bytes::from_static(hmac))
        };
        let body = ddt::DescribeDelegationTokenResponse::default()
            .with_tokens(vec![token("token-a", HMAC), token("token-b", HMAC_2)]);
        case(
            response(body, version),
            vec![
                bytes("tokens[0].hmac", HMAC),
                bytes("tokens[1].hmac", HMAC_2),
            ],
        )
    }

    /// A forwarded AlterConfigs request that sets a password.
    fn forwarded_request() -> Bytes {
        let inner = ac::AlterConfigsRequest::default().with_resources(vec![
            ac::AlterConfigsResource::default()
                .with_resource_type(4)
                .with_resource_name("1".into())
                .with_configs(vec![ac::AlterableConfig::default()
                    .with_name(SECRET_NAME.into())
                    .with_value(Some(PASSWORD.into()))]),
        ]);
        RequestFrame::new(inner, 2, 5)
            .with_client_id("adminclient-1")
            .encode_to_bytes()
            .unwrap()
    }

    pub fn envelope_request(version: i16) -> Case {
        let data = forwarded_request();
        let body = envq::EnvelopeRequest::default()
            .with_request_data(data.clone())
            .with_request_principal(Some(Bytes::from_static(b"\0\0\x04User\0\x05alice\0")))
            .with_client_host_address(Bytes::from_static(&[127, 0, 0, 1]));
        Case {
            frame: request(body, version),
            planted: vec![bytes("requestData", &data)],
            inside: vec![PASSWORD.as_bytes()],
        }
    }

    pub fn envelope_response(version: i16) -> Case {
        let inner = cdt::CreateDelegationTokenResponse::default()
            .with_principal_type("User".into())
            .with_principal_name("alice".into())
            .with_hmac(Bytes::from_static(HMAC));
        let data = ResponseFrame::new(inner, 3, 5).encode_to_bytes().unwrap();
        let body = envs::EnvelopeResponse::default().with_response_data(Some(data.clone()));
        Case {
            frame: response(body, version),
            planted: vec![bytes("responseData", &data)],
            inside: vec![HMAC],
        }
    }

    pub fn fetch(version: i16) -> Case {
        let topic = |name: &str, id: Uuid, records: &'static [u8]| {
            let (topic, topic_id) = if version >= 13 {
                (Default::default(), id)
            } else {
                (name.to_owned().into(), Uuid::ZERO)
            };
            fetch::FetchableTopicResponse::default()
                .with_topic(topic)
                .with_topic_id(topic_id)
                .with_partitions(vec![fetch::PartitionData::default()
                    .with_partition_index(0)
                    .with_high_watermark(10)
                    .with_records(Some(Bytes::from_static(records)))])
        };
        let orders = Uuid::from_halves(0x1234, 0x5678);
        let body = fetch::FetchResponse::default().with_responses(vec![
            topic("orders", orders, PLAIN_RECORDS),
            topic(METADATA_TOPIC, METADATA_TOPIC_ID, METADATA_RECORDS),
        ]);
        case(
            response(body, version),
            vec![bytes(
                "responses[1].partitions[0].records",
                METADATA_RECORDS,
            )],
        )
    }

    pub fn fetch_snapshot(version: i16) -> Case {
        let body =
            snap::FetchSnapshotResponse::default().with_topics(vec![snap::TopicSnapshot::default(
            )
            .with_name(METADATA_TOPIC.into())
            .with_partitions(vec![snap::PartitionSnapshot::default()
                .with_index(0)
                .with_size(METADATA_RECORDS.len() as i64)
                .with_unaligned_records(Bytes::from_static(METADATA_RECORDS))])]);
        case(
            response(body, version),
            vec![bytes(
                "topics[0].partitions[0].unalignedRecords",
                METADATA_RECORDS,
            )],
        )
    }
}

/// The message for a table entry, if the test knows one.
fn builder(secret: &Secret) -> Option<fn(i16) -> Case> {
    use Direction::{Request as Q, Response as R};
    Some(match (secret.api, secret.direction, secret.path) {
        (ApiKey::SaslAuthenticate, Q, "authBytes") => build::sasl_request,
        (ApiKey::SaslAuthenticate, R, "authBytes") => build::sasl_response,
        (ApiKey::CreateTopics, Q, "topics[].configs[].value") => build::create_topics_request,
        (ApiKey::CreateTopics, R, "topics[].configs[].value") => build::create_topics_response,
        (ApiKey::AlterConfigs, Q, "resources[].configs[].value") => build::alter_configs,
        (ApiKey::IncrementalAlterConfigs, Q, "resources[].configs[].value") => {
            build::incremental_alter_configs
        }
        (ApiKey::DescribeConfigs, R, "results[].configs[].value") => build::describe_configs_value,
        (ApiKey::DescribeConfigs, R, "results[].configs[].synonyms[].value") => {
            build::describe_configs_synonym
        }
        (
            ApiKey::StreamsGroupHeartbeat,
            Q,
            "topology.subtopologies[].stateChangelogTopics[].topicConfigs[].value",
        ) => |v| build::streams_heartbeat(v, true),
        (
            ApiKey::StreamsGroupHeartbeat,
            Q,
            "topology.subtopologies[].repartitionSourceTopics[].topicConfigs[].value",
        ) => |v| build::streams_heartbeat(v, false),
        (
            ApiKey::StreamsGroupDescribe,
            R,
            "groups[].topology.subtopologies[].stateChangelogTopics[].topicConfigs[].value",
        ) => |v| build::streams_describe(v, true),
        (
            ApiKey::StreamsGroupDescribe,
            R,
            "groups[].topology.subtopologies[].repartitionSourceTopics[].topicConfigs[].value",
        ) => |v| build::streams_describe(v, false),
        (
            ApiKey::AlterUserScramCredentials,
            Q,
            "upsertions[].salt" | "upsertions[].saltedPassword",
        ) => build::scram_upsertion,
        (ApiKey::CreateDelegationToken, R, "hmac") => build::create_token,
        (ApiKey::RenewDelegationToken, Q, "hmac") => build::renew_token,
        (ApiKey::ExpireDelegationToken, Q, "hmac") => build::expire_token,
        (ApiKey::DescribeDelegationToken, R, "tokens[].hmac") => build::describe_tokens,
        (ApiKey::Envelope, Q, "requestData") => build::envelope_request,
        (ApiKey::Envelope, R, "responseData") => build::envelope_response,
        (ApiKey::Fetch, R, "responses[].partitions[].records") => build::fetch,
        (ApiKey::FetchSnapshot, R, "topics[].partitions[].unalignedRecords") => {
            build::fetch_snapshot
        }
        _ => return None,
    })
}

fn write_text(pretty: bool, write: impl FnOnce(&mut dyn JsonSink)) -> String {
    let mut text = Vec::new();
    let mut writer = if pretty {
        JsonWriter::pretty(&mut text)
    } else {
        JsonWriter::compact(&mut text)
    };
    write(&mut writer);
    writer.finish().unwrap();
    String::from_utf8(text).unwrap()
}

/// Redacted JSON text and the paths reported.
fn write_redacted_text(
    api: ApiKey,
    direction: Direction,
    form: Form,
    pretty: bool,
    write: impl FnOnce(&mut dyn JsonSink),
) -> (String, Vec<String>) {
    let mut paths = Vec::new();
    let text = write_text(pretty, |out| {
        let mut redactor = Redactor::new(api, direction, form, out);
        write(&mut redactor);
        paths = redactor.into_redacted();
    });
    (text, paths)
}

/// The first form in which `secret` shows in `text`, if any: as text, as standard or URL-safe
/// base64 at each alignment within a longer value, or as hex.
fn leak(text: &str, secret: &[u8]) -> Option<String> {
    if let Ok(plain) = std::str::from_utf8(secret) {
        if text.contains(plain) {
            return Some(format!("text {plain:?}"));
        }
    }
    let mut forms = vec![STANDARD.encode(secret), URL_SAFE.encode(secret)];
    for skip in 0..3.min(secret.len()) {
        let rest = &secret[skip..];
        let whole = &rest[..rest.len() / 3 * 3];
        if whole.len() >= 6 {
            forms.push(STANDARD_NO_PAD.encode(whole));
            forms.push(URL_SAFE_NO_PAD.encode(whole));
        }
    }
    let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    forms.push(hex.to_uppercase());
    forms.push(hex);
    forms
        .into_iter()
        .find(|form| text.contains(form.as_str()))
        .map(|form| format!("encoded {form}"))
}

fn check_case(secret: &Secret, version: i16, case: &Case) {
    let what = format!(
        "{} {:?} v{version} {}",
        secret.api.name(),
        secret.direction,
        secret.path
    );
    let options = JsonOptions::default();
    assert!(
        case.planted
            .iter()
            .any(|p| strip_indices(&p.path) == secret.path),
        "{what}: no secret planted at the entry's path"
    );
    for (form, prefix) in [(Form::Frame, "body."), (Form::Body, "")] {
        for pretty in [false, true] {
            let write = |out: &mut dyn JsonSink| match form {
                Form::Frame => case.frame.write(&options, out),
                Form::Body => case.frame.write_body(&options, out),
            };
            let plain = write_text(pretty, write);
            let (redacted, paths) =
                write_redacted_text(secret.api, secret.direction, form, pretty, write);
            let mut expected = plain.clone();
            for planted in &case.planted {
                assert_eq!(
                    plain.matches(&planted.shown).count(),
                    1,
                    "{what}: the planted value is not unique in\n{plain}"
                );
                expected = expected.replacen(&planted.shown, &planted.marker, 1);
            }
            assert_eq!(redacted, expected, "{what} ({form:?}, pretty {pretty})");
            let want: Vec<String> = case
                .planted
                .iter()
                .map(|p| format!("{prefix}{}", p.path))
                .collect();
            assert_eq!(paths, want, "{what} ({form:?})");
            let secrets = case.planted.iter().map(|p| &p.secret[..]);
            for secret in secrets.chain(case.inside.iter().copied()) {
                // Shown without the adapter (so the search can find it), hidden with it.
                assert!(
                    leak(&plain, secret).is_some(),
                    "{what}: not found in\n{plain}"
                );
                if let Some(form) = leak(&redacted, secret) {
                    panic!("{what}: the secret shows as {form} in\n{redacted}");
                }
            }
            // The same through the fast-path helper, and into a tree.
            let mut via_helper = Vec::new();
            let mut writer = if pretty {
                JsonWriter::pretty(&mut via_helper)
            } else {
                JsonWriter::compact(&mut via_helper)
            };
            let helper_paths =
                redact::write_redacted(secret.api, secret.direction, form, &mut writer, |out| {
                    write(out);
                    Ok::<(), ()>(())
                })
                .unwrap();
            writer.finish().unwrap();
            assert_eq!(String::from_utf8(via_helper).unwrap(), expected);
            assert_eq!(helper_paths, want);
            if !pretty {
                let mut tree = ValueSink::new();
                let mut redactor = Redactor::new(secret.api, secret.direction, form, &mut tree);
                write(&mut redactor);
                drop(redactor);
                let expected: Value = serde_json::from_str(&expected).unwrap();
                assert_eq!(tree.finish(), expected, "{what}: as a tree");
            }
        }
    }
}

/// `a[3].b[0].c` -> `a[].b[].c`.
fn strip_indices(path: &str) -> String {
    let mut out = String::new();
    let mut in_index = false;
    for c in path.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push('[');
            }
            ']' => {
                in_index = false;
                out.push(']');
            }
            _ if in_index => {}
            _ => out.push(c),
        }
    }
    out
}

#[test]
fn every_table_entry_is_redacted_at_every_version_that_has_it() {
    let mut cells = 0;
    let mut missing = Vec::new();
    for secret in SECRETS {
        let Some(build) = builder(secret) else {
            missing.push(format!(
                "{} {:?} {}",
                secret.api.name(),
                secret.direction,
                secret.path
            ));
            continue;
        };
        let name = schema_name(secret.api, secret.direction);
        let versions = reach(message(&name), secret.path).unwrap().versions;
        for version in versions.min..=versions.max {
            check_case(secret, version, &build(version));
            cells += 1;
        }
    }
    assert!(
        missing.is_empty(),
        "table entries without a test message:\n  {}",
        missing.join("\n  ")
    );
    eprintln!("{} entries, {cells} (entry, version) cells", SECRETS.len());
}

// ---------------------------------------------------------------------------------------------
// What is shown, and the edges.

/// The body of `body` at `version` as compact JSON: plain, and redacted with the paths.
fn body_texts(
    api: ApiKey,
    direction: Direction,
    write: impl Fn(&mut dyn JsonSink),
) -> (String, String, Vec<String>) {
    let plain = write_text(false, &write);
    let (redacted, paths) = write_redacted_text(api, direction, Form::Body, false, &write);
    (plain, redacted, paths)
}

fn alter_configs(configs: &[(&str, Option<&str>)]) -> impl Fn(&mut dyn JsonSink) {
    use kafka_codec::messages::alter_configs_request as ac;
    let body =
        ac::AlterConfigsRequest::default().with_resources(vec![ac::AlterConfigsResource::default(
        )
        .with_resource_type(4)
        .with_resource_name("1".into())
        .with_configs(
            configs
                .iter()
                .map(|(name, value)| {
                    ac::AlterableConfig::default()
                        .with_name(name.to_string().into())
                        .with_value(value.map(|v| v.to_owned().into()))
                })
                .collect(),
        )]);
    move |out| {
        kafka_codec::Message::write_json_with(&body, 2, &JsonOptions::default(), out).unwrap()
    }
}

#[test]
fn values_of_ordinary_configs_are_shown() {
    let write = alter_configs(&[
        (PLAIN_NAME, Some(PLAIN_VALUE)),
        ("ssl.keystore.location", Some("/etc/kafka/broker.jks")),
        ("sasl.mechanism", Some("SCRAM-SHA-512")),
        ("listener.name.sasl_ssl.ssl.keystore.type", Some("PKCS12")),
    ]);
    let (plain, redacted, paths) = body_texts(ApiKey::AlterConfigs, Direction::Request, write);
    assert_eq!(redacted, plain);
    assert!(paths.is_empty());
    assert!(plain.contains("/etc/kafka/broker.jks"));
}

#[test]
fn null_secrets_stay_null_and_are_not_reported() {
    let write = alter_configs(&[(SECRET_NAME, None), ("sasl.jaas.config", None)]);
    let (plain, redacted, paths) = body_texts(ApiKey::AlterConfigs, Direction::Request, write);
    assert_eq!(redacted, plain);
    assert!(plain.contains(r#""value":null"#));
    assert!(paths.is_empty());

    use kafka_codec::messages::envelope_response::EnvelopeResponse;
    let body = EnvelopeResponse::default()
        .with_response_data(None)
        .with_error_code(41);
    let (plain, redacted, paths) = body_texts(ApiKey::Envelope, Direction::Response, |out| {
        kafka_codec::Message::write_json_with(&body, 0, &JsonOptions::default(), out).unwrap()
    });
    assert_eq!(redacted, plain);
    assert!(paths.is_empty());
}

#[test]
fn empty_secrets_become_markers_of_zero_bytes() {
    let write = alter_configs(&[(SECRET_NAME, Some("")), (PLAIN_NAME, Some(""))]);
    let (plain, redacted, paths) = body_texts(ApiKey::AlterConfigs, Direction::Request, write);
    assert_eq!(
        redacted,
        plain.replacen(r#""value":"""#, r#""value":"<redacted: 0 bytes>""#, 1)
    );
    assert_ne!(redacted, plain);
    assert_eq!(paths, ["resources[0].configs[0].value"]);

    // SASL/PLAIN's answer is empty.
    use kafka_codec::messages::sasl_authenticate_response::SaslAuthenticateResponse;
    let body = SaslAuthenticateResponse::default();
    let (_, redacted, paths) = body_texts(ApiKey::SaslAuthenticate, Direction::Response, |out| {
        kafka_codec::Message::write_json_with(&body, 2, &JsonOptions::default(), out).unwrap()
    });
    assert!(
        redacted.contains(r#""authBytes":"<redacted: 0 bytes>""#),
        "{redacted}"
    );
    assert_eq!(paths, ["authBytes"]);
}

/// Writes `value` token by token (keys in their order) through a redactor for `api`.
fn redact_tokens(api: ApiKey, direction: Direction, value: &Value) -> (Value, Vec<String>) {
    fn tokens(out: &mut dyn JsonSink, value: &Value) {
        match value {
            Value::Object(object) => {
                out.begin_object();
                for (key, value) in object {
                    out.key(key);
                    tokens(out, value);
                }
                out.end_object();
            }
            Value::Array(values) => {
                out.begin_array();
                for value in values {
                    tokens(out, value);
                }
                out.end_array();
            }
            Value::String(s) => out.str(s),
            Value::Null => out.null(),
            Value::Bool(b) => out.bool(*b),
            Value::Number(n) => out.i64(n.as_i64().unwrap()),
        }
    }
    let mut tree = ValueSink::new();
    let mut redactor = Redactor::new(api, direction, Form::Body, &mut tree);
    tokens(&mut redactor, value);
    let paths = redactor.into_redacted();
    (tree.finish(), paths)
}

#[test]
fn a_value_whose_name_comes_after_it_or_is_no_string_is_redacted() {
    let input = json!({"resources": [{"configs": [
        {"value": "hunter2", "name": PLAIN_NAME},
        {"name": 7, "value": "hunter3"},
        {"value": "hunter4"},
        {"name": PLAIN_NAME, "value": "shown"},
    ]}]});
    let (output, paths) = redact_tokens(ApiKey::AlterConfigs, Direction::Request, &input);
    assert_eq!(
        output,
        json!({"resources": [{"configs": [
            {"value": "<redacted: 7 bytes>", "name": PLAIN_NAME},
            {"name": 7, "value": "<redacted: 7 bytes>"},
            {"value": "<redacted: 7 bytes>"},
            {"name": PLAIN_NAME, "value": "shown"},
        ]}]})
    );
    assert_eq!(
        paths,
        [
            "resources[0].configs[0].value",
            "resources[0].configs[1].value",
            "resources[0].configs[2].value",
        ]
    );
}

#[test]
fn fetch_records_are_hidden_only_in_the_metadata_log() {
    let records = STANDARD.encode(METADATA_RECORDS);
    let input = json!({"responses": [
        {"topic": "orders", "partitions": [{"partitionIndex": 0, "records": records}]},
        {"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "partitions": [{"records": records}]},
        {"partitions": [{"records": records}]},
        {"topic": "orders", "partitions": [{"records": null}]},
    ]});
    let (output, paths) = redact_tokens(ApiKey::Fetch, Direction::Response, &input);
    // Handed over as base64 text, they still count as the bytes they are.
    let marker = format!("<redacted: {} bytes>", METADATA_RECORDS.len());
    assert_eq!(
        output,
        json!({"responses": [
            {"topic": "orders", "partitions": [{"partitionIndex": 0, "records": records}]},
            {"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "partitions": [{"records": marker}]},
            {"partitions": [{"records": marker}]},
            {"topic": "orders", "partitions": [{"records": null}]},
        ]})
    );
    assert_eq!(
        paths,
        [
            "responses[1].partitions[0].records",
            "responses[2].partitions[0].records",
        ]
    );
}

/// Shows records as a structure, the way the command-line tool's `--records` does, either as
/// one [`Value`] or token by token.
struct ShowRecords {
    whole: bool,
}

impl ShowRecords {
    fn json(records: &Bytes) -> Value {
        json!([{"baseOffset": 0, "records": [{"value": String::from_utf8_lossy(records)}]}])
    }
}

impl RecordsJson for ShowRecords {
    fn write_records_json(&self, records: &Bytes, out: &mut dyn JsonSink) -> Result<(), String> {
        let value = Self::json(records);
        if self.whole {
            out.value(&value);
        } else {
            out.begin_array();
            out.begin_object();
            out.key("baseOffset");
            out.i64(0);
            out.key("records");
            out.begin_array();
            out.begin_object();
            out.key("value");
            out.str(value[0]["records"][0]["value"].as_str().unwrap());
            out.end_object();
            out.end_array();
            out.end_object();
            out.end_array();
        }
        Ok(())
    }

    fn records_from_json(&self, _value: &Value) -> Result<Bytes, String> {
        Err("not read here".into())
    }
}

#[test]
fn records_a_hook_shows_as_a_structure_are_hidden_whole() {
    for whole in [true, false] {
        for version in [12, 17] {
            let case = build::fetch(version);
            let hook = ShowRecords { whole };
            let options = JsonOptions {
                records: Some(&hook),
                ..Default::default()
            };
            let plain = write_text(false, |out| case.frame.write(&options, out));
            let (redacted, paths) = write_redacted_text(
                ApiKey::Fetch,
                Direction::Response,
                Form::Frame,
                false,
                |out| case.frame.write(&options, out),
            );
            let shown =
                serde_json::to_string(&ShowRecords::json(&Bytes::from_static(METADATA_RECORDS)))
                    .unwrap();
            assert_eq!(plain.matches(&shown).count(), 1);
            let marker = format!("\"<redacted: {} bytes of JSON>\"", shown.len());
            assert_eq!(
                redacted,
                plain.replacen(&shown, &marker, 1),
                "whole {whole}"
            );
            assert_eq!(paths, ["body.responses[1].partitions[0].records"]);
            assert!(leak(&plain, b"s3cr3t-stored-key").is_some());
            assert!(leak(&redacted, b"s3cr3t-stored-key").is_none());
            assert!(
                redacted.contains("an ordinary record value"),
                "other topics show"
            );
        }
    }
}

#[test]
fn apis_without_secrets_are_written_straight_through() {
    use kafka_codec::messages::metadata_request::{MetadataRequest, MetadataRequestTopic};
    assert!(!redact::has_secrets(ApiKey::Metadata, Direction::Request));
    assert!(!redact::has_secrets(ApiKey::Produce, Direction::Request));
    assert!(!redact::has_secrets(
        ApiKey::SaslHandshake,
        Direction::Request
    ));
    for secret in SECRETS {
        assert!(redact::has_secrets(secret.api, secret.direction));
    }
    let body = MetadataRequest::default().with_topics(Some(vec![
        MetadataRequestTopic::default().with_name(Some("ssl.key.password".into()))
    ]));
    let frame = request(body, 12);
    let options = JsonOptions::default();
    let plain = write_text(false, |out| frame.write(&options, out));
    let mut text = Vec::new();
    let mut writer = JsonWriter::compact(&mut text);
    let paths = redact::write_redacted(
        ApiKey::Metadata,
        Direction::Request,
        Form::Frame,
        &mut writer,
        |out| {
            frame.write(&options, out);
            Ok::<(), ()>(())
        },
    )
    .unwrap();
    writer.finish().unwrap();
    assert_eq!(String::from_utf8(text).unwrap(), plain);
    assert!(paths.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Random messages of every API: only secrets change, and every secret does.

/// A table path as steps: `Some(key)` or `None` for "every element".
fn steps(path: &str) -> Vec<Option<&str>> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let key = part.trim_end_matches("[]");
        out.push(Some(key));
        for _ in 0..(part.len() - key.len()) / 2 {
            out.push(None);
        }
    }
    out
}

/// Where the rules of `api`'s `direction` say a redaction belongs in `value`, worked out on
/// the tree: each (concrete path, table path), in document order.
fn oracle(api: ApiKey, direction: Direction, value: &Value) -> Vec<(String, &'static str)> {
    fn walk<'v>(
        secret: &'static Secret,
        steps: &[Option<&str>],
        value: &'v Value,
        path: String,
        chain: &mut Vec<&'v Value>,
        out: &mut Vec<(String, &'static str)>,
    ) {
        let Some((step, rest)) = steps.split_first() else {
            if !value.is_null() && redacts(secret, chain) {
                out.push((path, secret.path));
            }
            return;
        };
        chain.push(value);
        match step {
            Some(key) => {
                if let Some(inner) = value.get(key) {
                    let sep = if path.is_empty() { "" } else { "." };
                    walk(secret, rest, inner, format!("{path}{sep}{key}"), chain, out);
                }
            }
            None => {
                for (i, inner) in value.as_array().into_iter().flatten().enumerate() {
                    walk(secret, rest, inner, format!("{path}[{i}]"), chain, out);
                }
            }
        }
        chain.pop();
    }
    /// `chain` holds the containers from the body down to the value's object.
    fn redacts(secret: &Secret, chain: &[&Value]) -> bool {
        match secret.when {
            When::Always => true,
            When::SecretConfigName { key } => {
                let object = chain.last().and_then(|v| v.as_object()).unwrap();
                let value_key = secret.path.rsplit('.').next().unwrap();
                let keys: Vec<&String> = object.keys().collect();
                let name_at = keys.iter().position(|k| *k == key);
                let value_at = keys.iter().position(|k| *k == value_key).unwrap();
                match (name_at, object.get(key).and_then(Value::as_str)) {
                    (Some(at), Some(name)) if at < value_at => is_secret_config_name(name),
                    _ => true,
                }
            }
            When::MetadataTopic { element } => {
                let element = chain[steps(element).len()].as_object().unwrap();
                let topic = element.get("topic").and_then(Value::as_str);
                let id = element.get("topicId").and_then(Value::as_str);
                (topic.is_none() && id.is_none())
                    || topic == Some(METADATA_TOPIC)
                    || id == Some(&METADATA_TOPIC_ID.to_string())
            }
        }
    }
    let mut out = Vec::new();
    for secret in redact::secrets(api, direction) {
        walk(
            secret,
            &steps(secret.path),
            value,
            String::new(),
            &mut Vec::new(),
            &mut out,
        );
    }
    // Document order: the order in which the paths' values are written.
    out.sort_by_key(|(path, _)| path_order(value, path));
    out
}

/// The value at a concrete path (`a[1].b`).
fn locate<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    let mut at = value;
    for part in path.split('.') {
        let (key, indices) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !key.is_empty() {
            at = at.get(key)?;
        }
        for index in indices.split(['[', ']']).filter(|s| !s.is_empty()) {
            at = at.get(index.parse::<usize>().ok()?)?;
        }
    }
    Some(at)
}

fn locate_mut<'v>(value: &'v mut Value, path: &str) -> Option<&'v mut Value> {
    let mut at = value;
    for part in path.split('.') {
        let (key, indices) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !key.is_empty() {
            at = at.get_mut(key)?;
        }
        for index in indices.split(['[', ']']).filter(|s| !s.is_empty()) {
            at = at.get_mut(index.parse::<usize>().ok()?)?;
        }
    }
    Some(at)
}

/// A sort key giving document order: each step's position among its siblings.
fn path_order(value: &Value, path: &str) -> Vec<usize> {
    let mut order = Vec::new();
    let mut at = value;
    for part in path.split('.') {
        let (key, indices) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !key.is_empty() {
            let object = at.as_object().unwrap();
            order.push(object.keys().position(|k| k == key).unwrap());
            at = &object[key];
        }
        for index in indices.split(['[', ']']).filter(|s| !s.is_empty()) {
            let index: usize = index.parse().unwrap();
            order.push(index);
            at = &at[index];
        }
    }
    order
}

/// The marker a value at `table_path` must become.
fn expected_marker(api: ApiKey, direction: Direction, table_path: &str, value: &Value) -> String {
    let name = schema_name(api, direction);
    let field = reach(message(&name), table_path).unwrap().field.ty.clone();
    let text = value.as_str().expect("secret fields are strings or bytes");
    match field {
        FieldType::Primitive(Primitive::String) => format!("<redacted: {} bytes>", text.len()),
        _ => format!(
            "<redacted: {} bytes>",
            STANDARD.decode(text).expect("base64").len()
        ),
    }
}

/// Checks a redacted tree against the plain one: the reported paths are the oracle's, hold
/// the right markers, and putting the plain values back gives the plain tree.
fn check_tree(
    api: ApiKey,
    direction: Direction,
    plain: &Value,
    redacted: &Value,
    paths: &[String],
    covered: &mut HashSet<(ApiKey, Direction, &'static str)>,
) -> Result<(), String> {
    let expected = oracle(api, direction, plain);
    let expected_paths: Vec<&str> = expected.iter().map(|(p, _)| p.as_str()).collect();
    if paths != expected_paths {
        return Err(format!("reported {paths:?}, expected {expected_paths:?}"));
    }
    let mut restored = redacted.clone();
    for (path, table_path) in &expected {
        let plain_value = locate(plain, path).unwrap();
        let marker = expected_marker(api, direction, table_path, plain_value);
        let slot = locate_mut(&mut restored, path).ok_or(format!("{path} missing"))?;
        if slot.as_str() != Some(marker.as_str()) {
            return Err(format!("{path}: {slot} is not {marker:?}"));
        }
        *slot = plain_value.clone();
        covered.insert((api, direction, table_path));
    }
    if &restored != plain {
        return Err(format!(
            "more than the secrets changed:\n{redacted}\n{plain}"
        ));
    }
    Ok(())
}

/// Sets, at random, config names to a secret one and topics to the metadata log's, so that
/// the conditions of the table meet both outcomes.
fn plant_names(value: &mut Value, rng: &mut SmallRng) {
    match value {
        Value::Object(object) => {
            for (key, inner) in object.iter_mut() {
                let coin = rng.next_u32() % 2 == 0;
                match (key.as_str(), &*inner) {
                    ("name" | "key", Value::String(_)) if coin => *inner = Value::from(SECRET_NAME),
                    ("topic", Value::String(_)) if coin => *inner = Value::from(METADATA_TOPIC),
                    ("topicId", Value::String(_)) if coin => {
                        *inner = Value::from(METADATA_TOPIC_ID.to_string())
                    }
                    _ => plant_names(inner, rng),
                }
            }
        }
        Value::Array(values) => values.iter_mut().for_each(|v| plant_names(v, rng)),
        _ => {}
    }
}

struct RandomCheck {
    rng: SmallRng,
    cells: usize,
    /// The table entries that redacted something, by API and path.
    covered: HashSet<(ApiKey, Direction, &'static str)>,
    failures: Vec<String>,
}

const RANDOM_CASES: usize = 4;

impl RandomMessageVisitor for RandomCheck {
    fn visit<M: MessageCodec + Random>(&mut self) {
        let direction = match M::KIND {
            MessageKind::Request => Direction::Request,
            MessageKind::Response => Direction::Response,
            _ => return,
        };
        let api = ApiKey::from_key(M::API_KEY.unwrap()).unwrap();
        let options = JsonOptions::default();
        for version in M::VALID_VERSIONS.min..=M::VALID_VERSIONS.max {
            self.cells += 1;
            for _ in 0..RANDOM_CASES {
                let mut entropy = vec![0u8; 4096];
                self.rng.fill_bytes(&mut entropy);
                let message = M::random(
                    &mut Unstructured::new(&entropy),
                    version,
                    &RandomOptions::default(),
                )
                .unwrap();
                let plain =
                    ValueSink::collect(|out| message.write_json_with(version, &options, out))
                        .unwrap();
                // Token by token, as the generated writer goes.
                let mut tree = ValueSink::new();
                let mut redactor = Redactor::new(api, direction, Form::Body, &mut tree);
                message
                    .write_json_with(version, &options, &mut redactor)
                    .unwrap();
                let paths = redactor.into_redacted();
                let redacted = tree.finish();
                if let Err(e) =
                    check_tree(api, direction, &plain, &redacted, &paths, &mut self.covered)
                {
                    self.failures.push(format!("{} v{version}: {e}", M::NAME));
                }
                // As one tree, with secret names and the metadata topic planted.
                let mut planted = plain.clone();
                plant_names(&mut planted, &mut self.rng);
                let mut tree = ValueSink::new();
                let mut redactor = Redactor::new(api, direction, Form::Body, &mut tree);
                redactor.value(&planted);
                let paths = redactor.into_redacted();
                let redacted = tree.finish();
                if let Err(e) = check_tree(
                    api,
                    direction,
                    &planted,
                    &redacted,
                    &paths,
                    &mut self.covered,
                ) {
                    self.failures
                        .push(format!("{} v{version} (planted): {e}", M::NAME));
                }
            }
        }
    }
}

#[test]
fn random_messages_of_every_api_lose_their_secrets_and_nothing_else() {
    let mut check = RandomCheck {
        rng: SmallRng::seed_from_u64(20),
        cells: 0,
        covered: HashSet::new(),
        failures: Vec::new(),
    };
    kafka_codec::visit_random_messages(&mut check);
    assert!(check.cells > 400, "only {} cells", check.cells);
    assert!(
        check.failures.is_empty(),
        "{} failures:\n{}",
        check.failures.len(),
        check.failures.join("\n")
    );
    // Every entry met a value to redact: random values for the unconditional ones, planted
    // names and topics for the others.
    let missed: Vec<_> = SECRETS
        .iter()
        .filter(|s| !check.covered.contains(&(s.api, s.direction, s.path)))
        .map(|s| format!("{} {:?} {}", s.api.name(), s.direction, s.path))
        .collect();
    assert!(
        missed.is_empty(),
        "never redacted:\n  {}",
        missed.join("\n  ")
    );
    eprintln!("{} cells, every entry redacted", check.cells);
}
