//! Kafka's JSON form read from hostile text: every kind of type confusion is a typed
//! `JsonError` naming the field by its JSON key, never a panic; what does read is only what
//! the version can be written with; and nothing typed is dropped silently (unknown and
//! repeated keys are refused unless the reader is lenient).

use kafka_codec::json::{parse, JsonOptions};
use kafka_codec::messages::{
    DescribeQuorumRequest, FetchRequest, MetadataRequest, SaslAuthenticateRequest,
};
use kafka_codec::{EncodeErrorKind, JsonError, JsonErrorKind, Message, RequestFrame};
use serde_json::{json, Value};

fn metadata(value: Value, version: i16) -> Result<MetadataRequest, JsonError> {
    MetadataRequest::from_json(&value, version)
}

#[track_caller]
fn assert_json_error(
    result: Result<impl std::fmt::Debug, JsonError>,
    kind: JsonErrorKind,
    path: &str,
) {
    let error = result.expect_err("refused");
    assert_eq!(error.kind(), &kind, "{error}");
    assert_eq!(error.path().to_string(), path, "{error}");
}

#[test]
fn json_type_confusion_is_a_typed_error() {
    let wrong = |expected, found| JsonErrorKind::WrongType { expected, found };
    assert_json_error(metadata(json!([]), 4), wrong("an object", "an array"), "");
    assert_json_error(
        metadata(json!({"topics": {}, "allowAutoTopicCreation": true}), 4),
        wrong("an array", "an object"),
        "topics",
    );
    assert_json_error(
        metadata(
            json!({"topics": [{"name": 7}], "allowAutoTopicCreation": true}),
            4,
        ),
        wrong("a string", "a number"),
        "topics[0].name",
    );
    assert_json_error(
        metadata(json!({"topics": [], "allowAutoTopicCreation": "yes"}), 4),
        wrong("a boolean", "a string"),
        "allowAutoTopicCreation",
    );
    assert_json_error(
        SaslAuthenticateRequest::from_json(&json!({"authBytes": [1, 2]}), 0),
        wrong("a base64 string", "an array"),
        "authBytes",
    );
}

#[test]
fn json_numbers_out_of_range_or_not_integers_are_refused() {
    for (value, text) in [
        (json!(65536), "65536"),
        (json!(-32769), "-32769"),
        (json!(1.5), "1.5"),
        (json!(u64::MAX), "18446744073709551615"),
    ] {
        let frame = json!({
            "header": {"requestApiKey": 18, "requestApiVersion": value, "correlationId": 1, "clientId": "c"},
            "body": {},
        });
        let error = RequestFrame::from_json(&frame).expect_err("refused");
        assert_eq!(
            error.kind(),
            &JsonErrorKind::OutOfRange {
                value: text.into(),
                ty: "int16"
            },
            "{error}"
        );
    }
}

#[test]
fn json_missing_fields_nulls_base64_and_uuids_are_checked() {
    assert_json_error(
        metadata(json!({"topics": []}), 4),
        JsonErrorKind::MissingField,
        "allowAutoTopicCreation",
    );
    assert_json_error(
        metadata(json!({"topics": [], "allowAutoTopicCreation": null}), 4),
        JsonErrorKind::WrongType {
            expected: "a boolean",
            found: "null",
        },
        "allowAutoTopicCreation",
    );
    assert_json_error(
        SaslAuthenticateRequest::from_json(&json!({"authBytes": "not base64!"}), 0),
        JsonErrorKind::InvalidBase64,
        "authBytes",
    );
    assert_json_error(
        metadata(
            json!({"topics": [{"topicId": "not-a-uuid", "name": null}], "allowAutoTopicCreation": true,
                   "includeTopicAuthorizedOperations": false}),
            12,
        ),
        JsonErrorKind::InvalidUuid("not-a-uuid".into()),
        "topics[0].topicId",
    );
    let long = "x".repeat(32768);
    assert_json_error(
        metadata(
            json!({"topics": [{"name": long}], "allowAutoTopicCreation": true}),
            4,
        ),
        JsonErrorKind::StringTooLong(32768),
        "topics[0].name",
    );
}

#[test]
fn json_read_at_one_version_is_written_only_if_the_version_can_carry_it() {
    // `Name` is nullable only from version 10: JSON may say null (Kafka's converters read it
    // too), but writing version 4 refuses it instead of inventing a value.
    let message = metadata(
        json!({"topics": [{"name": null}], "allowAutoTopicCreation": true}),
        4,
    )
    .unwrap();
    let error = message.encode_to_vec(4).unwrap_err();
    assert_eq!(error.kind(), &EncodeErrorKind::NullNotAllowed);
    assert_eq!(error.path().to_string(), "Topics[0].Name");
}

#[test]
fn json_nested_beyond_serde_limits_is_a_parse_error() {
    // serde_json stops at 128 levels, so hostile nesting never reaches the codec.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(serde_json::from_str::<Value>(&deep).is_err());
}

#[test]
fn an_unknown_key_is_refused_with_its_path_unless_lenient() {
    // The issue's example: `partitionIdx` for `partitionIndex`.
    let typo = json!({"topics": [{"topicName": "t", "partitions": [{"partitionIdx": 5}]}]});
    let error = DescribeQuorumRequest::from_json(&typo, 0).expect_err("refused");
    assert_eq!(
        error.kind(),
        &JsonErrorKind::UnknownField("partitionIdx".into())
    );
    assert_eq!(error.path().to_string(), "topics[0].partitions[0]");
    assert!(error.to_string().contains("\"partitionIdx\""), "{error}");
    // Lenient: Kafka's reader's tolerance, the key is dropped (and the required
    // `partitionIndex` is then missing, as Kafka says too).
    let error = DescribeQuorumRequest::from_json_with(&typo, 0, &JsonOptions::lenient())
        .expect_err("partitionIndex is required");
    assert_eq!(error.kind(), &JsonErrorKind::MissingField);
    assert_eq!(
        error.path().to_string(),
        "topics[0].partitions[0].partitionIndex"
    );

    // A misspelled tagged field: it would vanish from the bytes with exit 0.
    let mut fetch = FetchRequest::default().to_json(12).unwrap();
    fetch["clusterID"] = "my-cluster".into();
    let error = FetchRequest::from_json(&fetch, 12).expect_err("refused");
    assert_eq!(
        error.kind(),
        &JsonErrorKind::UnknownField("clusterID".into())
    );
    assert_eq!(error.path().to_string(), "");
    let lenient = FetchRequest::from_json_with(&fetch, 12, &JsonOptions::lenient()).unwrap();
    assert_eq!(
        lenient,
        FetchRequest::default(),
        "lenient drops it, as Kafka does"
    );
    fetch.as_object_mut().unwrap().remove("clusterID");
    fetch["clusterId"] = "my-cluster".into();
    let read = FetchRequest::from_json(&fetch, 12).unwrap();
    assert_eq!(read.cluster_id.as_deref(), Some("my-cluster"));

    // The frame's own keys are checked too.
    let frame = json!({
        "header": {"requestApiKey": 18, "requestApiVersion": 0, "correlationId": 1, "clientId": "c"},
        "body": {},
        "bodyy": {},
    });
    let error = RequestFrame::from_json(&frame).expect_err("refused");
    assert_eq!(error.kind(), &JsonErrorKind::UnknownField("bodyy".into()));
}

#[test]
fn a_key_of_another_version_follows_kafkas_rules_not_the_unknown_key_rule() {
    // `topicId` exists from MetadataRequest v10: at v4 it is not an unknown key. It is
    // ignorable, so v4 drops it, as Kafka does (the oracle compares every such case).
    let value = json!({"topics": [{"name": "t", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"}],
                       "allowAutoTopicCreation": true});
    let message = metadata(value, 4).expect("not an unknown key");
    let without = metadata(
        json!({"topics": [{"name": "t"}], "allowAutoTopicCreation": true}),
        4,
    )
    .unwrap();
    assert_eq!(
        message.encode_to_vec(4).unwrap(),
        without.encode_to_vec(4).unwrap()
    );
}

#[test]
fn a_key_given_twice_is_refused_with_its_path_unless_lenient() {
    // The issue's example: a second `requestApiKey` silently switched the API.
    let text = br#"{"header": {"requestApiKey": 18, "requestApiVersion": 0,
                    "correlationId": 1, "clientId": "c", "requestApiKey": 3}, "body": {}}"#;
    let error = parse(text, &JsonOptions::default()).expect_err("refused");
    assert_eq!(
        error.kind(),
        &JsonErrorKind::DuplicateKey {
            key: "requestApiKey".into(),
            path: "header".into()
        }
    );
    assert!(error.to_string().contains("requestApiKey"), "{error}");
    // Deeper: the path names array elements.
    let text = br#"{"topics": [{"name": "a"}, {"name": "b", "name": "c"}]}"#;
    let error = parse(text, &JsonOptions::default()).expect_err("refused");
    assert_eq!(
        error.kind(),
        &JsonErrorKind::DuplicateKey {
            key: "name".into(),
            path: "topics[1]".into()
        }
    );
    let text = br#"{"a": 1, "a": 2}"#;
    let error = parse(text, &JsonOptions::default()).expect_err("refused");
    assert!(error.to_string().contains("the top level"), "{error}");
    // Lenient: the last value wins, as in serde_json and Kafka's reader.
    let text = br#"{"header": {"requestApiKey": 18, "requestApiVersion": 0,
                    "correlationId": 1, "clientId": "c", "requestApiKey": 3}, "body": {}}"#;
    let value = parse(text, &JsonOptions::lenient()).unwrap();
    assert_eq!(value["header"]["requestApiKey"], 3);
    // Strict parsing gives the same value as serde_json when nothing repeats.
    let text = br#"{"a": [1, -2, 3.5, "x", null, true, {"b": {}}], "c": 18446744073709551615}"#;
    assert_eq!(
        parse(text, &JsonOptions::default()).unwrap(),
        serde_json::from_slice::<Value>(text).unwrap()
    );
    let error = parse(b"{\"a\": }", &JsonOptions::default()).expect_err("syntax");
    assert!(matches!(error.kind(), JsonErrorKind::Syntax(_)), "{error}");
}

#[test]
fn an_error_quotes_at_most_64_characters_of_a_value() {
    // The issue's example: a 50 MB invalid uuid string was echoed whole.
    let huge = "x".repeat(50 * 1024 * 1024);
    let value = json!({"topics": [{"topicId": huge, "name": null}], "allowAutoTopicCreation": true,
                       "includeTopicAuthorizedOperations": false});
    let error = metadata(value, 12).expect_err("refused");
    let JsonErrorKind::InvalidUuid(quoted) = error.kind() else {
        panic!("{error}");
    };
    assert!(
        quoted.starts_with(&"x".repeat(64)) && quoted.len() < 100,
        "{quoted}"
    );
    assert!(error.to_string().len() < 200);
    // A huge unknown key likewise.
    let mut object = serde_json::Map::new();
    object.insert(huge.clone(), Value::Null);
    let error = DescribeQuorumRequest::from_json(&Value::Object(object), 0).expect_err("refused");
    assert!(error.to_string().len() < 200);
    let text = format!("{{\"{huge}\": 1, \"{huge}\": 2}}");
    let error = parse(text.as_bytes(), &JsonOptions::default()).expect_err("refused");
    assert!(error.to_string().len() < 200);
}

/// Reads `text` both ways, from the text token by token and from its tree: the two must agree
/// (same frame, or same error kind and path).
fn both_request(text: &str, options: &JsonOptions<'_>) -> Result<RequestFrame, JsonError> {
    let from_text = RequestFrame::from_json_with(text.as_bytes(), options);
    let value: Value = serde_json::from_str(text).unwrap();
    let from_tree = RequestFrame::from_json_with(&value, options);
    match (&from_text, &from_tree) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(a), Err(b)) => {
            assert_eq!(a.kind(), b.kind());
            assert_eq!(a.path(), b.path());
        }
        _ => panic!("text {from_text:?} but tree {from_tree:?}"),
    }
    from_text
}

#[test]
fn text_is_read_as_its_tree_is_with_the_same_errors_and_paths() {
    let strict = JsonOptions::default();
    let frame = |body: &str| {
        format!(
            r#"{{"header": {{"requestApiKey": 3, "requestApiVersion": 12, "correlationId": 7,
                "clientId": "c"}}, "body": {body}}}"#
        )
    };
    let good = r#"{"topics": [{"topicId": "AAAAAAAAAAAAAAAAAAAAAQ", "name": "t"}],
                   "allowAutoTopicCreation": true, "includeTopicAuthorizedOperations": false}"#;
    let read = both_request(&frame(good), &strict).unwrap();
    assert_eq!(read.header.correlation_id, 7);
    for (body, kind, path) in [
        (
            r#"{"topics": [{"topicId": "x", "name": "t"}], "allowAutoTopicCreation": true,
                "includeTopicAuthorizedOperations": false}"#,
            JsonErrorKind::InvalidUuid("x".into()),
            "body.topics[0].topicId",
        ),
        (
            r#"{"topics": [], "allowAutoTopicCreation": true}"#,
            JsonErrorKind::MissingField,
            "body.includeTopicAuthorizedOperations",
        ),
        (
            r#"{"topics": [{"nme": "t"}], "allowAutoTopicCreation": true,
                "includeTopicAuthorizedOperations": false}"#,
            JsonErrorKind::UnknownField("nme".into()),
            "body.topics[0]",
        ),
        (
            r#"{"topics": null, "allowAutoTopicCreation": 1,
                "includeTopicAuthorizedOperations": false}"#,
            JsonErrorKind::WrongType {
                expected: "a boolean",
                found: "a number",
            },
            "body.allowAutoTopicCreation",
        ),
        (
            r#"{"topics": [{"name": 70000}], "allowAutoTopicCreation": true,
                "includeTopicAuthorizedOperations": false}"#,
            JsonErrorKind::WrongType {
                expected: "a string",
                found: "a number",
            },
            "body.topics[0].name",
        ),
    ] {
        let error = both_request(&frame(body), &strict).expect_err(body);
        assert_eq!(error.kind(), &kind, "{error}");
        assert_eq!(error.path().to_string(), path, "{error}");
    }
    // Lenient reading drops the unknown key in both.
    let typo = r#"{"topics": [{"nme": "t", "name": "u", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"}],
                   "allowAutoTopicCreation": true,
                   "includeTopicAuthorizedOperations": false}"#;
    both_request(&frame(typo), &JsonOptions::lenient()).unwrap();
}

#[test]
fn text_refuses_a_key_given_twice_with_its_path_wherever_it_is() {
    // Only text can say a key twice (a tree has kept one of the two).
    let strict = JsonOptions::default();
    for (text, key, path) in [
        (
            r#"{"header": {"requestApiKey": 18, "requestApiVersion": 0, "correlationId": 1,
                "clientId": "c", "requestApiKey": 3}, "body": {}}"#,
            "requestApiKey",
            "header",
        ),
        (
            r#"{"header": {"requestApiKey": 3, "requestApiVersion": 4, "correlationId": 1,
                "clientId": "c"}, "body": {"topics": [{"name": "a"}, {"name": "b", "name": "c"}],
                "allowAutoTopicCreation": true}}"#,
            "name",
            "body.topics[1]",
        ),
        (
            r#"{"header": {"requestApiKey": 18, "requestApiVersion": 0, "correlationId": 1,
                "clientId": "c"}, "body": {}, "body": {}}"#,
            "body",
            "the top level",
        ),
    ] {
        let error = RequestFrame::from_json_with(text.as_bytes(), &strict).expect_err(text);
        assert_eq!(
            error.kind(),
            &JsonErrorKind::DuplicateKey {
                key: key.into(),
                path: path.into()
            },
            "{error}"
        );
        let lenient = RequestFrame::from_json_with(text.as_bytes(), &JsonOptions::lenient());
        let tree = RequestFrame::from_json_with(
            &parse(text.as_bytes(), &JsonOptions::lenient()).unwrap(),
            &JsonOptions::lenient(),
        );
        assert_eq!(lenient, tree, "lenient: the last value wins in both");
    }
}

#[test]
fn a_frame_reads_whichever_order_its_keys_come_in() {
    let header = r#""header": {"requestApiKey": 18, "requestApiVersion": 3, "correlationId": 9,
                    "clientId": "c"}"#;
    let body = r#""body": {"clientSoftwareName": "n", "clientSoftwareVersion": "1"}"#;
    let first = both_request(&format!("{{{header}, {body}}}"), &JsonOptions::default()).unwrap();
    let last = both_request(&format!("{{{body}, {header}}}"), &JsonOptions::default()).unwrap();
    assert_eq!(first, last);
    assert_eq!(first.body.api_key(), kafka_codec::ApiKey::ApiVersions);

    // A response's `apiKey` and `apiVersion` after its body, as a hand-written file may
    // have them.
    let response = kafka_codec::ResponseFrame::from_json_with(
        br#"{"header": {"correlationId": 4},
             "body": {"errorCode": 0, "apiKeys": [], "throttleTimeMs": 0},
             "apiVersion": 2, "apiKey": 18}"#,
        &JsonOptions::default(),
    )
    .unwrap();
    assert_eq!(response.api_version, 2);
    assert_eq!(response.header.correlation_id, 4);

    // Trailing text and bad syntax are errors, never a partial frame.
    for bad in [
        format!("{{{header}, {body}}} x"),
        format!("{{{header}, {body}"),
        format!("{{{header}, \"body\": {{\"clientSoftwareName\": }}}}"),
    ] {
        let error =
            RequestFrame::from_json_with(bad.as_bytes(), &JsonOptions::default()).expect_err(&bad);
        assert!(matches!(error.kind(), JsonErrorKind::Syntax(_)), "{error}");
    }
}
