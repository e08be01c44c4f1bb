//! DescribeCluster: the cluster id, the brokers and the controller id a KRaft broker gives
//! admin clients (a live broker, as Metadata names it: `Shared::controller_for_clients`). A broker answers only for the broker
//! endpoint type: asking it for controllers is MISMATCHED_ENDPOINT_TYPE, as Kafka's brokers
//! answer. A fenced broker (stopped for the broker session timeout) is left out, as Kafka's
//! brokers leave it out, unless v2's `IncludeFencedBrokers` asks for it: then it is listed
//! with `IsFenced`.
//!
//! On a controller it is the other way round (KIP-919, what `--bootstrap-controller` asks):
//! only the controller endpoint type (2) is answered, with every served controller's
//! endpoint (a modelled one has no listener) and the quorum leader as controller id (-1 if
//! it is not among them).

use super::Context;
use kafka_codec::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_codec::messages::{DescribeClusterRequest, DescribeClusterResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::DescribeCluster;

/// Kafka's `EndpointType.BROKER`.
const BROKER_ENDPOINT: i8 = 1;
/// Kafka's `EndpointType.CONTROLLER`.
const CONTROLLER_ENDPOINT: i8 = 2;

pub fn handle(context: &Context<'_>, request: &DescribeClusterRequest) -> DescribeClusterResponse {
    let shared = context.shared;
    if shared.is_controller(context.node_id) {
        return controllers(context, request);
    }
    if request.endpoint_type != BROKER_ENDPOINT {
        return DescribeClusterResponse::default()
            .with_error_code(ErrorCode::MISMATCHED_ENDPOINT_TYPE.code())
            .with_error_message(Some(
                format!(
                    "The request was sent to a broker endpoint, but asked for endpoint type {}.",
                    request.endpoint_type
                )
                .as_str()
                .into(),
            ));
    }
    let include_fenced = context.version >= 2 && request.include_fenced_brokers;
    let brokers = {
        let state = shared.state();
        shared
            .brokers()
            .iter()
            .filter_map(|broker| {
                let fenced = state.is_fenced(broker.node_id);
                if fenced && !include_fenced {
                    return None;
                }
                let listed = DescribeClusterBroker::default()
                    .with_broker_id(broker.node_id)
                    .with_host(broker.address.ip().to_string().as_str().into())
                    .with_port(i32::from(broker.address.port()));
                Some(if context.version >= 2 {
                    listed.with_is_fenced(fenced)
                } else {
                    listed
                })
            })
            .collect()
    };
    DescribeClusterResponse::default()
        .with_endpoint_type(BROKER_ENDPOINT)
        .with_cluster_id(shared.cluster_id.as_str().into())
        .with_controller_id(shared.controller_for_clients())
        .with_brokers(brokers)
}

fn controllers(context: &Context<'_>, request: &DescribeClusterRequest) -> DescribeClusterResponse {
    let shared = context.shared;
    if request.endpoint_type != CONTROLLER_ENDPOINT {
        return DescribeClusterResponse::default()
            .with_error_code(ErrorCode::MISMATCHED_ENDPOINT_TYPE.code())
            .with_error_message(Some(
                format!(
                    "The request was sent to a controller endpoint, but asked for endpoint type {}.",
                    request.endpoint_type
                )
                .as_str()
                .into(),
            ));
    }
    // The hosts as the quorum's endpoints name them (the builder's host: a name stays a
    // name); modelled controllers have no listener, so only the served ones are listed.
    let (leader, hosts) = shared.quorum().map_or((-1, Vec::new()), |quorum| {
        let hosts = quorum
            .controllers()
            .filter_map(|(id, endpoints)| Some((id, endpoints.iter().next()?.1.host.clone())))
            .collect();
        (quorum.leader().leader_id(), hosts)
    });
    let controllers: Vec<_> = shared
        .controllers
        .iter()
        .map(|controller| {
            let host = hosts
                .iter()
                .find(|(id, _)| *id == controller.node_id)
                .map_or_else(
                    || controller.address.ip().to_string(),
                    |(_, host)| host.to_string(),
                );
            DescribeClusterBroker::default()
                .with_broker_id(controller.node_id)
                .with_host(host.as_str().into())
                .with_port(i32::from(controller.address.port()))
                .with_rack(None)
        })
        .collect();
    let controller_id = if controllers.iter().any(|c| c.broker_id == leader) {
        leader
    } else {
        -1
    };
    DescribeClusterResponse::default()
        .with_endpoint_type(CONTROLLER_ENDPOINT)
        .with_cluster_id(shared.cluster_id.as_str().into())
        .with_controller_id(controller_id)
        .with_brokers(controllers)
        .with_cluster_authorized_operations(i32::MIN)
}
