//! UnregisterBroker (KIP-500): Kafka's controller removes a broker's registration, or
//! answers BROKER_ID_NOT_REGISTERED ("Broker ID N is not currently registered") for an id it
//! does not know. A running broker registers again at its next heartbeat, so unregistering
//! one of the cluster's running brokers succeeds and changes nothing a client sees. A
//! stopped one Kafka drops from DescribeCluster's brokers (fenced ones included); here that
//! takes `ControlHandle::remove_broker` (not done from this request yet: cluster/README.md).

use super::Context;
use kafka_codec::messages::{UnregisterBrokerRequest, UnregisterBrokerResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::UnregisterBroker;

pub fn handle(
    context: &Context<'_>,
    request: &UnregisterBrokerRequest,
) -> UnregisterBrokerResponse {
    let id = request.broker_id;
    if context.broker_ids().contains(&id) {
        // Kafka 4.4 answers an empty message, not null.
        return UnregisterBrokerResponse::default()
            .with_error_code(0)
            .with_error_message(Some("".into()));
    }
    UnregisterBrokerResponse::default()
        .with_error_code(ErrorCode::BROKER_ID_NOT_REGISTERED.code())
        .with_error_message(Some(
            format!("Broker ID {id} is not currently registered")
                .as_str()
                .into(),
        ))
}
