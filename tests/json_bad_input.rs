//! Kafka's JSON form read from hostile text: every kind of type confusion is a typed
//! `JsonError` naming the field, never a panic, and what does read is only what the version
//! can be written with.

use kafka_codec::messages::{MetadataRequest, SaslAuthenticateRequest};
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
        "Topics",
    );
    assert_json_error(
        metadata(
            json!({"topics": [{"name": 7}], "allowAutoTopicCreation": true}),
            4,
        ),
        wrong("a string", "a number"),
        "Topics[0].Name",
    );
    assert_json_error(
        metadata(json!({"topics": [], "allowAutoTopicCreation": "yes"}), 4),
        wrong("a boolean", "a string"),
        "AllowAutoTopicCreation",
    );
    assert_json_error(
        SaslAuthenticateRequest::from_json(&json!({"authBytes": [1, 2]}), 0),
        wrong("a base64 string", "an array"),
        "AuthBytes",
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
        "AllowAutoTopicCreation",
    );
    assert_json_error(
        metadata(json!({"topics": [], "allowAutoTopicCreation": null}), 4),
        JsonErrorKind::WrongType {
            expected: "a boolean",
            found: "null",
        },
        "AllowAutoTopicCreation",
    );
    assert_json_error(
        SaslAuthenticateRequest::from_json(&json!({"authBytes": "not base64!"}), 0),
        JsonErrorKind::InvalidBase64,
        "AuthBytes",
    );
    assert_json_error(
        metadata(
            json!({"topics": [{"topicId": "not-a-uuid", "name": null}], "allowAutoTopicCreation": true,
                   "includeTopicAuthorizedOperations": false}),
            12,
        ),
        JsonErrorKind::InvalidUuid("not-a-uuid".into()),
        "Topics[0].TopicId",
    );
    let long = "x".repeat(32768);
    assert_json_error(
        metadata(
            json!({"topics": [{"name": long}], "allowAutoTopicCreation": true}),
            4,
        ),
        JsonErrorKind::StringTooLong(32768),
        "Topics[0].Name",
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
