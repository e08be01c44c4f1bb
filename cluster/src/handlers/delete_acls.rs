//! DeleteAcls: each filter removes the ACLs it matches (see [`crate::acls`]) and lists them
//! in its result; a filter with an UNKNOWN code is INVALID_REQUEST in its own result and
//! removes nothing. v0's filters have no pattern type: LITERAL.

use super::Context;
use crate::acls::AclFilter;
use kafka_codec::messages::delete_acls_response::{DeleteAclsFilterResult, DeleteAclsMatchingAcl};
use kafka_codec::messages::{DeleteAclsRequest, DeleteAclsResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::DeleteAcls;

pub fn handle(context: &Context<'_>, request: &DeleteAclsRequest) -> DeleteAclsResponse {
    let mut acls = context.shared.acls();
    let results = request
        .filters
        .iter()
        .map(|wanted| {
            let filter = AclFilter {
                resource_type: wanted.resource_type_filter,
                resource_name: wanted.resource_name_filter.as_deref().map(str::to_owned),
                pattern_type: wanted.pattern_type_filter,
                principal: wanted.principal_filter.as_deref().map(str::to_owned),
                host: wanted.host_filter.as_deref().map(str::to_owned),
                operation: wanted.operation,
                permission: wanted.permission_type,
            };
            if let Some(why) = filter.invalid() {
                return DeleteAclsFilterResult::default()
                    .with_error_code(ErrorCode::INVALID_REQUEST.code())
                    .with_error_message(Some(why.as_str().into()));
            }
            let matching = acls
                .remove_matching(&filter)
                .into_iter()
                .map(|acl| {
                    DeleteAclsMatchingAcl::default()
                        .with_error_message(None)
                        .with_resource_type(acl.resource_type)
                        .with_resource_name(acl.resource_name.as_str().into())
                        .with_pattern_type(acl.pattern_type)
                        .with_principal(acl.principal.as_str().into())
                        .with_host(acl.host.as_str().into())
                        .with_operation(acl.operation)
                        .with_permission_type(acl.permission)
                })
                .collect();
            DeleteAclsFilterResult::default()
                .with_error_message(None)
                .with_matching_acls(matching)
        })
        .collect();
    DeleteAclsResponse::default().with_filter_results(results)
}
