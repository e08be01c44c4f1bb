//! Fixtures for the `redact` benchmark: messages whose JSON is written plain and through
//! `json::redact::write_redacted`.

use crate::{fetch_response, metadata_response};
use kafka_codec::codegen::JsonFields;
use kafka_codec::json::redact::{self, Direction, Form};
use kafka_codec::json::{JsonOptions, JsonSink, JsonWriter};
use kafka_codec::messages::describe_configs_response as dc;
use kafka_codec::messages::fetch_response::{FetchResponse, FetchableTopicResponse, PartitionData};
use kafka_codec::{ApiKey, EncodeError, Message, Uuid};

type Write = Box<dyn Fn(&mut dyn JsonSink) -> Result<(), EncodeError>>;

/// One response whose body JSON is written.
pub struct RedactCase {
    /// The benchmark group's name, e.g. `fetch_response_v18_1000x100`.
    pub name: &'static str,
    /// Its API.
    pub api: ApiKey,
    write: Write,
}

impl RedactCase {
    fn new<M: Message + JsonFields + 'static>(
        name: &'static str,
        api: ApiKey,
        version: i16,
        message: M,
    ) -> Self {
        RedactCase {
            name,
            api,
            write: Box::new(move |out| {
                message.write_json_with(version, &JsonOptions::default(), out)
            }),
        }
    }

    /// The body's compact JSON into `text` (cleared first).
    pub fn plain(&self, text: &mut Vec<u8>) {
        text.clear();
        let mut writer = JsonWriter::compact(text);
        (self.write)(&mut writer).unwrap();
        writer.finish().unwrap();
    }

    /// The same through `write_redacted`: the paths it redacted.
    pub fn redacted(&self, text: &mut Vec<u8>) -> Vec<String> {
        text.clear();
        let mut writer = JsonWriter::compact(text);
        let paths = redact::write_redacted(
            self.api,
            Direction::Response,
            Form::Body,
            &mut writer,
            &self.write,
        )
        .unwrap();
        writer.finish().unwrap();
        paths
    }
}

/// FetchResponse v18: one topic of 1,000 partitions, each with 100 bytes of records.
fn many_small_partitions() -> FetchResponse {
    let records = kafka_codec::bytes::Bytes::from(vec![0x5a; 100]);
    FetchResponse::default().with_responses(vec![FetchableTopicResponse::default()
        .with_topic_id(Uuid::from_halves(7, 9))
        .with_partitions(
            (0..1000)
                .map(|p| {
                    PartitionData::default()
                        .with_partition_index(p)
                        .with_high_watermark(1000)
                        .with_last_stable_offset(1000)
                        .with_preferred_read_replica(-1)
                        .with_records(Some(records.clone()))
                })
                .collect(),
        )])
}

/// DescribeConfigsResponse v4: one broker's 500 configs, none of them a secret.
fn many_configs() -> dc::DescribeConfigsResponse {
    dc::DescribeConfigsResponse::default().with_results(vec![dc::DescribeConfigsResult::default()
        .with_resource_type(4)
        .with_resource_name("1".into())
        .with_configs(
            (0..500)
                .map(|i| {
                    dc::DescribeConfigsResourceResult::default()
                        .with_name(format!("log.cleaner.io.buffer.setting.{i}").into())
                        .with_value(Some(format!("{i}").into()))
                        .with_config_source(5)
                })
                .collect(),
        )])
}

/// The cases, in the benchmark's order.
pub fn redact_cases() -> Vec<RedactCase> {
    let fetch = fetch_response();
    let metadata = metadata_response("metadata_response_v13_100x10x3", 100, 10);
    vec![
        RedactCase::new(fetch.name, ApiKey::Fetch, fetch.version, fetch.message),
        RedactCase::new(
            "fetch_response_v18_1000x100",
            ApiKey::Fetch,
            18,
            many_small_partitions(),
        ),
        RedactCase::new(
            "describe_configs_response_v4_500",
            ApiKey::DescribeConfigs,
            4,
            many_configs(),
        ),
        RedactCase::new(
            metadata.name,
            ApiKey::Metadata,
            metadata.version,
            metadata.message,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cases_have_nothing_to_redact_and_write_the_same_text() {
        for case in redact_cases() {
            let (mut plain, mut redacted) = (Vec::new(), Vec::new());
            case.plain(&mut plain);
            assert!(case.redacted(&mut redacted).is_empty(), "{}", case.name);
            assert_eq!(plain, redacted, "{}", case.name);
        }
    }
}
