//! AlterClientQuotas: sets and removes each entity's quotas (`quotas`), every entry
//! checked and answered on its own as Kafka's controller does, nothing changed with
//! `validate_only`. Stored, not enforced.

use super::Context;
use crate::quotas;
use kafka_codec::messages::alter_client_quotas_response::{EntityData, EntryData};
use kafka_codec::messages::{AlterClientQuotasRequest, AlterClientQuotasResponse};
use kafka_codec::ApiKey;

pub const API: ApiKey = ApiKey::AlterClientQuotas;

pub fn handle(
    context: &Context<'_>,
    request: &AlterClientQuotasRequest,
) -> AlterClientQuotasResponse {
    let mut held = context.shared.client_quotas();
    let entries = request
        .entries
        .iter()
        .map(|entry| {
            let pairs: Vec<(String, Option<String>)> = entry
                .entity
                .iter()
                .map(|e| {
                    (
                        e.entity_type.as_str().to_owned(),
                        e.entity_name.as_ref().map(|n| n.as_str().to_owned()),
                    )
                })
                .collect();
            let ops: Vec<(String, f64, bool)> = entry
                .ops
                .iter()
                .map(|op| (op.key.as_str().to_owned(), op.value, op.remove))
                .collect();
            let outcome = quotas::validate_entity(&pairs)
                .and_then(|entity| held.alter(&entity, &ops, request.validate_only));
            let answer = EntryData::default().with_entity(
                entry
                    .entity
                    .iter()
                    .map(|e| {
                        EntityData::default()
                            .with_entity_type(e.entity_type.clone())
                            .with_entity_name(e.entity_name.clone())
                    })
                    .collect(),
            );
            match outcome {
                Ok(()) => answer.with_error_code(0).with_error_message(None),
                Err(refusal) => answer
                    .with_error_code(refusal.error.code())
                    .with_error_message(Some(refusal.message.into())),
            }
        })
        .collect();
    AlterClientQuotasResponse::default().with_entries(entries)
}
