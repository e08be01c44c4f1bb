//! The table of secret fields, and the fields reviewed and found not to be secrets.
//!
//! `tests/codec/redact.rs` walks every schema: each `bytes` or `records` field, and each field whose
//! name suggests a credential, must be in [`SECRETS`] or [`NOT_SECRETS`]; a new schema or
//! field therefore cannot reach the log before someone decides.

use super::{Direction, NotSecret, Secret, Type, When};
use crate::ApiKey;

use Direction::{Request, Response};

const CONFIG_VALUE: &str = "the value of a config named by the `name` beside it: \
     password-typed configs (`ssl.key.password`, `sasl.jaas.config`, ...) carry passwords, \
     private keys and JAAS logins in clear; Kafka's broker hides them in its request log";

const SECRET_CONFIG_NAME: When = When::SecretConfigName { key: "name" };

/// Every field that can carry a secret, by API, direction and path in the JSON's own keys
/// (`[]` is every element of an array).
pub static SECRETS: &[Secret] = &[
    Secret {
        api: ApiKey::SaslAuthenticate,
        direction: Request,
        path: "authBytes",
        ty: Type::Bytes,
        when: When::Always,
        reason: "the client's SASL tokens: PLAIN's password in clear, OAUTHBEARER's bearer \
                 token, SCRAM's proof (with the server's salt and nonces, enough for an \
                 offline guess of the password), GSSAPI's Kerberos tickets",
    },
    Secret {
        api: ApiKey::SaslAuthenticate,
        direction: Response,
        path: "authBytes",
        ty: Type::Bytes,
        when: When::Always,
        reason: "the server's SASL tokens: SCRAM's salt, iteration count and nonce, then its \
                 signature, which with the client's messages allow an offline guess of the \
                 password; GSSAPI's Kerberos tokens",
    },
    Secret {
        api: ApiKey::CreateTopics,
        direction: Request,
        path: "topics[].configs[].value",
        ty: Type::String,
        when: SECRET_CONFIG_NAME,
        reason: CONFIG_VALUE,
    },
    Secret {
        api: ApiKey::CreateTopics,
        direction: Response,
        path: "topics[].configs[].value",
        ty: Type::String,
        when: SECRET_CONFIG_NAME,
        reason: CONFIG_VALUE,
    },
    Secret {
        api: ApiKey::AlterConfigs,
        direction: Request,
        path: "resources[].configs[].value",
        ty: Type::String,
        when: SECRET_CONFIG_NAME,
        reason: CONFIG_VALUE,
    },
    Secret {
        api: ApiKey::IncrementalAlterConfigs,
        direction: Request,
        path: "resources[].configs[].value",
        ty: Type::String,
        when: SECRET_CONFIG_NAME,
        reason: CONFIG_VALUE,
    },
    Secret {
        api: ApiKey::DescribeConfigs,
        direction: Response,
        path: "results[].configs[].value",
        ty: Type::String,
        when: SECRET_CONFIG_NAME,
        reason: CONFIG_VALUE,
    },
    Secret {
        api: ApiKey::DescribeConfigs,
        direction: Response,
        path: "results[].configs[].synonyms[].value",
        ty: Type::String,
        when: SECRET_CONFIG_NAME,
        reason: "a synonym's value: the same secret under another name \
                 (`listener.name.<l>.ssl.key.password` for `ssl.key.password`)",
    },
    Secret {
        api: ApiKey::StreamsGroupHeartbeat,
        direction: Request,
        path: "topology.subtopologies[].stateChangelogTopics[].topicConfigs[].value",
        ty: Type::String,
        when: When::SecretConfigName { key: "key" },
        reason: "a config value of an internal topic, named by the `key` beside it",
    },
    Secret {
        api: ApiKey::StreamsGroupHeartbeat,
        direction: Request,
        path: "topology.subtopologies[].repartitionSourceTopics[].topicConfigs[].value",
        ty: Type::String,
        when: When::SecretConfigName { key: "key" },
        reason: "a config value of an internal topic, named by the `key` beside it",
    },
    Secret {
        api: ApiKey::StreamsGroupDescribe,
        direction: Response,
        path: "groups[].topology.subtopologies[].stateChangelogTopics[].topicConfigs[].value",
        ty: Type::String,
        when: When::SecretConfigName { key: "key" },
        reason: "a config value of an internal topic, named by the `key` beside it",
    },
    Secret {
        api: ApiKey::StreamsGroupDescribe,
        direction: Response,
        path: "groups[].topology.subtopologies[].repartitionSourceTopics[].topicConfigs[].value",
        ty: Type::String,
        when: When::SecretConfigName { key: "key" },
        reason: "a config value of an internal topic, named by the `key` beside it",
    },
    Secret {
        api: ApiKey::AlterUserScramCredentials,
        direction: Request,
        path: "upsertions[].salt",
        ty: Type::Bytes,
        when: When::Always,
        reason: "SCRAM credential material; Kafka redacts the salt in its own metadata log \
                 output too",
    },
    Secret {
        api: ApiKey::AlterUserScramCredentials,
        direction: Request,
        path: "upsertions[].saltedPassword",
        ty: Type::Bytes,
        when: When::Always,
        reason: "SCRAM's SaltedPassword: whoever has it can log in as the user",
    },
    Secret {
        api: ApiKey::CreateDelegationToken,
        direction: Response,
        path: "hmac",
        ty: Type::Bytes,
        when: When::Always,
        reason: "a delegation token's HMAC is its password (SCRAM with the token id as user)",
    },
    Secret {
        api: ApiKey::RenewDelegationToken,
        direction: Request,
        path: "hmac",
        ty: Type::Bytes,
        when: When::Always,
        reason: "a delegation token's HMAC is its password (SCRAM with the token id as user)",
    },
    Secret {
        api: ApiKey::ExpireDelegationToken,
        direction: Request,
        path: "hmac",
        ty: Type::Bytes,
        when: When::Always,
        reason: "a delegation token's HMAC is its password (SCRAM with the token id as user)",
    },
    Secret {
        api: ApiKey::DescribeDelegationToken,
        direction: Response,
        path: "tokens[].hmac",
        ty: Type::Bytes,
        when: When::Always,
        reason: "a delegation token's HMAC is its password (SCRAM with the token id as user)",
    },
    Secret {
        api: ApiKey::Envelope,
        direction: Request,
        path: "requestData",
        ty: Type::Bytes,
        when: When::Always,
        reason: "a whole forwarded request frame (CreateTopics, AlterConfigs, \
                 IncrementalAlterConfigs, AlterUserScramCredentials, delegation tokens: \
                 the requests that carry secrets are the ones brokers forward)",
    },
    Secret {
        api: ApiKey::Envelope,
        direction: Response,
        path: "responseData",
        ty: Type::Bytes,
        when: When::Always,
        reason: "a whole forwarded response frame (CreateDelegationToken's HMAC, CreateTopics' \
                 config values); it does not say its API, so it cannot be shown selectively",
    },
    Secret {
        api: ApiKey::Fetch,
        direction: Response,
        path: "responses[].partitions[].records",
        ty: Type::Records,
        when: When::MetadataTopic {
            element: "responses[]",
        },
        reason: "KRaft's metadata log holds SCRAM credentials (salt, stored and server keys) \
                 and config values in clear; Kafka redacts them when it prints those records",
    },
    Secret {
        api: ApiKey::FetchSnapshot,
        direction: Response,
        path: "topics[].partitions[].unalignedRecords",
        ty: Type::Records,
        when: When::Always,
        reason: "a snapshot of KRaft's metadata log (the only log FetchSnapshot serves): \
                 SCRAM credentials and config values in clear",
    },
];

/// Fields reviewed and found not to be secrets, grouped by reason.
pub static NOT_SECRETS: &[NotSecret] = &[
    NotSecret {
        reason: "group protocol data: the consumer protocol's topics, partitions, owned \
                 partitions and its user data, Connect's worker URLs and config offsets; \
                 opaque to Kafka and carrying no credential in the protocols Kafka ships",
        fields: &[
            ("JoinGroupRequest", "protocols[].metadata"),
            ("JoinGroupResponse", "members[].metadata"),
            ("SyncGroupRequest", "assignments[].assignment"),
            ("SyncGroupResponse", "assignment"),
            (
                "DescribeGroupsResponse",
                "groups[].members[].memberMetadata",
            ),
            (
                "DescribeGroupsResponse",
                "groups[].members[].memberAssignment",
            ),
            ("ConsumerProtocolAssignment", "userData"),
            ("ConsumerProtocolSubscription", "userData"),
        ],
    },
    NotSecret {
        reason: "application records: what clients produce and consume is the traffic being \
                 inspected, not Kafka's credentials (clients cannot produce to KRaft's metadata \
                 log, and share groups cannot read it)",
        fields: &[
            ("ProduceRequest", "topicData[].partitionData[].records"),
            ("ShareFetchResponse", "responses[].partitions[].records"),
        ],
    },
    NotSecret {
        reason: "the forwarding broker's view of the client: its principal (type, name, \
                 whether it used a token) and its IP address, identities and not credentials",
        fields: &[
            ("EnvelopeRequest", "requestPrincipal"),
            ("EnvelopeRequest", "clientHostAddress"),
            ("DefaultPrincipalData", "tokenAuthenticated"),
        ],
    },
    NotSecret {
        reason: "client telemetry: metric names, values and the client's own labels",
        fields: &[("PushTelemetryRequest", "metrics")],
    },
    NotSecret {
        reason: "principals and token ids are identities: who owns, renews or asked for a \
                 token, whom an ACL names; a token id is the user name a token logs in with, \
                 worthless without its HMAC",
        fields: &[
            ("CreateAclsRequest", "creations[].principal"),
            ("DeleteAclsRequest", "filters[].principalFilter"),
            (
                "DeleteAclsResponse",
                "filterResults[].matchingAcls[].principal",
            ),
            ("DescribeAclsRequest", "principalFilter"),
            ("DescribeAclsResponse", "resources[].acls[].principal"),
            ("CreateDelegationTokenRequest", "ownerPrincipalType"),
            ("CreateDelegationTokenRequest", "ownerPrincipalName"),
            ("CreateDelegationTokenRequest", "renewers[].principalType"),
            ("CreateDelegationTokenRequest", "renewers[].principalName"),
            ("CreateDelegationTokenResponse", "principalType"),
            ("CreateDelegationTokenResponse", "principalName"),
            (
                "CreateDelegationTokenResponse",
                "tokenRequesterPrincipalType",
            ),
            (
                "CreateDelegationTokenResponse",
                "tokenRequesterPrincipalName",
            ),
            ("CreateDelegationTokenResponse", "tokenId"),
            ("DescribeDelegationTokenRequest", "owners[].principalType"),
            ("DescribeDelegationTokenRequest", "owners[].principalName"),
            ("DescribeDelegationTokenResponse", "tokens[]"),
            ("DescribeDelegationTokenResponse", "tokens[].principalType"),
            ("DescribeDelegationTokenResponse", "tokens[].principalName"),
            (
                "DescribeDelegationTokenResponse",
                "tokens[].tokenRequesterPrincipalType",
            ),
            (
                "DescribeDelegationTokenResponse",
                "tokens[].tokenRequesterPrincipalName",
            ),
            ("DescribeDelegationTokenResponse", "tokens[].tokenId"),
            (
                "DescribeDelegationTokenResponse",
                "tokens[].renewers[].principalType",
            ),
            (
                "DescribeDelegationTokenResponse",
                "tokens[].renewers[].principalName",
            ),
        ],
    },
    NotSecret {
        reason: "SCRAM parameters, not material: the mechanism and iteration count (Kafka's \
                 own DescribeUserScramCredentials returns them to any authorized caller)",
        fields: &[(
            "DescribeUserScramCredentialsResponse",
            "results[].credentialInfos[]",
        )],
    },
    NotSecret {
        reason: "arrays of config entries: their values are in the table, their names are not \
                 secret",
        fields: &[
            ("CreateTopicsRequest", "topics[].configs[]"),
            ("CreateTopicsResponse", "topics[].configs[]"),
            ("AlterConfigsRequest", "resources[].configs[]"),
            ("IncrementalAlterConfigsRequest", "resources[].configs[]"),
            ("DescribeConfigsResponse", "results[].configs[]"),
            (
                "StreamsGroupHeartbeatRequest",
                "topology.subtopologies[].stateChangelogTopics[].topicConfigs[]",
            ),
            (
                "StreamsGroupHeartbeatRequest",
                "topology.subtopologies[].repartitionSourceTopics[].topicConfigs[]",
            ),
            (
                "StreamsGroupDescribeResponse",
                "groups[].topology.subtopologies[].stateChangelogTopics[].topicConfigs[]",
            ),
            (
                "StreamsGroupDescribeResponse",
                "groups[].topology.subtopologies[].repartitionSourceTopics[].topicConfigs[]",
            ),
            (
                "StreamsGroupHeartbeatRequest",
                "topology.subtopologies[].stateChangelogTopics[].topicConfigs[].key",
            ),
            (
                "StreamsGroupHeartbeatRequest",
                "topology.subtopologies[].repartitionSourceTopics[].topicConfigs[].key",
            ),
            (
                "StreamsGroupDescribeResponse",
                "groups[].topology.subtopologies[].stateChangelogTopics[].topicConfigs[].key",
            ),
            (
                "StreamsGroupDescribeResponse",
                "groups[].topology.subtopologies[].repartitionSourceTopics[].topicConfigs[].key",
            ),
        ],
    },
    NotSecret {
        reason: "about configs, not their values: names asked for, a config's source, type \
                 and error code, resources that have configs",
        fields: &[
            ("DescribeConfigsRequest", "resources[].configurationKeys[]"),
            (
                "DescribeConfigsResponse",
                "results[].configs[].configSource",
            ),
            ("DescribeConfigsResponse", "results[].configs[].configType"),
            ("CreateTopicsResponse", "topics[].configs[].configSource"),
            ("CreateTopicsResponse", "topics[].topicConfigErrorCode"),
            (
                "IncrementalAlterConfigsRequest",
                "resources[].configs[].configOperation",
            ),
            ("ListConfigResourcesResponse", "configResources[]"),
        ],
    },
    NotSecret {
        reason: "client quotas: entity names and numeric limits",
        fields: &[
            ("AlterClientQuotasRequest", "entries[].ops[].key"),
            ("AlterClientQuotasRequest", "entries[].ops[].value"),
            ("DescribeClientQuotasResponse", "entries[].values[]"),
            ("DescribeClientQuotasResponse", "entries[].values[].key"),
            ("DescribeClientQuotasResponse", "entries[].values[].value"),
        ],
    },
    NotSecret {
        reason: "Streams client tags: labels for rack-aware task assignment",
        fields: &[
            ("StreamsGroupHeartbeatRequest", "clientTags[].key"),
            ("StreamsGroupHeartbeatRequest", "clientTags[].value"),
            (
                "StreamsGroupDescribeResponse",
                "groups[].members[].clientTags[].key",
            ),
            (
                "StreamsGroupDescribeResponse",
                "groups[].members[].clientTags[].value",
            ),
        ],
    },
    NotSecret {
        reason: "`key` means a lookup key here: API keys, coordinator keys (group and \
                 transactional ids), whether a log dir is the future one",
        fields: &[
            ("RequestHeader", "requestApiKey"),
            ("ApiVersionsResponse", "apiKeys[]"),
            ("ApiVersionsResponse", "apiKeys[].apiKey"),
            ("FindCoordinatorRequest", "key"),
            ("FindCoordinatorRequest", "keyType"),
            ("FindCoordinatorRequest", "coordinatorKeys[]"),
            ("FindCoordinatorResponse", "coordinators[].key"),
            (
                "DescribeLogDirsResponse",
                "results[].topics[].partitions[].isFutureKey",
            ),
        ],
    },
    NotSecret {
        reason: "`auth` means authorization here: bit sets of the operations a caller may \
                 perform, and the flags that ask for them",
        fields: &[
            (
                "ConsumerGroupDescribeRequest",
                "includeAuthorizedOperations",
            ),
            (
                "ConsumerGroupDescribeResponse",
                "groups[].authorizedOperations",
            ),
            (
                "DescribeClusterRequest",
                "includeClusterAuthorizedOperations",
            ),
            ("DescribeClusterResponse", "clusterAuthorizedOperations"),
            ("DescribeGroupsRequest", "includeAuthorizedOperations"),
            ("DescribeGroupsResponse", "groups[].authorizedOperations"),
            (
                "DescribeTopicPartitionsResponse",
                "topics[].topicAuthorizedOperations",
            ),
            ("MetadataRequest", "includeClusterAuthorizedOperations"),
            ("MetadataRequest", "includeTopicAuthorizedOperations"),
            ("MetadataResponse", "topics[].topicAuthorizedOperations"),
            ("MetadataResponse", "clusterAuthorizedOperations"),
            ("ShareGroupDescribeRequest", "includeAuthorizedOperations"),
            (
                "ShareGroupDescribeResponse",
                "groups[].authorizedOperations",
            ),
            ("StreamsGroupDescribeRequest", "includeAuthorizedOperations"),
            (
                "StreamsGroupDescribeResponse",
                "groups[].authorizedOperations",
            ),
        ],
    },
];
