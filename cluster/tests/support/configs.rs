//! The config APIs as the tests call them: one resource per request, its answer.

use super::Client;
use kafka_codec::messages::alter_configs_request::{AlterConfigsResource, AlterableConfig};
use kafka_codec::messages::describe_configs_request::DescribeConfigsResource;
use kafka_codec::messages::describe_configs_response::DescribeConfigsResult;
use kafka_codec::messages::incremental_alter_configs_request as incremental;
use kafka_codec::messages::{
    AlterConfigsRequest, DescribeConfigsRequest, IncrementalAlterConfigsRequest,
};
use kafka_codec::Response;

/// An IncrementalAlterConfigs entry: name, operation (0 SET, 1 DELETE, 2 APPEND, 3
/// SUBTRACT), value.
pub type Op<'a> = (&'a str, i8, Option<&'a str>);

impl Client {
    /// DescribeConfigs of one resource (synonyms asked for from v1), its result.
    pub async fn describe_configs(
        &mut self,
        version: i16,
        resource_type: i8,
        name: &str,
        keys: Option<&[&str]>,
    ) -> DescribeConfigsResult {
        let request = DescribeConfigsRequest::default()
            .with_include_synonyms(version >= 1)
            .with_resources(vec![DescribeConfigsResource::default()
                .with_resource_type(resource_type)
                .with_resource_name(name.into())
                .with_configuration_keys(
                    keys.map(|keys| keys.iter().map(|k| (*k).into()).collect()),
                )]);
        let Response::DescribeConfigs(described) = self.call(version, request).await else {
            panic!("not DescribeConfigs")
        };
        described.results.into_iter().next().expect("one result")
    }

    /// (error code, message) of a legacy AlterConfigs replacing one resource's configs.
    pub async fn alter_configs(
        &mut self,
        version: i16,
        resource_type: i8,
        name: &str,
        configs: &[(&str, &str)],
    ) -> (i16, Option<String>) {
        let request =
            AlterConfigsRequest::default().with_resources(vec![AlterConfigsResource::default()
                .with_resource_type(resource_type)
                .with_resource_name(name.into())
                .with_configs(
                    configs
                        .iter()
                        .map(|(name, value)| {
                            AlterableConfig::default()
                                .with_name((*name).into())
                                .with_value(Some((*value).into()))
                        })
                        .collect(),
                )]);
        let Response::AlterConfigs(altered) = self.call(version, request).await else {
            panic!("not AlterConfigs")
        };
        let answer = &altered.responses[0];
        (
            answer.error_code,
            answer.error_message.as_ref().map(|m| m.as_str().to_owned()),
        )
    }

    /// (error code, message) of an IncrementalAlterConfigs of one resource.
    pub async fn incremental_alter_configs(
        &mut self,
        version: i16,
        resource_type: i8,
        name: &str,
        configs: &[Op<'_>],
        validate_only: bool,
    ) -> (i16, Option<String>) {
        let request = IncrementalAlterConfigsRequest::default()
            .with_validate_only(validate_only)
            .with_resources(vec![incremental::AlterConfigsResource::default()
                .with_resource_type(resource_type)
                .with_resource_name(name.into())
                .with_configs(
                    configs
                        .iter()
                        .map(|(name, operation, value)| {
                            incremental::AlterableConfig::default()
                                .with_name((*name).into())
                                .with_config_operation(*operation)
                                .with_value(value.map(Into::into))
                        })
                        .collect(),
                )]);
        let Response::IncrementalAlterConfigs(altered) = self.call(version, request).await else {
            panic!("not IncrementalAlterConfigs")
        };
        let answer = &altered.responses[0];
        (
            answer.error_code,
            answer.error_message.as_ref().map(|m| m.as_str().to_owned()),
        )
    }
}
