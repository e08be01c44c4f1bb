//! DeleteGroups: removes groups with no members, their offsets with them
//! (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP otherwise); a share group with its share
//! partitions' state.

use super::Context;
use kafka_codec::messages::delete_groups_response::DeletableGroupResult;
use kafka_codec::messages::{DeleteGroupsRequest, DeleteGroupsResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::DeleteGroups;

pub fn handle(context: &Context<'_>, request: &DeleteGroupsRequest) -> DeleteGroupsResponse {
    let results = request
        .groups_names
        .iter()
        .map(|group_id| {
            let error = if context.coordinates(group_id) {
                // A share group lives beside the others (one namespace); the two locks
                // are never held together.
                let error = context.shared.groups().delete(group_id);
                match error {
                    ErrorCode::GROUP_ID_NOT_FOUND => context.shared.share_groups().delete(group_id),
                    error => error,
                }
            } else {
                ErrorCode::NOT_COORDINATOR
            };
            DeletableGroupResult::default()
                .with_group_id(group_id.clone())
                .with_error_code(error.code())
        })
        .collect();
    DeleteGroupsResponse::default().with_results(results)
}
