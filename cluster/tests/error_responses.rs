//! `kafka_codec::error_response`, which the cluster's `Error` fault action answers with:
//! for every API and version, the error lands exactly where the schemas say the response
//! carries errors (`ApiKey::error_code_fields`), per entry of the request where it names
//! entries, else at the top level; the entries are named as the request named them.

use kafka_codec::messages::delete_topics_request::DeleteTopicState;
use kafka_codec::messages::describe_groups_request::DescribeGroupsRequest;
use kafka_codec::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_codec::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_codec::messages::metadata_request::MetadataRequestTopic;
use kafka_codec::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_codec::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_codec::messages::{
    DeleteTopicsRequest, FetchRequest, ListOffsetsRequest, MetadataRequest, OffsetCommitRequest,
    ProduceRequest,
};
use kafka_codec::serde_json::Value;
use kafka_codec::{
    error_response, ApiKey, ErrorCode, ErrorResponseError, MessageCodec, MessageKind,
    MessageVisitor, Request, Response,
};

/// Every non-zero `errorCode` of a response's JSON, as the table writes paths
/// (`responses[].partitionResponses[].errorCode`), with how often.
fn placed(value: &Value, prefix: &str, out: &mut Vec<String>) {
    let Value::Object(fields) = value else {
        return;
    };
    for (key, value) in fields {
        if key == "errorCode" {
            if value.as_i64() != Some(0) {
                out.push(format!("{prefix}{key}"));
            }
        } else {
            match value {
                Value::Array(items) => {
                    for item in items {
                        placed(item, &format!("{prefix}{key}[]."), out);
                    }
                }
                Value::Object(_) => placed(value, &format!("{prefix}{key}."), out),
                _ => {}
            }
        }
    }
}

fn table(api: ApiKey, version: i16) -> Vec<&'static str> {
    api.error_code_fields()
        .iter()
        .filter(|(_, versions)| versions.contains(version))
        .map(|(path, _)| *path)
        .collect()
}

/// The response's error paths; it encodes at the version, and every path is in the table.
fn check(request: &Request, version: i16, response: &Response) -> Vec<String> {
    let api = request.api_key();
    assert_eq!(response.api_key(), api);
    response
        .encoded_len(version)
        .unwrap_or_else(|e| panic!("{api} v{version} does not encode: {e}"));
    let mut paths = Vec::new();
    placed(&response.to_json(version).unwrap(), "", &mut paths);
    assert!(!paths.is_empty(), "{api} v{version}: no error placed");
    let table = table(api, version);
    for path in &paths {
        assert!(
            table.contains(&path.as_str()),
            "{api} v{version}: {path} not in {table:?}"
        );
    }
    paths
}

/// Every API at every version, from its default request (no entries): an error at the top
/// level where the response has one there, else none to be placed.
#[test]
fn every_api_and_version_from_the_default_request() {
    struct Every(usize);
    impl MessageVisitor for Every {
        fn visit<M: MessageCodec>(&mut self) {
            if M::KIND != MessageKind::Request {
                return;
            }
            let Some(api) = M::API_KEY.and_then(ApiKey::from_key) else {
                return;
            };
            let valid = api.valid_versions();
            for version in valid.min..=valid.max {
                let json = M::default().to_json(version).unwrap();
                let request = Request::from_json(api, &json, version).unwrap();
                let top = table(api, version).contains(&"errorCode");
                match error_response(&request, version, ErrorCode::UNKNOWN_SERVER_ERROR, None) {
                    Ok(response) => {
                        check(&request, version, &response);
                        self.0 += 1;
                    }
                    Err(ErrorResponseError::NoPlace { .. }) => {
                        assert!(!top, "{api} v{version} has a top-level errorCode")
                    }
                    Err(e) => panic!("{api} v{version}: {e}"),
                }
            }
        }
    }
    let mut every = Every(0);
    kafka_codec::visit_messages(&mut every);
    assert!(every.0 > 200, "{} answered", every.0);
}

/// Requests naming topics, partitions and groups: the error is in every per-entry field the
/// response has at that version (and not at the top), each entry named as in the request.
#[test]
fn entries_are_mirrored_and_failed_one_by_one() {
    let produce: Request = ProduceRequest::default()
        .with_acks(-1)
        .with_topic_data(vec![TopicProduceData::default()
            .with_name("t".into())
            .with_partition_data(vec![
                PartitionProduceData::default().with_index(3),
                PartitionProduceData::default().with_index(5),
            ])])
        .into();
    let fetch: Request = FetchRequest::default()
        .with_topics(vec![FetchTopic::default()
            .with_topic("t".into())
            .with_partitions(vec![FetchPartition::default().with_partition(4)])])
        .into();
    let offsets: Request = ListOffsetsRequest::default()
        .with_topics(vec![ListOffsetsTopic::default()
            .with_name("t".into())
            .with_partitions(vec![
                ListOffsetsPartition::default().with_partition_index(2)
            ])])
        .into();
    let metadata: Request = MetadataRequest::default()
        .with_topics(Some(vec![
            MetadataRequestTopic::default().with_name(Some("t".into()))
        ]))
        .into();
    let groups: Request = DescribeGroupsRequest::default()
        .with_groups(vec!["g1".into(), "g2".into()])
        .into();
    let delete_by_name: Request = DeleteTopicsRequest::default()
        .with_topic_names(vec!["t".into()])
        .into();
    let delete_by_state: Request = DeleteTopicsRequest::default()
        .with_topics(vec![DeleteTopicState::default().with_name(Some("t".into()))])
        .into();
    let commit: Request = OffsetCommitRequest::default()
        .with_group_id("g".into())
        .with_topics(vec![OffsetCommitRequestTopic::default()
            .with_name("t".into())
            .with_partitions(vec![
                OffsetCommitRequestPartition::default().with_partition_index(1)
            ])])
        .into();
    let mut checked = 0;
    for request in [
        produce,
        fetch,
        offsets,
        metadata,
        groups,
        delete_by_name,
        delete_by_state,
        commit,
    ] {
        let api = request.api_key();
        let valid = api.valid_versions();
        for version in valid.min..=valid.max {
            // Versions that cannot carry what the request holds (topic names: from v13 of
            // Produce and Fetch, topic ids only) are not this test's.
            let carried = request
                .to_json(version)
                .ok()
                .and_then(|json| Request::from_json(api, &json, version).ok());
            if carried.as_ref() != Some(&request) {
                continue;
            }
            let response = error_response(
                &request,
                version,
                ErrorCode::NOT_LEADER_OR_FOLLOWER,
                Some("m"),
            )
            .unwrap_or_else(|e| panic!("{api} v{version}: {e}"));
            let mut paths = check(&request, version, &response);
            paths.sort();
            paths.dedup();
            let mut nested: Vec<&str> = table(api, version)
                .into_iter()
                .filter(|path| *path != "errorCode")
                // A Metadata request names topics, not partitions.
                .filter(|path| api != ApiKey::Metadata || !path.contains("partitions"))
                .collect();
            nested.sort();
            if nested.is_empty() {
                assert_eq!(paths, ["errorCode"], "{api} v{version}");
            } else {
                assert_eq!(paths, nested, "{api} v{version}");
            }
            let json = response.to_json(version).unwrap();
            match api {
                ApiKey::Produce => {
                    let partitions = &json["responses"][0]["partitionResponses"];
                    assert_eq!(partitions[0]["index"], 3);
                    assert_eq!(partitions[1]["index"], 5);
                    if version < 13 {
                        assert_eq!(json["responses"][0]["name"], "t");
                    }
                }
                ApiKey::Fetch => {
                    assert_eq!(json["responses"][0]["partitions"][0]["partitionIndex"], 4);
                    // Schema defaults kept where nothing is copied.
                    if version >= 11 {
                        assert_eq!(
                            json["responses"][0]["partitions"][0]["preferredReadReplica"],
                            -1
                        );
                    }
                }
                ApiKey::DescribeGroups => {
                    assert_eq!(json["groups"][0]["groupId"], "g1");
                    assert_eq!(json["groups"][1]["groupId"], "g2");
                }
                ApiKey::Metadata => {
                    assert_eq!(json["topics"][0]["name"], "t");
                }
                ApiKey::DeleteTopics => {
                    assert_eq!(json["responses"][0]["name"], "t");
                    if version >= 5 {
                        assert_eq!(json["responses"][0]["errorMessage"], "m");
                    }
                }
                _ => {}
            }
            checked += 1;
        }
    }
    assert!(checked > 60, "{checked} checked");
}
