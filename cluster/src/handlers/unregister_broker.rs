//! UnregisterBroker (KIP-500): Kafka's controller removes a broker's registration, or
//! answers BROKER_ID_NOT_REGISTERED ("Broker ID N is not currently registered") for an id it
//! does not know; success carries an empty message, and a refusal for want of ALTER on the
//! cluster Kafka's "needs ALTER permission" message (`authorizer::finish_refusal`), as a live
//! 4.4 node answered (`tests/unregister_broker.rs`). A stopped broker is unregistered as
//! `ControlHandle::remove_broker` unregisters one after its shutdown, on the same code
//! (`control::Operator::unregister_stopped`): fenced if it was not yet, then gone from
//! DescribeCluster's brokers (fenced ones included), its id kept in the replicas lists, as
//! a live Kafka 4.4 cluster showed (`tests/remove_broker_kafka.rs`). Restarted, it registers
//! again (same id) and is unfenced once caught up, as Kafka's broker started again does
//! (`ControlHandle::restart_broker`, recorded in the same test). A running broker is
//! unregistered as a live Kafka 4.4 cluster showed (`data/unregister-running-kafka-4.4.txt`,
//! `control::Operator::unregister_running`): fenced and gone from Metadata and
//! DescribeCluster as if stopped first, while it keeps answering from the same metadata (a
//! Produce for a partition it led: NOT_LEADER_OR_FOLLOWER naming the new leader); it does
//! not come back (Kafka's controller refuses its heartbeats STALE_BROKER_EPOCH, "Receive a
//! heartbeat from broker N before registration", every 2 s: probed on `cluster.sh` for
//! 45 s) until it is restarted, when it registers anew. The last broker is never
//! unregistered (the cluster keeps one; a Kafka node then answers Metadata without brokers).

use super::Context;
use kafka_codec::messages::{UnregisterBrokerRequest, UnregisterBrokerResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::UnregisterBroker;

pub fn handle(
    context: &Context<'_>,
    request: &UnregisterBrokerRequest,
) -> UnregisterBrokerResponse {
    let id = request.broker_id;
    let brokers = context.broker_ids();
    if brokers.contains(&id) {
        let operator = crate::control::Operator {
            shared: context.shared,
        };
        // The cluster keeps one broker at least (a controller may be asked for the last).
        if brokers.len() > 1 {
            if operator.is_up(id) {
                operator.unregister_running(id);
            } else {
                operator.unregister_stopped(id);
            }
        }
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
