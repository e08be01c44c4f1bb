//! One file per API, as franz-go's kfake keeps them: each says which API it serves and
//! answers its request by reading or changing the cluster's state. [`advertised`] lists
//! exactly these APIs, so ApiVersions never names one that is then refused.

mod alter_configs;
mod api_versions;
mod create_partitions;
mod create_topics;
mod delete_records;
mod delete_topics;
mod describe_cluster;
mod describe_configs;
mod describe_log_dirs;
mod fetch;
mod incremental_alter_configs;
mod init_producer_id;
mod list_offsets;
mod metadata;
mod offset_for_leader_epoch;
mod produce;

use crate::Shared;
use kafka_codec::conn::{IncomingRequest, SupportedVersions};
use kafka_codec::{ApiKey, Request, Response};

/// What a handler knows besides its request.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The cluster.
    pub shared: &'a Shared,
    /// The broker that received the request.
    pub node_id: i32,
    /// The request's version, which the response is written at.
    pub version: i16,
}

impl Context<'_> {
    /// The broker that leads `partition` of any topic: partitions are spread over the brokers
    /// in turn, as Kafka's default placement does.
    pub fn leader_of(&self, partition: i32) -> i32 {
        partition.rem_euclid(self.shared.brokers.len() as i32)
    }
}

/// The APIs served, each at every stable version this crate knows (a version still in
/// development upstream is left out, as Kafka's `unstable.api.versions.enable=false` does).
const SERVED: [ApiKey; 16] = [
    api_versions::API,
    metadata::API,
    create_topics::API,
    delete_topics::API,
    produce::API,
    fetch::API,
    list_offsets::API,
    init_producer_id::API,
    describe_cluster::API,
    create_partitions::API,
    delete_records::API,
    offset_for_leader_epoch::API,
    describe_log_dirs::API,
    describe_configs::API,
    alter_configs::API,
    incremental_alter_configs::API,
];

/// What ApiVersions lists.
pub fn advertised() -> SupportedVersions {
    SupportedVersions::stable(SERVED)
}

/// The handler's answer to `request`; `None` for an API with no handler (never advertised,
/// so [`dispatch`](crate::dispatch::dispatch) has closed the connection before).
pub async fn handle(context: &Context<'_>, request: &IncomingRequest) -> Option<Response> {
    Some(match &request.body {
        Request::ApiVersions(body) => api_versions::handle(context, body).into(),
        Request::Metadata(body) => metadata::handle(context, body).into(),
        Request::CreateTopics(body) => create_topics::handle(context, body).into(),
        Request::DeleteTopics(body) => delete_topics::handle(context, body).into(),
        Request::Produce(body) => produce::handle(context, body).into(),
        Request::Fetch(body) => fetch::handle(context, body).await.into(),
        Request::ListOffsets(body) => list_offsets::handle(context, body).into(),
        Request::InitProducerId(body) => init_producer_id::handle(context, body).into(),
        Request::DescribeCluster(body) => describe_cluster::handle(context, body).into(),
        Request::CreatePartitions(body) => create_partitions::handle(context, body).into(),
        Request::DeleteRecords(body) => delete_records::handle(context, body).into(),
        Request::OffsetForLeaderEpoch(body) => {
            offset_for_leader_epoch::handle(context, body).into()
        }
        Request::DescribeLogDirs(body) => describe_log_dirs::handle(context, body).into(),
        Request::DescribeConfigs(body) => describe_configs::handle(context, body).into(),
        Request::AlterConfigs(body) => alter_configs::handle(context, body).into(),
        Request::IncrementalAlterConfigs(body) => {
            incremental_alter_configs::handle(context, body).into()
        }
        _ => return None,
    })
}
