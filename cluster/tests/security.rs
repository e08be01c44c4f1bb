//! SASL and TLS on the cluster, through this crate's client connection: what is served
//! before authentication, PLAIN and SCRAM logins (SaslHandshake v1 with SaslAuthenticate
//! v0-v2, and v0's raw tokens), the refusals Kafka gives (wrong password, unknown mechanism,
//! requests out of turn), and SASL over TLS. The SCRAM client here follows RFC 5802; that
//! the server's side matches real clients is proved by librdkafka, kafka-python and
//! aiokafka (`tests/librdkafka.rs`, `kafka_python.rs`, `aiokafka.rs`), and its messages
//! against RFC 7677's example (`src/sasl.rs`).

use crate::support;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use kafka_codec::bytes::{BufMut, BytesMut};
use kafka_codec::messages::{
    ApiVersionsRequest, ListGroupsRequest, MetadataRequest, SaslAuthenticateRequest,
    SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse,
};
use kafka_codec::{ApiKey, ErrorCode, Response};
use kafka_codec_cluster::sasl::{Mechanism, SaslUser};
use kafka_codec_cluster::Cluster;
use ring::{digest, hmac, pbkdf2};
use std::num::NonZeroU32;
use support::{Client, GUARD};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn sasl_cluster() -> Cluster {
    Cluster::builder()
        .sasl(SaslUser::new(Mechanism::Plain, "alice", "alice-secret"))
        .sasl(SaslUser::new(Mechanism::ScramSha256, "bob", "bob-secret"))
        .sasl(SaslUser::new(
            Mechanism::ScramSha512,
            "carol",
            "carol-secret",
        ))
        // With SASL on, ACLs are enforced: carol may do everything, the others need ACLs.
        .super_user("User:carol")
        .build()
        .await
        .expect("cluster")
}

impl Client {
    async fn handshake(&mut self, version: i16, mechanism: &str) -> SaslHandshakeResponse {
        let request = SaslHandshakeRequest::default().with_mechanism(mechanism.into());
        match self.call(version, request).await {
            Response::SaslHandshake(body) => body,
            other => panic!("not a SaslHandshake response: {other:?}"),
        }
    }

    async fn authenticate(&mut self, version: i16, token: &[u8]) -> SaslAuthenticateResponse {
        let request = SaslAuthenticateRequest::default().with_auth_bytes(token.to_vec().into());
        match self.call(version, request).await {
            Response::SaslAuthenticate(body) => body,
            other => panic!("not a SaslAuthenticate response: {other:?}"),
        }
    }

    /// Whether the broker has closed the connection (end of stream within the guard).
    async fn is_closed(&mut self) -> bool {
        let mut buf = [0u8; 16];
        matches!(
            tokio::time::timeout(GUARD, self.tcp.read(&mut buf))
                .await
                .expect("guard"),
            Ok(0) | Err(_)
        )
    }

    /// A raw SASL token frame each way (after a SaslHandshake v0).
    async fn raw_token(&mut self, token: &[u8]) -> Option<Vec<u8>> {
        let mut out = BytesMut::new();
        out.put_u32(token.len() as u32);
        out.extend_from_slice(token);
        self.tcp.write_all(&out).await.ok()?;
        let mut size = [0u8; 4];
        tokio::time::timeout(GUARD, self.tcp.read_exact(&mut size))
            .await
            .expect("guard")
            .ok()?;
        let mut answer = vec![0u8; u32::from_be_bytes(size) as usize];
        self.tcp.read_exact(&mut answer).await.ok()?;
        Some(answer)
    }

    async fn metadata_works(&mut self) -> bool {
        matches!(
            self.call(12, MetadataRequest::default().with_topics(None))
                .await,
            Response::Metadata(_)
        )
    }
}

#[tokio::test]
async fn only_api_versions_and_the_handshake_are_served_before_authentication() {
    let cluster = sasl_cluster().await;
    let address = cluster.brokers()[0].address;
    let mut client = Client::connect(address, "gate").await;
    let Response::ApiVersions(versions) = client.call(3, ApiVersionsRequest::default()).await
    else {
        panic!("no ApiVersions answer")
    };
    for (api, max) in [(ApiKey::SaslHandshake, 1), (ApiKey::SaslAuthenticate, 2)] {
        let listed = versions.api_keys.iter().find(|k| k.api_key == api.key());
        let listed = listed.unwrap_or_else(|| panic!("{api} not listed"));
        assert_eq!((listed.min_version, listed.max_version), (0, max));
    }
    assert!(
        client
            .closed_after(12, MetadataRequest::default().with_topics(None))
            .await,
        "Metadata before authentication must close the connection"
    );

    // A second ApiVersions before the handshake closes it too, as Kafka's authenticator.
    let mut client = Client::connect(address, "gate").await;
    client.call(3, ApiVersionsRequest::default()).await;
    assert!(client.closed_after(3, ApiVersionsRequest::default()).await);

    // After a v1 handshake anything but SaslAuthenticate: ILLEGAL_SASL_STATE, then closed.
    let mut client = Client::connect(address, "gate").await;
    assert_eq!(client.handshake(1, "PLAIN").await.error_code, 0);
    let Response::ListGroups(answer) = client.call(4, ListGroupsRequest::default()).await else {
        panic!("not a ListGroups answer")
    };
    assert_eq!(answer.error_code, ErrorCode::ILLEGAL_SASL_STATE.code());
    assert!(client.is_closed().await);
}

#[tokio::test]
async fn plain_logs_in_at_every_version_and_a_wrong_password_is_refused() {
    let cluster = sasl_cluster().await;
    let address = cluster.brokers()[0].address;
    for version in 0..=2 {
        let mut client = Client::connect(address, "plain").await;
        let handshake = client.handshake(1, "PLAIN").await;
        assert_eq!(handshake.error_code, 0);
        let offered: Vec<&str> = handshake.mechanisms.iter().map(|m| &**m).collect();
        assert_eq!(offered, ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]);
        let answer = client.authenticate(version, b"\0alice\0alice-secret").await;
        assert_eq!(answer.error_code, 0, "v{version}: {answer:?}");
        assert!(answer.auth_bytes.is_empty());
        assert_eq!(answer.session_lifetime_ms, 0);
        assert!(client.metadata_works().await, "v{version}");
        // No re-authentication: a second handshake is out of turn.
        assert_eq!(
            client.handshake(1, "PLAIN").await.error_code,
            ErrorCode::ILLEGAL_SASL_STATE.code()
        );
        assert!(client.metadata_works().await);

        let mut client = Client::connect(address, "plain").await;
        client.handshake(1, "PLAIN").await;
        let answer = client.authenticate(version, b"\0alice\0wrong").await;
        assert_eq!(
            answer.error_code,
            ErrorCode::SASL_AUTHENTICATION_FAILED.code()
        );
        assert_eq!(
            answer.error_message.as_deref(),
            Some("Authentication failed: Invalid username or password")
        );
        assert!(
            client.is_closed().await,
            "v{version}: not closed after a refusal"
        );
    }
    // A SCRAM user has no PLAIN password.
    let mut client = Client::connect(address, "plain").await;
    client.handshake(1, "PLAIN").await;
    let answer = client.authenticate(2, b"\0bob\0bob-secret").await;
    assert_eq!(
        answer.error_code,
        ErrorCode::SASL_AUTHENTICATION_FAILED.code()
    );
}

#[tokio::test]
async fn an_unknown_mechanism_is_refused_and_the_connection_closed() {
    let cluster = sasl_cluster().await;
    let mut client = Client::connect(cluster.brokers()[0].address, "gssapi").await;
    let answer = client.handshake(1, "GSSAPI").await;
    assert_eq!(
        answer.error_code,
        ErrorCode::UNSUPPORTED_SASL_MECHANISM.code()
    );
    assert_eq!(answer.mechanisms.len(), 3);
    assert!(client.is_closed().await);
}

#[tokio::test]
async fn a_v0_handshake_takes_raw_tokens() {
    let cluster = sasl_cluster().await;
    let address = cluster.brokers()[0].address;
    let mut client = Client::connect(address, "raw").await;
    assert_eq!(client.handshake(0, "PLAIN").await.error_code, 0);
    assert_eq!(
        client.raw_token(b"\0alice\0alice-secret").await,
        Some(Vec::new())
    );
    assert!(client.metadata_works().await);

    // SCRAM over raw tokens.
    let mut client = Client::connect(address, "raw").await;
    assert_eq!(client.handshake(0, "SCRAM-SHA-512").await.error_code, 0);
    let mut scram = ScramClient::new(Mechanism::ScramSha512, "carol", "carol-secret");
    let server_first = client
        .raw_token(&scram.first())
        .await
        .expect("server-first");
    let server_final = client
        .raw_token(&scram.last(&server_first))
        .await
        .expect("server-final");
    scram.verify(&server_final);
    assert!(client.metadata_works().await);

    // A wrong raw PLAIN password: closed without an answer, as Kafka does.
    let mut client = Client::connect(address, "raw").await;
    client.handshake(0, "PLAIN").await;
    assert_eq!(client.raw_token(b"\0alice\0wrong").await, None);
}

#[tokio::test]
async fn scram_logs_in_with_either_hash_and_refuses_a_wrong_password() {
    let cluster = sasl_cluster().await;
    let address = cluster.brokers()[0].address;
    for (mechanism, user, password) in [
        (Mechanism::ScramSha256, "bob", "bob-secret"),
        (Mechanism::ScramSha512, "carol", "carol-secret"),
    ] {
        let mut client = Client::connect(address, "scram").await;
        assert_eq!(client.handshake(1, mechanism.name()).await.error_code, 0);
        let mut scram = ScramClient::new(mechanism, user, password);
        let first = client.authenticate(2, &scram.first()).await;
        assert_eq!(first.error_code, 0);
        let last = client.authenticate(2, &scram.last(&first.auth_bytes)).await;
        assert_eq!(last.error_code, 0, "{mechanism}: {last:?}");
        scram.verify(&last.auth_bytes);
        assert_eq!(last.session_lifetime_ms, 0);
        assert!(client.metadata_works().await);

        let mut client = Client::connect(address, "scram").await;
        client.handshake(1, mechanism.name()).await;
        let mut scram = ScramClient::new(mechanism, user, "wrong");
        let first = client.authenticate(1, &scram.first()).await;
        let last = client.authenticate(1, &scram.last(&first.auth_bytes)).await;
        assert_eq!(
            last.error_code,
            ErrorCode::SASL_AUTHENTICATION_FAILED.code()
        );
        assert_eq!(
            last.error_message.as_deref(),
            Some(
                format!(
                    "Authentication failed during authentication due to invalid credentials \
                     with SASL mechanism {mechanism}"
                )
                .as_str()
            )
        );
        assert!(client.is_closed().await);
    }
    // An unknown user is refused at the first message, with the same words.
    let mut client = Client::connect(address, "scram").await;
    client.handshake(1, "SCRAM-SHA-256").await;
    let mut scram = ScramClient::new(Mechanism::ScramSha256, "mallory", "x");
    let first = client.authenticate(2, &scram.first()).await;
    assert_eq!(
        first.error_code,
        ErrorCode::SASL_AUTHENTICATION_FAILED.code()
    );
    assert!(client.is_closed().await);
}

#[tokio::test]
async fn without_sasl_everything_is_served_and_the_handshake_is_out_of_turn() {
    let cluster = Cluster::builder().build().await.expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "open").await;
    assert!(client.metadata_works().await);
    assert_eq!(
        client.handshake(1, "PLAIN").await.error_code,
        ErrorCode::ILLEGAL_SASL_STATE.code()
    );
    assert_eq!(
        client.authenticate(2, b"\0a\0b").await.error_code,
        ErrorCode::ILLEGAL_SASL_STATE.code()
    );
    assert!(client.metadata_works().await);
}

/// RFC 5802's client side, for these tests.
struct ScramClient {
    mechanism: Mechanism,
    user: String,
    password: String,
    nonce: String,
    /// RFC 5802 extensions after the nonce (`,tokenauth=true` for a delegation token).
    extensions: String,
    client_first_bare: String,
    server_signature: Vec<u8>,
}

impl ScramClient {
    fn new(mechanism: Mechanism, user: &str, password: &str) -> Self {
        ScramClient {
            mechanism,
            user: user.into(),
            password: password.into(),
            nonce: "fyko+d2lbbFgONRv9qkxdawL".into(),
            extensions: String::new(),
            client_first_bare: String::new(),
            server_signature: Vec::new(),
        }
    }

    fn algorithms(
        &self,
    ) -> (
        hmac::Algorithm,
        &'static digest::Algorithm,
        pbkdf2::Algorithm,
    ) {
        match self.mechanism {
            Mechanism::ScramSha256 => (
                hmac::HMAC_SHA256,
                &digest::SHA256,
                pbkdf2::PBKDF2_HMAC_SHA256,
            ),
            _ => (
                hmac::HMAC_SHA512,
                &digest::SHA512,
                pbkdf2::PBKDF2_HMAC_SHA512,
            ),
        }
    }

    fn first(&mut self) -> Vec<u8> {
        self.client_first_bare = format!("n={},r={}{}", self.user, self.nonce, self.extensions);
        format!("n,,{}", self.client_first_bare).into_bytes()
    }

    fn last(&mut self, server_first: &[u8]) -> Vec<u8> {
        let server_first = std::str::from_utf8(server_first).expect("server-first is text");
        let mut nonce = "";
        let mut salt = Vec::new();
        let mut iterations = 0;
        for field in server_first.split(',') {
            match field.split_at(2) {
                ("r=", value) => nonce = value,
                ("s=", value) => salt = STANDARD.decode(value).expect("salt"),
                ("i=", value) => iterations = value.parse().expect("iterations"),
                _ => {}
            }
        }
        assert!(nonce.starts_with(&self.nonce), "{server_first}");
        assert!(iterations >= 4096, "{server_first}");
        let (mac, hash, kdf) = self.algorithms();
        let mut salted = vec![0u8; hash.output_len()];
        pbkdf2::derive(
            kdf,
            NonZeroU32::new(iterations).unwrap(),
            &salt,
            self.password.as_bytes(),
            &mut salted,
        );
        let key = hmac::Key::new(mac, &salted);
        let client_key = hmac::sign(&key, b"Client Key");
        let stored_key = digest::digest(hash, client_key.as_ref());
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!("{},{server_first},{without_proof}", self.client_first_bare);
        let signature = hmac::sign(
            &hmac::Key::new(mac, stored_key.as_ref()),
            auth_message.as_bytes(),
        );
        let proof: Vec<u8> = client_key
            .as_ref()
            .iter()
            .zip(signature.as_ref())
            .map(|(k, s)| k ^ s)
            .collect();
        let server_key = hmac::sign(&key, b"Server Key");
        self.server_signature = hmac::sign(
            &hmac::Key::new(mac, server_key.as_ref()),
            auth_message.as_bytes(),
        )
        .as_ref()
        .to_vec();
        format!("{without_proof},p={}", STANDARD.encode(proof)).into_bytes()
    }

    fn verify(&self, server_final: &[u8]) {
        assert_eq!(
            server_final,
            format!("v={}", STANDARD.encode(&self.server_signature)).as_bytes()
        );
    }
}

impl Client {
    async fn describe_scram(
        &mut self,
        users: Option<&[&str]>,
    ) -> kafka_codec::messages::DescribeUserScramCredentialsResponse {
        use kafka_codec::messages::describe_user_scram_credentials_request::UserName;
        let users = users.map(|users| {
            users
                .iter()
                .map(|u| UserName::default().with_name((*u).into()))
                .collect()
        });
        let request =
            kafka_codec::messages::DescribeUserScramCredentialsRequest::default().with_users(users);
        match self.call(0, request).await {
            Response::DescribeUserScramCredentials(body) => body,
            other => panic!("not DescribeUserScramCredentials: {other:?}"),
        }
    }

    async fn alter_scram(
        &mut self,
        request: kafka_codec::messages::AlterUserScramCredentialsRequest,
    ) -> Vec<(String, i16, Option<String>)> {
        match self.call(0, request).await {
            Response::AlterUserScramCredentials(body) => body
                .results
                .iter()
                .map(|r| {
                    (
                        r.user.to_string(),
                        r.error_code,
                        r.error_message.as_ref().map(|m| m.to_string()),
                    )
                })
                .collect(),
            other => panic!("not AlterUserScramCredentials: {other:?}"),
        }
    }

    /// Logs in with SCRAM (handshake v1, authenticate v2); whether it succeeded.
    async fn scram_login(&mut self, mechanism: Mechanism, user: &str, password: &str) -> bool {
        self.scram_login_with(ScramClient::new(mechanism, user, password))
            .await
    }

    /// Logs in with this SCRAM client; whether it succeeded.
    async fn scram_login_with(&mut self, mut scram: ScramClient) -> bool {
        let mechanism = scram.mechanism;
        assert_eq!(self.handshake(1, mechanism.name()).await.error_code, 0);
        let first = self.authenticate(2, &scram.first()).await;
        if first.error_code != 0 {
            return false;
        }
        let last = self.authenticate(2, &scram.last(&first.auth_bytes)).await;
        last.error_code == 0
    }
}

/// What `kafka-configs --alter --add-config 'SCRAM-SHA-256=[password=…]'` sends: a random
/// salt, the iterations, and `SaltedPassword = Hi(password, salt, iterations)`.
fn upsertion(
    user: &str,
    mechanism: Mechanism,
    password: &str,
    iterations: i32,
) -> kafka_codec::messages::alter_user_scram_credentials_request::ScramCredentialUpsertion {
    let (kdf, len) = match mechanism {
        Mechanism::ScramSha256 => (pbkdf2::PBKDF2_HMAC_SHA256, 32),
        _ => (pbkdf2::PBKDF2_HMAC_SHA512, 64),
    };
    let salt = b"a salt of the test".to_vec();
    let mut salted = vec![0u8; len];
    pbkdf2::derive(
        kdf,
        NonZeroU32::new(iterations.max(1) as u32).unwrap(),
        &salt,
        password.as_bytes(),
        &mut salted,
    );
    kafka_codec::messages::alter_user_scram_credentials_request::ScramCredentialUpsertion::default()
        .with_name(user.into())
        .with_mechanism(mechanism.scram_type().unwrap())
        .with_iterations(iterations)
        .with_salt(salt.into())
        .with_salted_password(salted.into())
}

#[tokio::test]
async fn scram_credentials_are_described_and_altered_and_logins_follow_them() {
    use kafka_codec::messages::alter_user_scram_credentials_request::ScramCredentialDeletion;
    use kafka_codec::messages::AlterUserScramCredentialsRequest;
    let cluster = sasl_cluster().await;
    let address = cluster.brokers()[0].address;
    let mut admin = Client::connect(address, "admin").await;
    assert!(
        admin
            .scram_login(Mechanism::ScramSha512, "carol", "carol-secret")
            .await
    );

    // Every user with a credential: bob (SHA-256) and carol (SHA-512), 4096 iterations.
    let all = admin.describe_scram(None).await;
    let listed: Vec<(String, Vec<(i8, i32)>)> = all
        .results
        .iter()
        .map(|r| {
            let infos = r
                .credential_infos
                .iter()
                .map(|c| (c.mechanism, c.iterations));
            (r.user.to_string(), infos.collect())
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("bob".into(), vec![(1, 4096)]),
            ("carol".into(), vec![(2, 4096)])
        ]
    );
    assert_eq!(admin.describe_scram(Some(&[])).await.results.len(), 2);
    let named = admin.describe_scram(Some(&["bob", "nobody", "bob"])).await;
    let named: Vec<(String, i16, Option<String>)> = named
        .results
        .iter()
        .map(|r| {
            (
                r.user.to_string(),
                r.error_code,
                r.error_message.as_ref().map(|m| m.to_string()),
            )
        })
        .collect();
    assert_eq!(
        named,
        [
            (
                "bob".into(),
                ErrorCode::DUPLICATE_RESOURCE.code(),
                Some(
                    "Cannot describe SCRAM credentials for the same user twice in a single \
                     request: bob"
                        .into()
                )
            ),
            (
                "nobody".into(),
                ErrorCode::RESOURCE_NOT_FOUND.code(),
                Some("Attempt to describe a user credential that does not exist: nobody".into())
            ),
        ]
    );

    // A new user, and bob's credential deleted; the refusals beside them change nothing.
    let results = admin
        .alter_scram(
            AlterUserScramCredentialsRequest::default()
                .with_deletions(vec![
                    ScramCredentialDeletion::default()
                        .with_name("bob".into())
                        .with_mechanism(1),
                    ScramCredentialDeletion::default()
                        .with_name("carol".into())
                        .with_mechanism(1),
                ])
                .with_upsertions(vec![
                    upsertion("dave", Mechanism::ScramSha256, "dave-secret", 8192),
                    upsertion("erin", Mechanism::ScramSha512, "x", 4095),
                    upsertion("frank", Mechanism::ScramSha512, "x", 16385),
                    upsertion("", Mechanism::ScramSha512, "x", 4096),
                    upsertion("gina", Mechanism::ScramSha256, "x", 4096),
                    upsertion("gina", Mechanism::ScramSha512, "x", 4096),
                    upsertion("hal", Mechanism::ScramSha256, "x", 4096).with_mechanism(3),
                ]),
        )
        .await;
    let some = |code: ErrorCode, message: &str| (code.code(), Some(message.to_owned()));
    let by_user: std::collections::BTreeMap<String, (i16, Option<String>)> = results
        .into_iter()
        .map(|(user, code, message)| (user, (code, message)))
        .collect();
    assert_eq!(by_user["bob"], (0, None));
    assert_eq!(by_user["dave"], (0, None));
    assert_eq!(
        by_user["carol"],
        some(
            ErrorCode::RESOURCE_NOT_FOUND,
            "Attempt to delete a user credential that does not exist"
        )
    );
    assert_eq!(
        by_user["erin"],
        some(ErrorCode::UNACCEPTABLE_CREDENTIAL, "Too few iterations")
    );
    assert_eq!(
        by_user["frank"],
        some(ErrorCode::UNACCEPTABLE_CREDENTIAL, "Too many iterations")
    );
    assert_eq!(
        by_user[""],
        some(
            ErrorCode::UNACCEPTABLE_CREDENTIAL,
            "Username must not be empty"
        )
    );
    assert_eq!(
        by_user["gina"],
        some(
            ErrorCode::DUPLICATE_RESOURCE,
            "A user credential cannot be altered twice in the same request"
        )
    );
    assert_eq!(
        by_user["hal"],
        some(
            ErrorCode::UNSUPPORTED_SASL_MECHANISM,
            "Unknown SCRAM mechanism"
        )
    );
    assert_eq!(by_user.len(), 8);
    let users: Vec<String> = admin
        .describe_scram(None)
        .await
        .results
        .iter()
        .map(|r| r.user.to_string())
        .collect();
    assert_eq!(users, ["carol", "dave"]);

    // The logins follow: dave in with the password whose SaltedPassword was sent, bob out.
    let mut client = Client::connect(address, "dave").await;
    assert!(
        client
            .scram_login(Mechanism::ScramSha256, "dave", "dave-secret")
            .await
    );
    assert!(client.metadata_works().await);
    let mut client = Client::connect(address, "dave").await;
    assert!(
        !client
            .scram_login(Mechanism::ScramSha256, "dave", "wrong")
            .await
    );
    let mut client = Client::connect(address, "bob").await;
    assert!(
        !client
            .scram_login(Mechanism::ScramSha256, "bob", "bob-secret")
            .await
    );
}

/// Kafka's enum codes (ResourceType, PatternType, AclOperation, AclPermissionType).
const TOPIC: i8 = 2;
const GROUP: i8 = 3;
const CLUSTER: i8 = 4;
const LITERAL: i8 = 3;
const PREFIXED: i8 = 4;
const READ: i8 = 3;
const WRITE: i8 = 4;
const DESCRIBE: i8 = 8;
const ALLOW: i8 = 3;
const DENY: i8 = 2;
const ANY: i8 = 1;
const MATCH: i8 = 2;

fn creation(
    resource_type: i8,
    name: &str,
    pattern: i8,
    principal: &str,
    operation: i8,
    permission: i8,
) -> kafka_codec::messages::create_acls_request::AclCreation {
    kafka_codec::messages::create_acls_request::AclCreation::default()
        .with_resource_type(resource_type)
        .with_resource_name(name.into())
        .with_resource_pattern_type(pattern)
        .with_principal(principal.into())
        .with_host("*".into())
        .with_operation(operation)
        .with_permission_type(permission)
}

impl Client {
    /// (resource type, name, pattern type, principal, operation, permission) of each ACL
    /// the filter describes.
    async fn describe_acls(
        &mut self,
        version: i16,
        filter: kafka_codec::messages::DescribeAclsRequest,
    ) -> Result<Vec<(i8, String, i8, String, i8, i8)>, i16> {
        let Response::DescribeAcls(answer) = self.call(version, filter).await else {
            panic!("not DescribeAcls")
        };
        if answer.error_code != 0 {
            return Err(answer.error_code);
        }
        Ok(answer
            .resources
            .iter()
            .flat_map(|r| {
                r.acls.iter().map(|a| {
                    (
                        r.resource_type,
                        r.resource_name.to_string(),
                        r.pattern_type,
                        a.principal.to_string(),
                        a.operation,
                        a.permission_type,
                    )
                })
            })
            .collect())
    }
}

fn acl_filter(
    resource_type: i8,
    name: Option<&str>,
    pattern: i8,
    principal: Option<&str>,
) -> kafka_codec::messages::DescribeAclsRequest {
    kafka_codec::messages::DescribeAclsRequest::default()
        .with_resource_type_filter(resource_type)
        .with_resource_name_filter(name.map(Into::into))
        .with_pattern_type_filter(pattern)
        .with_principal_filter(principal.map(Into::into))
        .with_host_filter(None)
        .with_operation(ANY)
        .with_permission_type(ANY)
}

#[tokio::test]
async fn acls_are_created_described_by_every_kind_of_filter_and_deleted() {
    use kafka_codec::messages::delete_acls_request::DeleteAclsFilter;
    use kafka_codec::messages::{CreateAclsRequest, DeleteAclsRequest};
    let cluster = Cluster::builder().build().await.expect("cluster");
    let mut client = Client::connect(cluster.brokers()[0].address, "acls").await;
    let Response::CreateAcls(created) = client
        .call(
            3,
            CreateAclsRequest::default().with_creations(vec![
                creation(TOPIC, "orders", LITERAL, "User:alice", READ, ALLOW),
                creation(TOPIC, "ord", PREFIXED, "User:bob", WRITE, ALLOW),
                creation(TOPIC, "*", LITERAL, "User:carol", DESCRIBE, DENY),
                creation(GROUP, "g", LITERAL, "User:alice", READ, ALLOW),
                creation(
                    CLUSTER,
                    "kafka-cluster",
                    LITERAL,
                    "User:alice",
                    DESCRIBE,
                    ALLOW,
                ),
                // Refused: a MATCH pattern, CLUSTER by another name, ANY operation, no type.
                creation(TOPIC, "x", MATCH, "User:alice", READ, ALLOW),
                creation(CLUSTER, "other", LITERAL, "User:alice", READ, ALLOW),
                creation(TOPIC, "x", LITERAL, "User:alice", ANY, ALLOW),
                creation(TOPIC, "x", LITERAL, "alice", READ, ALLOW),
                // Again: a success, kept once.
                creation(TOPIC, "orders", LITERAL, "User:alice", READ, ALLOW),
            ]),
        )
        .await
    else {
        panic!("not CreateAcls")
    };
    let codes: Vec<i16> = created.results.iter().map(|r| r.error_code).collect();
    let invalid = ErrorCode::INVALID_REQUEST.code();
    assert_eq!(
        codes,
        [0, 0, 0, 0, 0, invalid, invalid, invalid, invalid, 0]
    );

    let names = |acls: Vec<(i8, String, i8, String, i8, i8)>| -> Vec<String> {
        acls.into_iter()
            .map(|a| format!("{}:{}", a.1, a.3))
            .collect()
    };
    // ANY everything: all five.
    let all = client
        .describe_acls(3, acl_filter(ANY, None, ANY, None))
        .await
        .unwrap();
    assert_eq!(all.len(), 5);
    // MATCH "orders": the literal, the prefix and the wildcard that apply to it.
    let matched = client
        .describe_acls(3, acl_filter(TOPIC, Some("orders"), MATCH, None))
        .await
        .unwrap();
    assert_eq!(
        names(matched),
        ["orders:User:alice", "ord:User:bob", "*:User:carol"]
    );
    // LITERAL "orders": that one; PREFIXED "orders": none (the prefix is "ord").
    let literal = client
        .describe_acls(3, acl_filter(TOPIC, Some("orders"), LITERAL, None))
        .await
        .unwrap();
    assert_eq!(names(literal), ["orders:User:alice"]);
    let prefixed = client
        .describe_acls(3, acl_filter(TOPIC, Some("orders"), PREFIXED, None))
        .await
        .unwrap();
    assert!(prefixed.is_empty());
    // By principal, any resource type.
    let alice = client
        .describe_acls(3, acl_filter(ANY, None, ANY, Some("User:alice")))
        .await
        .unwrap();
    assert_eq!(
        names(alice),
        [
            "orders:User:alice",
            "g:User:alice",
            "kafka-cluster:User:alice"
        ]
    );
    // v0 has no pattern type: LITERAL.
    let v0 = client
        .describe_acls(0, acl_filter(TOPIC, None, LITERAL, None))
        .await
        .unwrap();
    assert_eq!(names(v0), ["orders:User:alice", "*:User:carol"]);
    // An UNKNOWN code in the filter: INVALID_REQUEST.
    assert_eq!(
        client
            .describe_acls(3, acl_filter(0, None, ANY, None))
            .await,
        Err(invalid)
    );

    // Delete alice's ACLs of any kind and a filter refused beside it.
    let alice_filter = DeleteAclsFilter::default()
        .with_resource_type_filter(ANY)
        .with_resource_name_filter(None)
        .with_pattern_type_filter(ANY)
        .with_principal_filter(Some("User:alice".into()))
        .with_host_filter(None)
        .with_operation(ANY)
        .with_permission_type(ANY);
    let Response::DeleteAcls(deleted) = client
        .call(
            3,
            DeleteAclsRequest::default()
                .with_filters(vec![alice_filter.clone(), alice_filter.with_operation(0)]),
        )
        .await
    else {
        panic!("not DeleteAcls")
    };
    assert_eq!(deleted.filter_results[0].error_code, 0);
    assert_eq!(deleted.filter_results[0].matching_acls.len(), 3);
    assert_eq!(deleted.filter_results[1].error_code, invalid);
    let left = client
        .describe_acls(3, acl_filter(ANY, None, ANY, None))
        .await
        .unwrap();
    assert_eq!(names(left), ["ord:User:bob", "*:User:carol"]);
}

/// With SASL on, ACLs are enforced in front of every handler: nothing without an ACL, the
/// operation's ACL lets it through (a prefix, DESCRIBE implied by READ), a DENY wins, a
/// super user needs none, and Metadata for every topic lists only what may be described.
#[tokio::test]
async fn acls_are_enforced_when_sasl_is_on() {
    use kafka_codec::messages::create_topics_request::CreatableTopic;
    use kafka_codec::messages::{CreateAclsRequest, CreateTopicsRequest, JoinGroupRequest};
    let cluster = sasl_cluster().await;
    let address = cluster.brokers()[0].address;
    let mut admin = Client::connect(address, "admin").await;
    assert!(
        admin
            .scram_login(Mechanism::ScramSha512, "carol", "carol-secret")
            .await
    );
    let Response::CreateTopics(created) = admin
        .call(
            7,
            CreateTopicsRequest::default().with_topics(
                ["orders-eu", "orders-us", "payments"]
                    .map(|name| {
                        CreatableTopic::default()
                            .with_name(name.into())
                            .with_num_partitions(1)
                            .with_replication_factor(1)
                    })
                    .to_vec(),
            ),
        )
        .await
    else {
        panic!("not CreateTopics")
    };
    assert!(
        created.topics.iter().all(|t| t.error_code == 0),
        "{created:?}"
    );

    let mut alice = Client::connect(address, "alice").await;
    alice.handshake(1, "PLAIN").await;
    assert_eq!(
        alice
            .authenticate(2, b"\0alice\0alice-secret")
            .await
            .error_code,
        0
    );
    // No ACL: produce refused per partition, Metadata lists nothing, groups refused.
    let produce = |topic: &str| support::produce(topic, 0, support::batch(0, 1));
    let produce_error = |answer: Response| match answer {
        Response::Produce(body) => body.responses[0].partition_responses[0].error_code,
        other => panic!("not Produce: {other:?}"),
    };
    let topic_denied = ErrorCode::TOPIC_AUTHORIZATION_FAILED.code();
    assert_eq!(
        produce_error(alice.call(9, produce("orders-eu")).await),
        topic_denied
    );
    let listed = |answer: Response| match answer {
        Response::Metadata(body) => body
            .topics
            .iter()
            .map(|t| t.name.as_deref().unwrap_or_default().to_owned())
            .collect::<Vec<_>>(),
        other => panic!("not Metadata: {other:?}"),
    };
    let all_topics = || MetadataRequest::default().with_topics(None);
    assert!(listed(alice.call(12, all_topics()).await).is_empty());
    let join = JoinGroupRequest::default()
        .with_group_id("g".into())
        .with_session_timeout_ms(10_000)
        .with_rebalance_timeout_ms(10_000)
        .with_protocol_type("consumer".into());
    let Response::JoinGroup(joined) = alice.call(5, join.clone()).await else {
        panic!("not JoinGroup")
    };
    assert_eq!(
        joined.error_code,
        ErrorCode::GROUP_AUTHORIZATION_FAILED.code()
    );
    // The ACL APIs need ALTER on the cluster.
    let Response::CreateAcls(refused) = alice
        .call(
            3,
            CreateAclsRequest::default().with_creations(vec![creation(
                TOPIC,
                "orders",
                PREFIXED,
                "User:alice",
                WRITE,
                ALLOW,
            )]),
        )
        .await
    else {
        panic!("not CreateAcls")
    };
    assert_eq!(
        refused.results[0].error_code,
        ErrorCode::CLUSTER_AUTHORIZATION_FAILED.code()
    );

    // The super user grants WRITE on the prefix "orders" and denies orders-us.
    let Response::CreateAcls(granted) = admin
        .call(
            3,
            CreateAclsRequest::default().with_creations(vec![
                creation(TOPIC, "orders", PREFIXED, "User:alice", WRITE, ALLOW),
                creation(TOPIC, "orders-us", LITERAL, "User:*", WRITE, DENY),
            ]),
        )
        .await
    else {
        panic!("not CreateAcls")
    };
    assert!(granted.results.iter().all(|r| r.error_code == 0));
    assert_eq!(produce_error(alice.call(9, produce("orders-eu")).await), 0);
    assert_eq!(
        produce_error(alice.call(9, produce("orders-us")).await),
        topic_denied
    );
    assert_eq!(
        produce_error(alice.call(9, produce("payments")).await),
        topic_denied
    );
    // WRITE implies DESCRIBE: both orders topics are listed (DENY was for WRITE only).
    assert_eq!(
        listed(alice.call(12, all_topics()).await),
        ["orders-eu", "orders-us"]
    );
    // Topics named: each refused alone, existing or not; the others answered.
    let named = MetadataRequest::default().with_topics(Some(
        ["orders-eu", "payments", "nothing"]
            .map(|name| {
                kafka_codec::messages::metadata_request::MetadataRequestTopic::default()
                    .with_name(Some(name.into()))
            })
            .to_vec(),
    ));
    let Response::Metadata(answer) = alice.call(12, named).await else {
        panic!("not Metadata")
    };
    let codes: Vec<(String, i16, usize)> = answer
        .topics
        .iter()
        .map(|t| {
            let name = t.name.as_deref().unwrap_or_default().to_owned();
            (name, t.error_code, t.partitions.len())
        })
        .collect();
    assert_eq!(
        codes,
        [
            ("orders-eu".into(), 0, 1),
            ("payments".into(), topic_denied, 0),
            ("nothing".into(), topic_denied, 0),
        ]
    );
    // The super user needs no ACL.
    assert_eq!(produce_error(admin.call(9, produce("payments")).await), 0);
}

/// The transaction and KIP-848 group APIs are held to the ACLs as Kafka's brokers hold
/// them: the transactional id first (WRITE; DESCRIBE to find its coordinator), then the
/// group (READ), then the topics (DESCRIBE of a subscription).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transaction_and_consumer_group_apis_are_held_to_the_acls() {
    use kafka_codec::messages::{
        AddOffsetsToTxnRequest, ConsumerGroupHeartbeatRequest, CreateAclsRequest, EndTxnRequest,
        FindCoordinatorRequest,
    };
    const TRANSACTIONAL_ID: i8 = 5;
    let cluster = sasl_cluster().await;
    let address = cluster.brokers()[0].address;
    let mut admin = Client::connect(address, "admin").await;
    assert!(
        admin
            .scram_login(Mechanism::ScramSha512, "carol", "carol-secret")
            .await
    );
    let mut alice = Client::connect(address, "alice").await;
    alice.handshake(1, "PLAIN").await;
    assert_eq!(
        alice
            .authenticate(2, b"\0alice\0alice-secret")
            .await
            .error_code,
        0
    );
    let txn_denied = ErrorCode::TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code();
    let group_denied = ErrorCode::GROUP_AUTHORIZATION_FAILED.code();
    let find = FindCoordinatorRequest::default()
        .with_key("tx".into())
        .with_key_type(1);
    let Response::FindCoordinator(found) = alice.call(3, find.clone()).await else {
        panic!("not FindCoordinator")
    };
    assert_eq!(found.error_code, txn_denied);
    let end = EndTxnRequest::default()
        .with_transactional_id("tx".into())
        .with_committed(true);
    let Response::EndTxn(ended) = alice.call(3, end.clone()).await else {
        panic!("not EndTxn")
    };
    assert_eq!(ended.error_code, txn_denied);
    let heartbeat = ConsumerGroupHeartbeatRequest::default()
        .with_group_id("g".into())
        .with_member_epoch(0)
        .with_rebalance_timeout_ms(10_000)
        .with_subscribed_topic_names(Some(vec!["orders".into()]));
    let Response::ConsumerGroupHeartbeat(beat) = alice.call(0, heartbeat.clone()).await else {
        panic!("not ConsumerGroupHeartbeat")
    };
    assert_eq!(beat.error_code, group_denied);

    // WRITE on the transactional id (which implies DESCRIBE) and READ on the group.
    let Response::CreateAcls(granted) = admin
        .call(
            3,
            CreateAclsRequest::default().with_creations(vec![
                creation(TRANSACTIONAL_ID, "tx", LITERAL, "User:alice", WRITE, ALLOW),
                creation(GROUP, "g", LITERAL, "User:alice", READ, ALLOW),
            ]),
        )
        .await
    else {
        panic!("not CreateAcls")
    };
    assert!(granted.results.iter().all(|r| r.error_code == 0));
    let Response::FindCoordinator(found) = alice.call(3, find).await else {
        panic!("not FindCoordinator")
    };
    assert_eq!(found.error_code, 0);
    // Past the ACLs: the transaction coordinator's own answer (no producer of that id).
    let Response::EndTxn(ended) = alice.call(3, end).await else {
        panic!("not EndTxn")
    };
    assert_ne!(ended.error_code, txn_denied);
    // The group is allowed now, the subscribed topic not (DESCRIBE is needed).
    let Response::ConsumerGroupHeartbeat(beat) = alice.call(0, heartbeat).await else {
        panic!("not ConsumerGroupHeartbeat")
    };
    assert_eq!(
        beat.error_code,
        ErrorCode::TOPIC_AUTHORIZATION_FAILED.code()
    );
    // AddOffsetsToTxn: the id allowed, another group not.
    let add = AddOffsetsToTxnRequest::default()
        .with_transactional_id("tx".into())
        .with_group_id("other".into());
    let Response::AddOffsetsToTxn(added) = alice.call(3, add).await else {
        panic!("not AddOffsetsToTxn")
    };
    assert_eq!(added.error_code, group_denied);
}

/// SASL_SSL: the listener speaks TLS with the certificate given (made now, signed by a CA
/// made now), a client that trusts the CA logs in over it with PLAIN and is served; a client
/// that does not start TLS is not served.
#[tokio::test]
async fn sasl_over_tls_serves_a_client_that_trusts_the_certificate() {
    use kafka_codec::conn::ClientConnection;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};
    use std::sync::Arc;
    let pki = support::TestPki::new("security-rs");
    let cluster = Cluster::builder()
        .sasl(SaslUser::new(Mechanism::Plain, "alice", "alice-secret"))
        .super_user("User:alice")
        .tls(&pki.cert, &pki.key)
        .build()
        .await
        .expect("cluster");
    let address = cluster.brokers()[0].address;

    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(&pki.ca).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(address).await.unwrap();
    let mut tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
        .await
        .expect("the TLS handshake");
    let mut connection = ClientConnection::new();
    let mut received = BytesMut::new();
    let mut call = async |version: i16, request: kafka_codec::Request| {
        let mut out = BytesMut::new();
        connection.send(version, &request, &mut out).unwrap();
        tls.write_all(&out).await.unwrap();
        loop {
            if let Some(answer) = connection.receive(&mut received).unwrap() {
                return answer.body;
            }
            let read = tokio::time::timeout(GUARD, tls.read_buf(&mut received))
                .await
                .expect("guard")
                .unwrap();
            assert!(read > 0, "the broker closed the TLS connection");
        }
    };
    let handshake = SaslHandshakeRequest::default().with_mechanism("PLAIN".into());
    let Response::SaslHandshake(answer) = call(1, handshake.into()).await else {
        panic!("not SaslHandshake")
    };
    assert_eq!(answer.error_code, 0);
    let login = SaslAuthenticateRequest::default()
        .with_auth_bytes(b"\0alice\0alice-secret".to_vec().into());
    let Response::SaslAuthenticate(answer) = call(2, login.into()).await else {
        panic!("not SaslAuthenticate")
    };
    assert_eq!(answer.error_code, 0);
    let metadata = MetadataRequest::default().with_topics(None);
    let Response::Metadata(answer) = call(12, metadata.into()).await else {
        panic!("not Metadata")
    };
    assert_eq!(answer.brokers.len(), 1);

    // Plain Kafka bytes to the TLS listener: at most a TLS alert (record type 21), then the
    // close; never a Kafka answer.
    let mut plain = tokio::net::TcpStream::connect(address).await.unwrap();
    let mut out = BytesMut::new();
    ClientConnection::new()
        .send(3, &ApiVersionsRequest::default().into(), &mut out)
        .unwrap();
    plain.write_all(&out).await.unwrap();
    let mut seen = Vec::new();
    tokio::time::timeout(GUARD, plain.read_to_end(&mut seen))
        .await
        .expect("guard")
        .ok();
    assert!(seen.is_empty() || seen[0] == 21, "{seen:?}");
}

/// The share group offsets APIs are held to the ACLs (DESCRIBE, READ or DELETE on the group
/// first): without an ACL each is refused with GROUP_AUTHORIZATION_FAILED; the super user is
/// answered (its alter makes the group; its delete finds no share state of the topic, which
/// is the topic's error, not the request's).
#[tokio::test]
async fn share_group_offsets_apis_are_held_to_the_acls() {
    use kafka_codec::messages::alter_share_group_offsets_request::AlterShareGroupOffsetsRequestTopic;
    use kafka_codec::messages::delete_share_group_offsets_request::DeleteShareGroupOffsetsRequestTopic;
    use kafka_codec::messages::describe_share_group_offsets_request::DescribeShareGroupOffsetsRequestGroup;
    use kafka_codec::messages::{
        AlterShareGroupOffsetsRequest, DeleteShareGroupOffsetsRequest,
        DescribeShareGroupOffsetsRequest,
    };
    let cluster = sasl_cluster().await;
    let address = cluster.brokers()[0].address;
    let mut alice = Client::connect(address, "alice").await;
    alice.handshake(1, "PLAIN").await;
    let login = alice.authenticate(2, b"\0alice\0alice-secret").await;
    assert_eq!(login.error_code, 0);
    let mut admin = Client::connect(address, "admin").await;
    assert!(
        admin
            .scram_login(Mechanism::ScramSha512, "carol", "carol-secret")
            .await
    );
    let describe = DescribeShareGroupOffsetsRequest::default().with_groups(vec![
        DescribeShareGroupOffsetsRequestGroup::default().with_group_id("g".into()),
    ]);
    let alter = AlterShareGroupOffsetsRequest::default()
        .with_group_id("g".into())
        .with_topics(vec![
            AlterShareGroupOffsetsRequestTopic::default().with_topic_name("t".into())
        ]);
    let delete = DeleteShareGroupOffsetsRequest::default()
        .with_group_id("g".into())
        .with_topics(vec![
            DeleteShareGroupOffsetsRequestTopic::default().with_topic_name("t".into())
        ]);
    let denied = ErrorCode::GROUP_AUTHORIZATION_FAILED.code();
    for (client, expected) in [(&mut alice, denied), (&mut admin, 0)] {
        let Response::DescribeShareGroupOffsets(described) = client.call(1, describe.clone()).await
        else {
            panic!("not DescribeShareGroupOffsets")
        };
        assert_eq!(described.groups[0].error_code, expected);
        let Response::AlterShareGroupOffsets(altered) = client.call(0, alter.clone()).await else {
            panic!("not AlterShareGroupOffsets")
        };
        assert_eq!(altered.error_code, expected);
        let Response::DeleteShareGroupOffsets(deleted) = client.call(0, delete.clone()).await
        else {
            panic!("not DeleteShareGroupOffsets")
        };
        // As Kafka: GROUP_AUTHORIZATION_FAILED at the top level, no topics.
        assert_eq!(deleted.error_code, expected);
        if expected != 0 {
            assert!(deleted.responses.is_empty());
        }
    }
}

// Delegation tokens (KIP-48): what Kafka 4.4's broker and controller answer (see
// `src/tokens.rs` for where each rule comes from), and logging in with one.

mod tokens {
    use super::support::now_ms;
    use super::*;
    use kafka_codec::messages::create_delegation_token_request::CreatableRenewers;
    use kafka_codec::messages::describe_delegation_token_request::DescribeDelegationTokenOwner;
    use kafka_codec::messages::{
        CreateDelegationTokenRequest, CreateDelegationTokenResponse,
        DescribeDelegationTokenRequest, DescribeDelegationTokenResponse,
        ExpireDelegationTokenRequest, ExpireDelegationTokenResponse, RenewDelegationTokenRequest,
        RenewDelegationTokenResponse,
    };

    const KEY: &str = "the cluster's token key";

    async fn token_cluster(key: Option<&str>) -> Cluster {
        let mut builder = Cluster::builder()
            .sasl(SaslUser::new(Mechanism::Plain, "alice", "alice-secret"))
            .sasl(SaslUser::new(Mechanism::Plain, "bob", "bob-secret"))
            .sasl(SaslUser::new(Mechanism::Plain, "dave", "dave-secret"))
            .sasl(SaslUser::new(Mechanism::Plain, "carol", "carol-secret"))
            .super_user("User:carol");
        if let Some(key) = key {
            builder = builder.delegation_token_secret_key(key);
        }
        builder.build().await.expect("cluster")
    }

    /// Kafka's HMAC of a token id: HmacSHA512 keyed with the secret key's UTF-8 bytes.
    fn hmac_of(id: &str) -> Vec<u8> {
        hmac::sign(
            &hmac::Key::new(hmac::HMAC_SHA512, KEY.as_bytes()),
            id.as_bytes(),
        )
        .as_ref()
        .to_vec()
    }

    fn user(name: &str) -> (String, String) {
        ("User".into(), name.into())
    }

    impl Client {
        async fn create_token(
            &mut self,
            version: i16,
            request: CreateDelegationTokenRequest,
        ) -> CreateDelegationTokenResponse {
            match self.call(version, request).await {
                Response::CreateDelegationToken(body) => body,
                other => panic!("not CreateDelegationToken: {other:?}"),
            }
        }

        async fn renew_token(&mut self, hmac: &[u8], period: i64) -> RenewDelegationTokenResponse {
            let request = RenewDelegationTokenRequest::default()
                .with_hmac(hmac.to_vec().into())
                .with_renew_period_ms(period);
            match self.call(2, request).await {
                Response::RenewDelegationToken(body) => body,
                other => panic!("not RenewDelegationToken: {other:?}"),
            }
        }

        async fn expire_token(
            &mut self,
            hmac: &[u8],
            period: i64,
        ) -> ExpireDelegationTokenResponse {
            let request = ExpireDelegationTokenRequest::default()
                .with_hmac(hmac.to_vec().into())
                .with_expiry_time_period_ms(period);
            match self.call(2, request).await {
                Response::ExpireDelegationToken(body) => body,
                other => panic!("not ExpireDelegationToken: {other:?}"),
            }
        }

        async fn describe_tokens(
            &mut self,
            version: i16,
            owners: Option<&[(String, String)]>,
        ) -> DescribeDelegationTokenResponse {
            let owners = owners.map(|owners| {
                owners
                    .iter()
                    .map(|(kind, name)| {
                        DescribeDelegationTokenOwner::default()
                            .with_principal_type(kind.as_str().into())
                            .with_principal_name(name.as_str().into())
                    })
                    .collect()
            });
            let request = DescribeDelegationTokenRequest::default().with_owners(owners);
            match self.call(version, request).await {
                Response::DescribeDelegationToken(body) => body,
                other => panic!("not DescribeDelegationToken: {other:?}"),
            }
        }

        /// The ids of the tokens a describe of every owner lists.
        async fn token_ids(&mut self) -> Vec<String> {
            let described = self.describe_tokens(3, None).await;
            assert_eq!(described.error_code, 0);
            described
                .tokens
                .iter()
                .map(|token| token.token_id.to_string())
                .collect()
        }
    }

    fn renewer(name: &str) -> CreatableRenewers {
        CreatableRenewers::default()
            .with_principal_type("User".into())
            .with_principal_name(name.into())
    }

    /// Logs in on a new connection with token `id` and its HMAC (base64) as password.
    async fn token_login(
        address: std::net::SocketAddr,
        mechanism: Mechanism,
        id: &str,
        hmac: &[u8],
    ) -> Option<Client> {
        let mut client = Client::connect(address, "token").await;
        let mut scram = ScramClient::new(mechanism, id, &STANDARD.encode(hmac));
        scram.extensions = ",tokenauth=true".into();
        client.scram_login_with(scram).await.then_some(client)
    }

    #[tokio::test]
    async fn token_requests_need_a_sasl_login_and_a_secret_key() {
        // SASL off: every token request is refused by the broker (timestamps -1).
        let plain = Cluster::builder().build().await.expect("cluster");
        let mut client = Client::connect(plain.brokers()[0].address, "plain").await;
        let created = client
            .create_token(3, CreateDelegationTokenRequest::default())
            .await;
        assert_eq!(
            created.error_code,
            ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.code()
        );
        assert_eq!(
            (
                created.principal_name.as_str(),
                created.token_requester_principal_name.as_str(),
                created.issue_timestamp_ms,
                created.expiry_timestamp_ms,
                created.max_timestamp_ms,
            ),
            ("ANONYMOUS", "ANONYMOUS", -1, -1, -1)
        );
        let renewed = client.renew_token(b"x", 0).await;
        assert_eq!(
            (renewed.error_code, renewed.expiry_timestamp_ms),
            (ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.code(), -1)
        );
        let expired = client.expire_token(b"x", 0).await;
        assert_eq!(
            (expired.error_code, expired.expiry_timestamp_ms),
            (ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.code(), -1)
        );
        assert_eq!(
            client.describe_tokens(3, None).await.error_code,
            ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.code()
        );

        // SASL on without a key: the controller's refusal (timestamps 0).
        let cluster = token_cluster(None).await;
        let mut alice = support::login(cluster.brokers()[0].address, "alice").await;
        let created = alice
            .create_token(3, CreateDelegationTokenRequest::default())
            .await;
        assert_eq!(
            created.error_code,
            ErrorCode::DELEGATION_TOKEN_AUTH_DISABLED.code()
        );
        assert_eq!(
            (
                created.principal_type.as_str(),
                created.principal_name.as_str(),
                created.token_requester_principal_name.as_str(),
                created.issue_timestamp_ms,
                created.max_timestamp_ms,
            ),
            ("User", "alice", "alice", 0, 0)
        );
        let renewed = alice.renew_token(b"x", 0).await;
        assert_eq!(
            (renewed.error_code, renewed.expiry_timestamp_ms),
            (ErrorCode::DELEGATION_TOKEN_AUTH_DISABLED.code(), 0)
        );
        assert_eq!(
            alice.expire_token(b"x", 0).await.error_code,
            ErrorCode::DELEGATION_TOKEN_AUTH_DISABLED.code()
        );
        assert_eq!(
            alice.describe_tokens(3, None).await.error_code,
            ErrorCode::DELEGATION_TOKEN_AUTH_DISABLED.code()
        );
    }

    #[tokio::test]
    async fn a_token_is_created_renewed_described_and_expired_as_kafka_does() {
        let cluster = token_cluster(Some(KEY)).await;
        let address = cluster.brokers()[0].address;
        let mut alice = support::login(address, "alice").await;
        let before = now_ms();
        let created = alice
            .create_token(
                3,
                CreateDelegationTokenRequest::default().with_renewers(vec![renewer("bob")]),
            )
            .await;
        assert_eq!(created.error_code, 0, "{created:?}");
        let id = created.token_id.to_string();
        // A random UUID's text, as Kafka's `Uuid.toString`: 22 base64url characters.
        assert_eq!(id.len(), 22, "{id}");
        assert_eq!(created.hmac.as_ref(), hmac_of(&id).as_slice());
        assert_eq!(
            (
                created.principal_name.as_str(),
                created.token_requester_principal_name.as_str()
            ),
            ("alice", "alice")
        );
        let issued = created.issue_timestamp_ms;
        assert!(issued >= before && issued <= now_ms());
        // Kafka's defaults: valid for a day, at most a week.
        assert_eq!(created.expiry_timestamp_ms, issued + 86_400_000);
        assert_eq!(created.max_timestamp_ms, issued + 604_800_000);
        // A shorter maximum asked for wins.
        let short = alice
            .create_token(
                1,
                CreateDelegationTokenRequest::default().with_max_lifetime_ms(60_000),
            )
            .await;
        assert_eq!(short.error_code, 0);
        assert_eq!(short.max_timestamp_ms, short.issue_timestamp_ms + 60_000);
        assert_eq!(short.expiry_timestamp_ms, short.max_timestamp_ms);
        let hmac = created.hmac.to_vec();

        // Renewed by a renewer, not by anyone else. For ten minutes: the steps below log in
        // with the token, and on a loaded machine (debug SCRAM) they can take seconds.
        let mut bob = support::login(address, "bob").await;
        let before = now_ms();
        let renewed = bob.renew_token(&hmac, 600_000).await;
        assert_eq!(renewed.error_code, 0);
        assert!(renewed.expiry_timestamp_ms >= before + 600_000);
        assert!(renewed.expiry_timestamp_ms <= now_ms() + 600_000);
        let mut dave = support::login(address, "dave").await;
        assert_eq!(
            dave.renew_token(&hmac, 1000).await.error_code,
            ErrorCode::DELEGATION_TOKEN_OWNER_MISMATCH.code()
        );
        assert_eq!(
            dave.renew_token(b"not a token's", 1000).await.error_code,
            ErrorCode::DELEGATION_TOKEN_NOT_FOUND.code()
        );

        // Described: to its owner and renewer, to a super user; not to another user without
        // DESCRIBE on the token or DESCRIBE_TOKENS on its owner.
        let mut both = vec![id.clone(), short.token_id.to_string()];
        both.sort();
        assert_eq!(alice.token_ids().await, both);
        assert_eq!(bob.token_ids().await, vec![id.clone()]);
        let mut carol = support::login(address, "carol").await;
        assert_eq!(carol.token_ids().await, both);
        assert!(dave.token_ids().await.is_empty());
        let described = bob.describe_tokens(3, Some(&[user("bob")])).await;
        let token = &described.tokens[0];
        assert_eq!(
            (
                token.principal_name.as_str(),
                token.token_requester_principal_name.as_str(),
                token.issue_timestamp,
                token.expiry_timestamp,
                token.max_timestamp,
                token.hmac.as_ref(),
                token.renewers.len(),
                token.renewers[0].principal_name.as_str(),
            ),
            (
                "alice",
                "alice",
                issued,
                renewed.expiry_timestamp_ms,
                created.max_timestamp_ms,
                hmac.as_slice(),
                1,
                "bob",
            )
        );
        // Owners filter (an owner, requester or renewer among them); an empty list: none.
        assert!(carol
            .describe_tokens(3, Some(&[user("zed")]))
            .await
            .tokens
            .is_empty());
        assert!(carol.describe_tokens(3, Some(&[])).await.tokens.is_empty());
        for version in 0..=3 {
            let described = alice.describe_tokens(version, None).await;
            assert_eq!(described.tokens.len(), 2, "v{version}");
        }

        // Logged in with the token (either SCRAM mechanism), the principal is its owner,
        // and a token-authenticated connection may not ask for tokens.
        for mechanism in [Mechanism::ScramSha256, Mechanism::ScramSha512] {
            let mut client = token_login(address, mechanism, &id, &hmac)
                .await
                .expect("the token logs in");
            let refused = client
                .create_token(3, CreateDelegationTokenRequest::default())
                .await;
            assert_eq!(
                refused.error_code,
                ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.code()
            );
            assert_eq!(refused.token_requester_principal_name.as_str(), "alice");
            assert_eq!(
                client.describe_tokens(3, None).await.error_code,
                ErrorCode::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.code()
            );
        }
        // A wrong HMAC, or the token id without `tokenauth`: refused.
        assert!(
            token_login(address, Mechanism::ScramSha512, &id, &hmac_of("other"))
                .await
                .is_none()
        );
        let mut client = Client::connect(address, "token").await;
        assert!(
            !client
                .scram_login(Mechanism::ScramSha512, &id, &STANDARD.encode(&hmac))
                .await
        );

        // Expired: by its owner; at once with a negative period, then gone.
        assert_eq!(
            dave.expire_token(&hmac, -1).await.error_code,
            ErrorCode::DELEGATION_TOKEN_OWNER_MISMATCH.code()
        );
        let before = now_ms();
        let expired = bob.expire_token(&hmac, 5000).await;
        assert_eq!(expired.error_code, 0);
        assert!(expired.expiry_timestamp_ms >= before + 5000);
        let expired = alice.expire_token(&hmac, -1).await;
        assert_eq!(expired.error_code, 0);
        assert!(expired.expiry_timestamp_ms >= before && expired.expiry_timestamp_ms <= now_ms());
        assert_eq!(alice.token_ids().await, vec![short.token_id.to_string()]);
        assert_eq!(
            alice.renew_token(&hmac, 0).await.error_code,
            ErrorCode::DELEGATION_TOKEN_NOT_FOUND.code()
        );
        assert!(token_login(address, Mechanism::ScramSha512, &id, &hmac)
            .await
            .is_none());
    }

    #[tokio::test]
    async fn another_owner_needs_create_tokens_and_renewers_must_be_users() {
        let cluster = token_cluster(Some(KEY)).await;
        let address = cluster.brokers()[0].address;
        let for_bob = || {
            CreateDelegationTokenRequest::default()
                .with_owner_principal_type(Some("User".into()))
                .with_owner_principal_name(Some("bob".into()))
        };
        let mut alice = support::login(address, "alice").await;
        let refused = alice.create_token(3, for_bob()).await;
        assert_eq!(
            refused.error_code,
            ErrorCode::DELEGATION_TOKEN_AUTHORIZATION_FAILED.code()
        );
        assert_eq!(
            (
                refused.principal_name.as_str(),
                refused.token_requester_principal_name.as_str(),
                refused.expiry_timestamp_ms
            ),
            ("bob", "alice", -1)
        );
        // A super user may; the token is bob's, carol asked for it.
        let mut carol = support::login(address, "carol").await;
        let created = carol.create_token(3, for_bob()).await;
        assert_eq!(created.error_code, 0);
        assert_eq!(
            (
                created.principal_name.as_str(),
                created.token_requester_principal_name.as_str()
            ),
            ("bob", "carol")
        );
        // Its owner sees it and logs in as bob with it.
        let mut bob = support::login(address, "bob").await;
        assert_eq!(bob.token_ids().await, vec![created.token_id.to_string()]);
        assert!(token_login(
            address,
            Mechanism::ScramSha256,
            &created.token_id,
            &created.hmac
        )
        .await
        .is_some());
        // An empty owner name: the caller.
        let own = alice
            .create_token(
                3,
                CreateDelegationTokenRequest::default()
                    .with_owner_principal_type(Some("User".into()))
                    .with_owner_principal_name(Some("".into())),
            )
            .await;
        assert_eq!((own.error_code, own.principal_name.as_str()), (0, "alice"));
        let group = alice
            .create_token(
                3,
                CreateDelegationTokenRequest::default().with_renewers(vec![
                    CreatableRenewers::default()
                        .with_principal_type("Group".into())
                        .with_principal_name("g".into()),
                ]),
            )
            .await;
        assert_eq!(group.error_code, ErrorCode::INVALID_PRINCIPAL_TYPE.code());
        assert_eq!(group.issue_timestamp_ms, -1);
        // Every version the crate knows.
        for version in 0..=3 {
            let created = alice
                .create_token(version, CreateDelegationTokenRequest::default())
                .await;
            assert_eq!(created.error_code, 0, "v{version}");
            assert_eq!(created.hmac.as_ref(), hmac_of(&created.token_id).as_slice());
        }
    }
}
