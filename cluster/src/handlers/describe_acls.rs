//! DescribeAcls: the ACLs the filter matches (see [`crate::acls`]: ANY, MATCH, LITERAL,
//! PREFIXED; a null name, principal or host matches every one), grouped by resource pattern
//! as Kafka groups them. A filter with an UNKNOWN code: INVALID_REQUEST. v0 has no pattern
//! type: its filter is LITERAL, as Kafka reads it.

use super::Context;
use crate::acls::AclFilter;
use kafka_codec::messages::describe_acls_response::{AclDescription, DescribeAclsResource};
use kafka_codec::messages::{DescribeAclsRequest, DescribeAclsResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::DescribeAcls;

pub fn handle(context: &Context<'_>, request: &DescribeAclsRequest) -> DescribeAclsResponse {
    let filter = AclFilter {
        resource_type: request.resource_type_filter,
        resource_name: request.resource_name_filter.as_deref().map(str::to_owned),
        pattern_type: request.pattern_type_filter,
        principal: request.principal_filter.as_deref().map(str::to_owned),
        host: request.host_filter.as_deref().map(str::to_owned),
        operation: request.operation,
        permission: request.permission_type,
    };
    if let Some(why) = filter.invalid() {
        return DescribeAclsResponse::default()
            .with_error_code(ErrorCode::INVALID_REQUEST.code())
            .with_error_message(Some(why.as_str().into()));
    }
    let acls = context.shared.acls();
    let mut resources: Vec<DescribeAclsResource> = Vec::new();
    for acl in acls.matching(&filter) {
        let description = AclDescription::default()
            .with_principal(acl.principal.as_str().into())
            .with_host(acl.host.as_str().into())
            .with_operation(acl.operation)
            .with_permission_type(acl.permission);
        let same = |r: &&mut DescribeAclsResource| {
            r.resource_type == acl.resource_type
                && *r.resource_name == *acl.resource_name
                && r.pattern_type == acl.pattern_type
        };
        match resources.iter_mut().find(|r| same(r)) {
            Some(resource) => resource.acls.push(description),
            None => resources.push(
                DescribeAclsResource::default()
                    .with_resource_type(acl.resource_type)
                    .with_resource_name(acl.resource_name.as_str().into())
                    .with_pattern_type(acl.pattern_type)
                    .with_acls(vec![description]),
            ),
        }
    }
    DescribeAclsResponse::default()
        .with_error_message(None)
        .with_resources(resources)
}
