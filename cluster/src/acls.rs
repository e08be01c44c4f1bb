//! The cluster's ACLs, as Kafka's `StandardAuthorizer` keeps them: bindings of a resource
//! pattern (type, name, LITERAL or PREFIXED) to an entry (principal, host, operation,
//! ALLOW or DENY), and the filters CreateAcls, DescribeAcls and DeleteAcls match them with
//! (`ResourcePatternFilter` and `AccessControlEntryFilter`: ANY, MATCH, a null name or
//! principal or host matching every one). The numeric codes are Kafka's enums' codes.

use std::fmt;

/// `ResourceType` codes.
pub mod resource_type {
    pub const ANY: i8 = 1;
    pub const TOPIC: i8 = 2;
    pub const GROUP: i8 = 3;
    pub const CLUSTER: i8 = 4;
    pub const TRANSACTIONAL_ID: i8 = 5;
    pub const DELEGATION_TOKEN: i8 = 6;
    pub const USER: i8 = 7;
}

/// `PatternType` codes.
pub mod pattern_type {
    pub const ANY: i8 = 1;
    pub const MATCH: i8 = 2;
    pub const LITERAL: i8 = 3;
    pub const PREFIXED: i8 = 4;
}

/// `AclOperation` codes.
pub mod operation {
    pub const ANY: i8 = 1;
    pub const ALL: i8 = 2;
    pub const READ: i8 = 3;
    pub const DESCRIBE: i8 = 8;
    pub const CREATE_TOKENS: i8 = 13;
    pub const DESCRIBE_TOKENS: i8 = 14;
    /// The last one Kafka 4.4 knows (TWO_PHASE_COMMIT).
    pub const LAST: i8 = 15;
}

/// `AclPermissionType` codes.
pub mod permission {
    pub const ANY: i8 = 1;
    pub const DENY: i8 = 2;
    pub const ALLOW: i8 = 3;
}

/// The one name a CLUSTER resource has.
pub const CLUSTER_NAME: &str = "kafka-cluster";
/// The resource name and host that match every one.
pub const WILDCARD: &str = "*";

/// One ACL.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AclBinding {
    pub resource_type: i8,
    pub resource_name: String,
    pub pattern_type: i8,
    pub principal: String,
    pub host: String,
    pub operation: i8,
    pub permission: i8,
}

/// A filter over ACLs, as DescribeAcls and DeleteAcls send one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclFilter {
    pub resource_type: i8,
    pub resource_name: Option<String>,
    pub pattern_type: i8,
    pub principal: Option<String>,
    pub host: Option<String>,
    pub operation: i8,
    pub permission: i8,
}

impl AclFilter {
    /// Whether `acl` matches, as Kafka's `AclBindingFilter.matches` decides.
    pub fn matches(&self, acl: &AclBinding) -> bool {
        self.matches_pattern(acl) && self.matches_entry(acl)
    }

    fn matches_pattern(&self, acl: &AclBinding) -> bool {
        if self.resource_type != resource_type::ANY && self.resource_type != acl.resource_type {
            return false;
        }
        let any_type = matches!(self.pattern_type, pattern_type::ANY | pattern_type::MATCH);
        if !any_type && self.pattern_type != acl.pattern_type {
            return false;
        }
        let Some(name) = &self.resource_name else {
            return true;
        };
        if self.pattern_type == pattern_type::ANY || self.pattern_type == acl.pattern_type {
            return *name == acl.resource_name;
        }
        // MATCH: the patterns that would apply to a resource of this name.
        match acl.pattern_type {
            pattern_type::LITERAL => *name == acl.resource_name || acl.resource_name == WILDCARD,
            pattern_type::PREFIXED => name.starts_with(&acl.resource_name),
            _ => false,
        }
    }

    fn matches_entry(&self, acl: &AclBinding) -> bool {
        self.principal.as_ref().is_none_or(|p| *p == acl.principal)
            && self.host.as_ref().is_none_or(|h| *h == acl.host)
            && (self.operation == operation::ANY || self.operation == acl.operation)
            && (self.permission == permission::ANY || self.permission == acl.permission)
    }

    /// Why Kafka refuses this filter (`AclBindingFilter.findIndefiniteField`: an UNKNOWN
    /// code anywhere), if it does.
    pub fn invalid(&self) -> Option<String> {
        let unknown = [
            ("resourceType", self.resource_type, 7),
            ("patternType", self.pattern_type, 4),
            ("operation", self.operation, operation::LAST),
            ("permissionType", self.permission, 3),
        ];
        unknown
            .into_iter()
            .find(|(_, code, last)| *code < 1 || code > last)
            .map(|(field, code, _)| format!("Unknown {field} {code}"))
    }
}

/// Why Kafka refuses to create `acl` (`AclControlManager.validateNewAcl`, and the CLUSTER
/// resource's one name), if it does.
pub fn invalid_new(acl: &AclBinding) -> Option<String> {
    if !(resource_type::TOPIC..=resource_type::USER).contains(&acl.resource_type) {
        return Some(format!("Invalid resourceType {}", acl.resource_type));
    }
    if !matches!(
        acl.pattern_type,
        pattern_type::LITERAL | pattern_type::PREFIXED
    ) {
        return Some(format!("Invalid patternType {}", acl.pattern_type));
    }
    if !(operation::ALL..=operation::LAST).contains(&acl.operation) {
        return Some(format!("Invalid operation {}", acl.operation));
    }
    if !matches!(acl.permission, permission::DENY | permission::ALLOW) {
        return Some(format!("Invalid permissionType {}", acl.permission));
    }
    if acl.resource_name.is_empty() {
        return Some("Resource name should not be empty".into());
    }
    if acl.resource_type == resource_type::CLUSTER && acl.resource_name != CLUSTER_NAME {
        return Some(format!(
            "The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
        ));
    }
    if !acl.principal.contains(':') {
        return Some(format!(
            "Could not parse principal from `{}` (no colon is present separating the \
             principal type from the principal name)",
            acl.principal
        ));
    }
    None
}

/// The cluster's ACLs, in the order created (a binding created twice is kept once).
#[derive(Debug, Default)]
pub struct Acls {
    bindings: Vec<AclBinding>,
}

impl Acls {
    /// Adds `acl` unless it is there already.
    pub fn add(&mut self, acl: AclBinding) {
        if !self.bindings.contains(&acl) {
            self.bindings.push(acl);
        }
    }

    /// Every ACL.
    pub fn all(&self) -> impl Iterator<Item = &AclBinding> {
        self.bindings.iter()
    }

    /// The ACLs `filter` matches.
    pub fn matching<'a>(&'a self, filter: &'a AclFilter) -> impl Iterator<Item = &'a AclBinding> {
        self.bindings.iter().filter(move |acl| filter.matches(acl))
    }

    /// Removes and returns the ACLs `filter` matches.
    pub fn remove_matching(&mut self, filter: &AclFilter) -> Vec<AclBinding> {
        let (removed, kept) = std::mem::take(&mut self.bindings)
            .into_iter()
            .partition(|acl| filter.matches(acl));
        self.bindings = kept;
        removed
    }
}

impl fmt::Display for AclBinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} on {}:{}:{} from {}",
            self.principal,
            self.operation,
            self.resource_type,
            self.pattern_type,
            self.resource_name,
            self.host
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acl(pattern: i8, name: &str) -> AclBinding {
        AclBinding {
            resource_type: resource_type::TOPIC,
            resource_name: name.into(),
            pattern_type: pattern,
            principal: "User:alice".into(),
            host: "*".into(),
            operation: operation::READ,
            permission: permission::ALLOW,
        }
    }

    fn filter(pattern: i8, name: Option<&str>) -> AclFilter {
        AclFilter {
            resource_type: resource_type::ANY,
            resource_name: name.map(Into::into),
            pattern_type: pattern,
            principal: None,
            host: None,
            operation: operation::ANY,
            permission: permission::ANY,
        }
    }

    /// The cases of Kafka's `ResourcePatternFilterTest`, as facts of its rules.
    #[test]
    fn patterns_match_as_kafkas_filters_do() {
        use pattern_type::*;
        let literal = acl(LITERAL, "Name");
        let prefixed = acl(PREFIXED, "Na");
        let wildcard = acl(LITERAL, "*");
        // LITERAL and PREFIXED filters: that type, that name exactly.
        assert!(filter(LITERAL, Some("Name")).matches(&literal));
        assert!(!filter(LITERAL, Some("Name")).matches(&prefixed));
        assert!(!filter(LITERAL, Some("Name")).matches(&wildcard));
        assert!(filter(PREFIXED, Some("Na")).matches(&prefixed));
        assert!(!filter(PREFIXED, Some("Name")).matches(&prefixed));
        // ANY: any type, the name exactly (the wildcard is a name like another).
        assert!(filter(ANY, Some("Name")).matches(&literal));
        assert!(!filter(ANY, Some("Name")).matches(&prefixed));
        assert!(filter(ANY, Some("*")).matches(&wildcard));
        // MATCH: every pattern that applies to a resource of that name.
        assert!(filter(MATCH, Some("Name")).matches(&literal));
        assert!(filter(MATCH, Some("Name")).matches(&prefixed));
        assert!(filter(MATCH, Some("Name")).matches(&wildcard));
        assert!(!filter(MATCH, Some("Other")).matches(&prefixed));
        assert!(!filter(MATCH, Some("Other")).matches(&literal));
        // No name: every name.
        for pattern in [ANY, MATCH] {
            assert!(filter(pattern, None).matches(&prefixed));
        }
        assert!(!filter(LITERAL, None).matches(&prefixed));
    }

    #[test]
    fn entries_match_by_principal_host_operation_and_permission() {
        let binding = acl(pattern_type::LITERAL, "t");
        let mut f = filter(pattern_type::ANY, None);
        assert!(f.matches(&binding));
        f.principal = Some("User:bob".into());
        assert!(!f.matches(&binding));
        f.principal = Some("User:alice".into());
        f.operation = operation::READ;
        assert!(f.matches(&binding));
        f.permission = permission::DENY;
        assert!(!f.matches(&binding));
        f.permission = permission::ALLOW;
        f.host = Some("10.0.0.1".into());
        assert!(!f.matches(&binding));
    }

    #[test]
    fn new_acls_are_checked() {
        let mut binding = acl(pattern_type::LITERAL, "t");
        assert_eq!(invalid_new(&binding), None);
        binding.pattern_type = pattern_type::MATCH;
        assert!(invalid_new(&binding).is_some());
        binding.pattern_type = pattern_type::LITERAL;
        binding.resource_type = resource_type::CLUSTER;
        assert!(invalid_new(&binding).is_some());
        binding.resource_name = CLUSTER_NAME.into();
        assert_eq!(invalid_new(&binding), None);
        binding.operation = operation::ANY;
        assert!(invalid_new(&binding).is_some());
        binding.operation = operation::ALL;
        binding.principal = "alice".into();
        assert!(invalid_new(&binding).is_some());
    }
}
