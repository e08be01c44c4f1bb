//! One file per API, as franz-go's kfake keeps them: each says which API it serves and
//! answers its request by reading or changing the cluster's state. [`advertised`] lists
//! exactly these APIs, so ApiVersions never names one that is then refused.

mod api_versions;
mod create_topics;
mod delete_topics;
mod fetch;
mod list_offsets;
mod metadata;
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
    /// The broker that leads `partition` of any topic as placed at creation: partitions are
    /// spread over the brokers in turn, as Kafka's default placement does. A handler asks
    /// [`leader`](Self::leader), which knows the control surface's moves.
    pub fn leader_of(&self, partition: i32) -> i32 {
        partition.rem_euclid(self.shared.brokers.len() as i32)
    }

    /// The leader and leader epoch of `topic`'s `partition`: [`leader_of`](Self::leader_of)
    /// at epoch 0 unless the control surface moved it. It locks the state: a handler that
    /// holds the lock asks `State::leader` instead.
    pub fn leader(&self, topic: &str, partition: i32) -> (i32, i32) {
        self.shared
            .state()
            .leader(topic, partition, self.shared.brokers.len())
    }
}

/// The APIs served, each at every version this crate knows.
const SERVED: [ApiKey; 7] = [
    api_versions::API,
    metadata::API,
    create_topics::API,
    delete_topics::API,
    produce::API,
    fetch::API,
    list_offsets::API,
];

/// What ApiVersions lists.
pub fn advertised() -> SupportedVersions {
    SupportedVersions::from_ranges(SERVED.iter().map(|api| (api.key(), api.valid_versions())))
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
        _ => return None,
    })
}
