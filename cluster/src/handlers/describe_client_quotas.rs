//! DescribeClientQuotas: the entities whose (type, name) pairs match every filter
//! component (exact name, the default entity, or any) and their quotas; `strict`: entities
//! of no other type. A bad filter is refused whole (top-level error, entries null), as
//! Kafka's brokers refuse it.

use super::Context;
use crate::quotas::{Match, Refusal};
use kafka_codec::messages::describe_client_quotas_response::{EntityData, EntryData, ValueData};
use kafka_codec::messages::{DescribeClientQuotasRequest, DescribeClientQuotasResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::DescribeClientQuotas;

/// The match types of a filter component.
const EXACT: i8 = 0;
const DEFAULT: i8 = 1;
const ANY: i8 = 2;

pub fn handle(
    context: &Context<'_>,
    request: &DescribeClientQuotasRequest,
) -> DescribeClientQuotasResponse {
    let components: Result<Vec<(String, Match)>, Refusal> = request
        .components
        .iter()
        .map(|component| {
            let wanted = match (component.match_type, &component.r#match) {
                (EXACT, Some(name)) => Match::Exact(name.as_str().to_owned()),
                (DEFAULT, _) => Match::Default,
                (ANY, _) => Match::Any,
                (EXACT, None) => {
                    return Err(Refusal {
                        error: ErrorCode::INVALID_REQUEST,
                        message: "Unexpected null match in exact match".to_owned(),
                    })
                }
                (other, _) => {
                    return Err(Refusal {
                        error: ErrorCode::INVALID_REQUEST,
                        message: format!("Unexpected match type: {other}"),
                    })
                }
            };
            Ok((component.entity_type.as_str().to_owned(), wanted))
        })
        .collect();
    let held = context.shared.client_quotas();
    let described = components.and_then(|components| held.describe(&components, request.strict));
    match described {
        Err(refusal) => DescribeClientQuotasResponse::default()
            .with_error_code(refusal.error.code())
            .with_error_message(Some(refusal.message.into()))
            .with_entries(None),
        Ok(found) => DescribeClientQuotasResponse::default()
            .with_error_code(0)
            .with_error_message(None)
            .with_entries(Some(
                found
                    .into_iter()
                    .map(|(entity, values)| {
                        EntryData::default()
                            .with_entity(
                                entity
                                    .iter()
                                    .map(|(entity_type, name)| {
                                        EntityData::default()
                                            .with_entity_type(entity_type.as_str().into())
                                            .with_entity_name(name.as_deref().map(Into::into))
                                    })
                                    .collect(),
                            )
                            .with_values(
                                values
                                    .iter()
                                    .map(|(key, value)| {
                                        ValueData::default()
                                            .with_key(key.as_str().into())
                                            .with_value(*value)
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            )),
    }
}
