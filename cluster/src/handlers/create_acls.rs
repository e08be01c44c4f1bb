//! CreateAcls: adds each binding that Kafka's `AclControlManager` would accept (a LITERAL or
//! PREFIXED pattern on a known resource type with a name, CLUSTER only as `kafka-cluster`,
//! a definite operation, ALLOW or DENY, a `Type:name` principal); each other one is
//! INVALID_REQUEST in its own result. A binding that exists already is a success.

use super::Context;
use crate::acls::{invalid_new, AclBinding};
use kafka_codec::messages::create_acls_response::AclCreationResult;
use kafka_codec::messages::{CreateAclsRequest, CreateAclsResponse};
use kafka_codec::{ApiKey, ErrorCode};

pub const API: ApiKey = ApiKey::CreateAcls;

pub fn handle(context: &Context<'_>, request: &CreateAclsRequest) -> CreateAclsResponse {
    let mut acls = context.shared.acls();
    let results = request
        .creations
        .iter()
        .map(|creation| {
            let binding = AclBinding {
                resource_type: creation.resource_type,
                resource_name: creation.resource_name.to_string(),
                pattern_type: creation.resource_pattern_type,
                principal: creation.principal.to_string(),
                host: creation.host.to_string(),
                operation: creation.operation,
                permission: creation.permission_type,
            };
            match invalid_new(&binding) {
                None => {
                    acls.add(binding);
                    AclCreationResult::default().with_error_message(None)
                }
                Some(why) => AclCreationResult::default()
                    .with_error_code(ErrorCode::INVALID_REQUEST.code())
                    .with_error_message(Some(why.as_str().into())),
            }
        })
        .collect();
    CreateAclsResponse::default().with_results(results)
}
