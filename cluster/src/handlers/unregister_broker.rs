//! UnregisterBroker (KIP-500): Kafka's controller removes a broker's registration, or
//! answers BROKER_ID_NOT_REGISTERED ("Broker ID N is not currently registered") for an id it
//! does not know. A running broker registers again at its next heartbeat, so unregistering
//! one of the cluster's brokers (running or stopped; a stopped one is already out of
//! Metadata once fenced) succeeds and changes nothing a client sees.

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
        // Kafka's success carries the schema's default message, an empty string (not null;
        // recorded: tests/data/unregister-broker-kafka-4.4.txt).
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
