//! SASL on the brokers: the users, the mechanisms (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, the
//! server side of RFC 4616 and RFC 5802/7677) and each connection's progress through
//! SaslHandshake and SaslAuthenticate (or, after a SaslHandshake v0, raw tokens).
//!
//! SASL is on when the builder was given at least one user ([`ClusterBuilder::sasl`]); then
//! a connection is served nothing but ApiVersions, SaslHandshake and SaslAuthenticate until
//! it has authenticated, as Kafka's `SaslServerAuthenticator` serves it. PLAIN users are
//! checked against their password (Kafka's JAAS users); SCRAM users against the credentials
//! derived from theirs (4096 iterations, Kafka's minimum) or set by
//! AlterUserScramCredentials. No token, password or key is ever written anywhere: the
//! request log and the request observer see SaslAuthenticate requests, whose JSON the
//! control surface redacts.
//!
//! [`ClusterBuilder::sasl`]: crate::ClusterBuilder::sasl

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use ring::rand::{SecureRandom, SystemRandom};
use ring::{digest, hmac, pbkdf2};
use std::collections::BTreeMap;
use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;

use crate::tokens::Tokens;

/// A SASL mechanism the cluster serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mechanism {
    /// RFC 4616: the password in clear (over TLS, SASL_SSL).
    Plain,
    /// RFC 7677.
    ScramSha256,
    /// RFC 5802 with SHA-512, as Kafka names it.
    ScramSha512,
}

impl Mechanism {
    /// Every mechanism, in the order a SaslHandshake response lists them.
    pub const ALL: [Mechanism; 3] = [
        Mechanism::Plain,
        Mechanism::ScramSha256,
        Mechanism::ScramSha512,
    ];

    /// Its name in SaslHandshake.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Plain => "PLAIN",
            Mechanism::ScramSha256 => "SCRAM-SHA-256",
            Mechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }

    /// The mechanism SaslHandshake names `name` (exactly, as Kafka compares them).
    pub fn from_name(name: &str) -> Option<Mechanism> {
        Mechanism::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Kafka's `ScramMechanism` type byte (DescribeUserScramCredentials,
    /// AlterUserScramCredentials): 1 SHA-256, 2 SHA-512; PLAIN has none.
    pub fn scram_type(self) -> Option<i8> {
        match self {
            Mechanism::Plain => None,
            Mechanism::ScramSha256 => Some(1),
            Mechanism::ScramSha512 => Some(2),
        }
    }

    /// The SCRAM mechanism of a type byte.
    pub fn from_scram_type(value: i8) -> Option<Mechanism> {
        match value {
            1 => Some(Mechanism::ScramSha256),
            2 => Some(Mechanism::ScramSha512),
            _ => None,
        }
    }

    fn algorithms(self) -> Option<Scram> {
        match self {
            Mechanism::Plain => None,
            Mechanism::ScramSha256 => Some(Scram {
                hmac: hmac::HMAC_SHA256,
                digest: &digest::SHA256,
                pbkdf2: pbkdf2::PBKDF2_HMAC_SHA256,
            }),
            Mechanism::ScramSha512 => Some(Scram {
                hmac: hmac::HMAC_SHA512,
                digest: &digest::SHA512,
                pbkdf2: pbkdf2::PBKDF2_HMAC_SHA512,
            }),
        }
    }
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The hash functions of one SCRAM mechanism.
struct Scram {
    hmac: hmac::Algorithm,
    digest: &'static digest::Algorithm,
    pbkdf2: pbkdf2::Algorithm,
}

impl Scram {
    fn hmac(&self, key: &[u8], data: &[u8]) -> Vec<u8> {
        hmac::sign(&hmac::Key::new(self.hmac, key), data)
            .as_ref()
            .to_vec()
    }

    fn hash(&self, data: &[u8]) -> Vec<u8> {
        digest::digest(self.digest, data).as_ref().to_vec()
    }

    /// RFC 5802's `StoredKey` and `ServerKey` of a salted password.
    fn keys(&self, salted_password: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let client_key = self.hmac(salted_password, b"Client Key");
        (
            self.hash(&client_key),
            self.hmac(salted_password, b"Server Key"),
        )
    }
}

/// SCRAM's iteration count when the cluster derives a credential itself: Kafka's minimum
/// and `kafka-configs`' default.
pub const DEFAULT_ITERATIONS: u32 = 4096;
/// Kafka's bounds on a SCRAM credential's iterations (`ScramMechanism.minIterations`,
/// `maxIterations`).
pub const MIN_ITERATIONS: i32 = 4096;
pub const MAX_ITERATIONS: i32 = 16384;

/// A user given to the cluster: `plain:USER:PASS`, `scram-sha-256:USER:PASS` or
/// `scram-sha-512:USER:PASS` (the password is everything after the second colon). Its Debug
/// form hides the password.
#[derive(Clone, PartialEq, Eq)]
pub struct SaslUser {
    /// The mechanism the user logs in with.
    pub mechanism: Mechanism,
    /// The user name (the principal is `User:NAME`).
    pub name: String,
    /// The password.
    pub password: String,
}

impl SaslUser {
    /// A user of `mechanism`.
    pub fn new(mechanism: Mechanism, name: impl Into<String>, password: impl Into<String>) -> Self {
        SaslUser {
            mechanism,
            name: name.into(),
            password: password.into(),
        }
    }
}

impl fmt::Debug for SaslUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SaslUser")
            .field("mechanism", &self.mechanism)
            .field("name", &self.name)
            .field("password", &"<not shown>")
            .finish()
    }
}

impl FromStr for SaslUser {
    type Err = String;

    /// Reads `MECHANISM:USER:PASS`; an error never repeats the password.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut parts = text.splitn(3, ':');
        let (Some(mechanism), Some(name), Some(password)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Err(
                "expected MECHANISM:USER:PASSWORD (plain, scram-sha-256 or scram-sha-512)".into(),
            );
        };
        let mechanism = Mechanism::from_name(&mechanism.to_ascii_uppercase()).ok_or_else(|| {
            format!("unknown mechanism {mechanism:?}: plain, scram-sha-256 or scram-sha-512")
        })?;
        if name.is_empty() {
            return Err("the user name is empty".into());
        }
        if password.is_empty() {
            return Err(format!("user {name:?}: the password is empty"));
        }
        Ok(SaslUser::new(mechanism, name, password))
    }
}

/// A SCRAM credential as Kafka stores one: never the password.
#[derive(Clone, PartialEq, Eq)]
pub struct ScramCredential {
    pub salt: Vec<u8>,
    pub iterations: i32,
    pub stored_key: Vec<u8>,
    pub server_key: Vec<u8>,
}

impl fmt::Debug for ScramCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScramCredential")
            .field("iterations", &self.iterations)
            .finish_non_exhaustive()
    }
}

impl ScramCredential {
    /// The credential of `password` with a fresh random salt.
    pub fn from_password(mechanism: Mechanism, password: &str, iterations: u32) -> Option<Self> {
        let mut salt = vec![0u8; 32];
        SystemRandom::new().fill(&mut salt).ok()?;
        Self::derive(mechanism, password, salt, iterations)
    }

    /// The credential of `password` with `salt`: RFC 5802's `Hi` (PBKDF2) then the keys.
    pub fn derive(
        mechanism: Mechanism,
        password: &str,
        salt: Vec<u8>,
        iterations: u32,
    ) -> Option<Self> {
        let scram = mechanism.algorithms()?;
        let mut salted = vec![0u8; scram.digest.output_len()];
        pbkdf2::derive(
            scram.pbkdf2,
            NonZeroU32::new(iterations)?,
            &salt,
            password.as_bytes(),
            &mut salted,
        );
        Self::from_salted_password(mechanism, salt, iterations as i32, &salted)
    }

    /// The credential AlterUserScramCredentials gives: the salt, iterations and
    /// `SaltedPassword` (Kafka derives and keeps the two keys).
    pub fn from_salted_password(
        mechanism: Mechanism,
        salt: Vec<u8>,
        iterations: i32,
        salted_password: &[u8],
    ) -> Option<Self> {
        let (stored_key, server_key) = mechanism.algorithms()?.keys(salted_password);
        Some(ScramCredential {
            salt,
            iterations,
            stored_key,
            server_key,
        })
    }
}

/// Who may log in: PLAIN passwords and SCRAM credentials by user and mechanism, and the
/// delegation tokens (SCRAM with the extension `tokenauth=true`).
#[derive(Debug, Default)]
pub struct Users {
    plain: BTreeMap<String, String>,
    scram: BTreeMap<String, BTreeMap<Mechanism, ScramCredential>>,
    /// The delegation tokens (CreateDelegationToken and the others manage them).
    pub tokens: Tokens,
}

impl Users {
    /// Adds (or replaces) `user`.
    pub fn add(&mut self, user: &SaslUser) {
        match user.mechanism {
            Mechanism::Plain => {
                self.plain.insert(user.name.clone(), user.password.clone());
            }
            mechanism => {
                if let Some(credential) =
                    ScramCredential::from_password(mechanism, &user.password, DEFAULT_ITERATIONS)
                {
                    self.set_scram(&user.name, mechanism, credential);
                }
            }
        }
    }

    /// The SCRAM credential of `user` for `mechanism`.
    pub fn scram(&self, user: &str, mechanism: Mechanism) -> Option<&ScramCredential> {
        self.scram.get(user)?.get(&mechanism)
    }

    /// Sets a SCRAM credential (AlterUserScramCredentials' upsertion).
    pub fn set_scram(&mut self, user: &str, mechanism: Mechanism, credential: ScramCredential) {
        self.scram
            .entry(user.to_owned())
            .or_default()
            .insert(mechanism, credential);
    }

    /// Removes a SCRAM credential; whether there was one.
    pub fn remove_scram(&mut self, user: &str, mechanism: Mechanism) -> bool {
        let Some(credentials) = self.scram.get_mut(user) else {
            return false;
        };
        let removed = credentials.remove(&mechanism).is_some();
        if credentials.is_empty() {
            self.scram.remove(user);
        }
        removed
    }

    /// Every user with a SCRAM credential, with its mechanisms and iterations, by name.
    pub fn scram_users(&self) -> impl Iterator<Item = (&str, Vec<(Mechanism, i32)>)> + '_ {
        self.scram.iter().map(|(name, credentials)| {
            let list = credentials
                .iter()
                .map(|(mechanism, credential)| (*mechanism, credential.iterations))
                .collect();
            (name.as_str(), list)
        })
    }

    fn plain_matches(&self, user: &str, password: &[u8]) -> bool {
        self.plain
            .get(user)
            .is_some_and(|known| constant_time_eq(known.as_bytes(), password))
    }
}

/// Compares without stopping at the first difference, so timing tells nothing of a secret.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Why authentication failed, as the SaslAuthenticate response says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The response's error message: Kafka's for the case, never naming the credential.
    pub message: String,
}

impl Refused {
    /// Kafka's message for a `SaslException` (an unknown SCRAM user, a wrong proof, a
    /// malformed message): the same for all, so that it does not tell whether the user
    /// exists.
    fn invalid(mechanism: Mechanism) -> Self {
        Refused {
            message: format!(
                "Authentication failed during authentication due to invalid credentials with \
                 SASL mechanism {mechanism}"
            ),
        }
    }
}

/// Where one connection is in its authentication.
#[derive(Debug, Default)]
pub enum Session {
    /// SASL is off: every request is served; SaslHandshake and SaslAuthenticate answer
    /// ILLEGAL_SASL_STATE, as Kafka answers them on a PLAINTEXT or SSL listener.
    #[default]
    Off,
    /// Nothing but ApiVersions (once) and SaslHandshake yet.
    Start { versions_answered: bool },
    /// The handshake chose `mechanism`; its first token is awaited (`raw`: as a raw frame,
    /// after a SaslHandshake v0).
    Chosen { mechanism: Mechanism, raw: bool },
    /// A SCRAM exchange awaits the client's final message.
    ScramFinal {
        mechanism: Mechanism,
        raw: bool,
        exchange: Box<ScramExchange>,
    },
    /// Authenticated as `user` (`token`: with a delegation token, `user` its owner):
    /// everything is served.
    Authenticated { user: String, token: bool },
    /// Refused: the connection closes once the answer is out.
    Failed,
}

/// What a SCRAM exchange remembers between the client's two messages.
#[derive(Debug)]
pub struct ScramExchange {
    /// The principal's name: the user, or the token's owner.
    user: String,
    /// Whether a delegation token logs in.
    token: bool,
    gs2_header: String,
    client_first_bare: String,
    server_first: String,
    nonce: String,
    credential: ScramCredential,
}

/// What a connection may send next, for the dispatcher's gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Any request.
    Open,
    /// ApiVersions or SaslHandshake (before the handshake).
    Handshake,
    /// SaslAuthenticate (after a v1 handshake).
    Authenticate,
    /// Raw tokens (after a v0 handshake): no Kafka request at all.
    RawTokens,
    /// Nothing: the connection is closing.
    Closed,
}

impl Session {
    /// A new connection's session: [`Session::Off`] unless SASL is on.
    pub fn new(sasl: bool) -> Self {
        if sasl {
            Session::Start {
                versions_answered: false,
            }
        } else {
            Session::Off
        }
    }

    /// What the connection may send next.
    pub fn gate(&self) -> Gate {
        match self {
            Session::Off | Session::Authenticated { .. } => Gate::Open,
            Session::Start { .. } => Gate::Handshake,
            Session::Chosen { raw: true, .. } | Session::ScramFinal { raw: true, .. } => {
                Gate::RawTokens
            }
            Session::Chosen { .. } | Session::ScramFinal { .. } => Gate::Authenticate,
            Session::Failed => Gate::Closed,
        }
    }

    /// The authenticated user, once authenticated.
    pub fn user(&self) -> Option<&str> {
        match self {
            Session::Authenticated { user, .. } => Some(user),
            _ => None,
        }
    }

    /// Whether the connection authenticated with a delegation token (Kafka's
    /// `KafkaPrincipal.tokenAuthenticated`): it may not ask for tokens.
    pub fn token_authenticated(&self) -> bool {
        matches!(self, Session::Authenticated { token: true, .. })
    }

    /// Whether the connection must close once the last answer is written.
    pub fn failed(&self) -> bool {
        matches!(self, Session::Failed)
    }

    /// Whether a SaslHandshake may come now (with or without an ApiVersions before it).
    pub fn awaits_handshake(&self) -> bool {
        matches!(self, Session::Start { .. })
    }

    /// Records an ApiVersions answered before the handshake: Kafka answers one only.
    /// `false` if one was answered already (the connection closes).
    pub fn versions_asked(&mut self) -> bool {
        match self {
            Session::Start { versions_answered } if !*versions_answered => {
                *versions_answered = true;
                true
            }
            Session::Start { .. } => false,
            _ => true,
        }
    }

    /// The handshake chose `mechanism` (`raw`: a v0 handshake, raw tokens follow).
    pub fn choose(&mut self, mechanism: Mechanism, raw: bool) {
        *self = Session::Chosen { mechanism, raw };
    }

    /// Marks the session refused: the connection closes after the answer.
    pub fn fail(&mut self) {
        *self = Session::Failed;
    }

    /// Takes the client's next token and returns the server's, or why it refused (the
    /// session is then [`Session::Failed`]).
    pub fn step(&mut self, users: &mut Users, token: &[u8]) -> Result<Vec<u8>, Refused> {
        let outcome = match std::mem::replace(self, Session::Failed) {
            Session::Chosen {
                mechanism: Mechanism::Plain,
                ..
            } => plain(users, token).map(|user| {
                *self = Session::Authenticated { user, token: false };
                Vec::new()
            }),
            Session::Chosen { mechanism, raw } => {
                scram_first(users, mechanism, token).map(|exchange| {
                    let answer = exchange.server_first.clone().into_bytes();
                    *self = Session::ScramFinal {
                        mechanism,
                        raw,
                        exchange: Box::new(exchange),
                    };
                    answer
                })
            }
            Session::ScramFinal {
                mechanism,
                exchange,
                ..
            } => scram_final(mechanism, &exchange, token).inspect(|_| {
                *self = Session::Authenticated {
                    user: exchange.user.clone(),
                    token: exchange.token,
                };
            }),
            other => {
                *self = other;
                return Err(Refused {
                    message: "no SASL token is expected now".into(),
                });
            }
        };
        if outcome.is_err() {
            *self = Session::Failed;
        }
        outcome
    }
}

/// RFC 4616: `[authzid] NUL authcid NUL passwd`; the user, if the password is theirs.
fn plain(users: &Users, token: &[u8]) -> Result<String, Refused> {
    let invalid = || Refused {
        message: "Authentication failed: Invalid username or password".into(),
    };
    let mut parts = token.split(|&b| b == 0);
    let (Some(authzid), Some(user), Some(password), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Refused {
            message: "Authentication failed: Invalid SASL/PLAIN response: expected 3 tokens".into(),
        });
    };
    let user = std::str::from_utf8(user).map_err(|_| invalid())?;
    if user.is_empty() {
        return Err(Refused {
            message: "Authentication failed: username not specified".into(),
        });
    }
    if password.is_empty() {
        return Err(Refused {
            message: "Authentication failed: password not specified".into(),
        });
    }
    if !authzid.is_empty() && authzid != user.as_bytes() {
        return Err(Refused {
            message: "Authentication failed: Client requested an authorization id that is \
                      different from username"
                .into(),
        });
    }
    if !users.plain_matches(user, password) {
        return Err(invalid());
    }
    Ok(user.to_owned())
}

/// RFC 5802's `saslname` decoded: `=2C` is `,` and `=3D` is `=`; any other `=` is invalid.
fn sasl_name(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('=') {
        out.push_str(&rest[..at]);
        match rest.get(at + 1..at + 3) {
            Some("2C") => out.push(','),
            Some("3D") => out.push('='),
            _ => return None,
        }
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    Some(out)
}

/// The client's first message: `gs2-header client-first-bare`, where the header is `n,,` or
/// `y,,` (no channel binding; `p=` asks for one, which Kafka does not serve) with an
/// optional `a=authzid`, and the bare part is `n=user,r=nonce[,extensions]`.
fn scram_first(
    users: &mut Users,
    mechanism: Mechanism,
    token: &[u8],
) -> Result<ScramExchange, Refused> {
    let mut random = [0u8; 24];
    SystemRandom::new()
        .fill(&mut random)
        .map_err(|_| Refused::invalid(mechanism))?;
    let server_nonce = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random);
    scram_first_with(users, mechanism, token, &server_nonce)
}

/// [`scram_first`] with the server's half of the nonce given.
fn scram_first_with(
    users: &mut Users,
    mechanism: Mechanism,
    token: &[u8],
    server_nonce: &str,
) -> Result<ScramExchange, Refused> {
    let invalid = || Refused::invalid(mechanism);
    let text = std::str::from_utf8(token).map_err(|_| invalid())?;
    let mut fields = text.splitn(3, ',');
    let (Some(binding), Some(authzid), Some(bare)) = (fields.next(), fields.next(), fields.next())
    else {
        return Err(invalid());
    };
    if binding != "n" && binding != "y" {
        return Err(invalid());
    }
    let authzid = match authzid {
        "" => None,
        a => Some(
            a.strip_prefix("a=")
                .and_then(sasl_name)
                .ok_or_else(invalid)?,
        ),
    };
    let mut bare_fields = bare.split(',');
    let user = bare_fields
        .next()
        .and_then(|f| f.strip_prefix("n="))
        .and_then(sasl_name)
        .ok_or_else(invalid)?;
    let client_nonce = bare_fields
        .next()
        .and_then(|f| f.strip_prefix("r="))
        .filter(|nonce| !nonce.is_empty())
        .ok_or_else(invalid)?;
    // RFC 5802's extensions, as Kafka's `ScramExtensions` reads them: `key=value` after the
    // nonce; `tokenauth=true` (any case, as Java's `Boolean.parseBoolean`) logs a
    // delegation token in, the user being its id.
    let token = bare_fields.any(|field| {
        field
            .split_once('=')
            .is_some_and(|(key, value)| key == "tokenauth" && value.eq_ignore_ascii_case("true"))
    });
    if authzid.as_deref().is_some_and(|a| a != user) {
        return Err(Refused {
            message: "Authentication failed: Client requested an authorization id that is \
                      different from username"
                .into(),
        });
    }
    let (user, credential) = if token {
        users
            .tokens
            .login(crate::state::now_ms(), &user, mechanism)
            .ok_or_else(invalid)?
    } else {
        let credential = users.scram(&user, mechanism).ok_or_else(invalid)?.clone();
        (user, credential)
    };
    let nonce = format!("{client_nonce}{server_nonce}");
    let server_first = format!(
        "r={nonce},s={},i={}",
        STANDARD.encode(&credential.salt),
        credential.iterations
    );
    Ok(ScramExchange {
        user,
        token,
        gs2_header: format!("{binding},{authzid},", authzid = authzid_text(text)),
        client_first_bare: bare.to_owned(),
        server_first,
        nonce,
        credential,
    })
}

/// The authzid field of the gs2 header as sent (for the channel binding check).
fn authzid_text(client_first: &str) -> &str {
    client_first.split(',').nth(1).unwrap_or_default()
}

/// The client's final message: `c=base64(gs2-header),r=nonce[,extensions],p=proof`. The
/// proof is checked against the stored key; the answer is `v=ServerSignature`.
fn scram_final(
    mechanism: Mechanism,
    exchange: &ScramExchange,
    token: &[u8],
) -> Result<Vec<u8>, Refused> {
    let invalid = || Refused::invalid(mechanism);
    let scram = mechanism.algorithms().ok_or_else(invalid)?;
    let text = std::str::from_utf8(token).map_err(|_| invalid())?;
    let (without_proof, proof) = text.rsplit_once(",p=").ok_or_else(invalid)?;
    let mut fields = without_proof.split(',');
    let binding = fields
        .next()
        .and_then(|f| f.strip_prefix("c="))
        .ok_or_else(invalid)?;
    let nonce = fields
        .next()
        .and_then(|f| f.strip_prefix("r="))
        .ok_or_else(invalid)?;
    if STANDARD.decode(binding).ok().as_deref() != Some(exchange.gs2_header.as_bytes())
        || nonce != exchange.nonce
    {
        return Err(invalid());
    }
    let proof = STANDARD.decode(proof).map_err(|_| invalid())?;
    let auth_message = format!(
        "{},{},{}",
        exchange.client_first_bare, exchange.server_first, without_proof
    );
    let credential = &exchange.credential;
    let client_signature = scram.hmac(&credential.stored_key, auth_message.as_bytes());
    if proof.len() != client_signature.len() {
        return Err(invalid());
    }
    let client_key: Vec<u8> = proof
        .iter()
        .zip(&client_signature)
        .map(|(p, s)| p ^ s)
        .collect();
    if !constant_time_eq(&scram.hash(&client_key), &credential.stored_key) {
        return Err(invalid());
    }
    let server_signature = scram.hmac(&credential.server_key, auth_message.as_bytes());
    Ok(format!("v={}", STANDARD.encode(server_signature)).into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_read_from_the_flag_form_and_hide_the_password() {
        let user: SaslUser = "scram-sha-512:alice:pa:ss".parse().unwrap();
        assert_eq!(user.mechanism, Mechanism::ScramSha512);
        assert_eq!(user.name, "alice");
        assert_eq!(user.password, "pa:ss");
        assert!(!format!("{user:?}").contains("pa:ss"));
        let error = "md5:bob:secret-word".parse::<SaslUser>().unwrap_err();
        assert!(!error.contains("secret-word"), "{error}");
        assert!("plain:bob".parse::<SaslUser>().is_err());
        assert!("plain::x".parse::<SaslUser>().is_err());
        assert!("plain:bob:".parse::<SaslUser>().is_err());
    }

    #[test]
    fn sasl_names_unescape_as_rfc_5802_says() {
        assert_eq!(sasl_name("a=2Cb=3Dc").as_deref(), Some("a,b=c"));
        assert_eq!(sasl_name("plain").as_deref(), Some("plain"));
        assert_eq!(sasl_name("bad=2"), None);
        assert_eq!(sasl_name("bad=41"), None);
    }

    #[test]
    fn plain_checks_the_password_and_the_authorization_id() {
        let mut users = Users::default();
        users.add(&SaslUser::new(Mechanism::Plain, "alice", "right"));
        let mut step = |token: &[u8]| {
            let mut session = Session::Chosen {
                mechanism: Mechanism::Plain,
                raw: false,
            };
            let outcome = session.step(&mut users, token);
            (outcome, session)
        };
        let (outcome, session) = step(b"\0alice\0right");
        assert_eq!(outcome, Ok(Vec::new()));
        assert_eq!(session.user(), Some("alice"));
        let (outcome, session) = step(b"alice\0alice\0right");
        assert!(outcome.is_ok());
        assert_eq!(session.user(), Some("alice"));
        for bad in [
            &b"\0alice\0wrong"[..],
            b"\0bob\0right",
            b"bob\0alice\0right",
            b"\0alice",
            b"\0alice\0right\0",
        ] {
            let (outcome, session) = step(bad);
            assert!(outcome.is_err(), "{bad:?}");
            assert!(session.failed());
        }
    }

    /// RFC 7677's example exchange (section 3): user "user", password "pencil", its salt,
    /// nonces and iterations; the server's messages must be the RFC's byte for byte, and
    /// the client's proof accepted.
    #[test]
    fn scram_sha_256_answers_as_rfc_7677s_example() {
        let salt = STANDARD.decode("W22ZaJ0SNY7soEsUEjb6gQ==").unwrap();
        let credential =
            ScramCredential::derive(Mechanism::ScramSha256, "pencil", salt, 4096).unwrap();
        let mut users = Users::default();
        users.set_scram("user", Mechanism::ScramSha256, credential);
        let exchange = scram_first_with(
            &mut users,
            Mechanism::ScramSha256,
            b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
            "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
        )
        .unwrap();
        assert_eq!(
            exchange.server_first,
            "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
        );
        let answer = scram_final(
            Mechanism::ScramSha256,
            &exchange,
            b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
              p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
        )
        .unwrap();
        assert_eq!(answer, b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
        // One bit of the proof changed: refused.
        assert!(scram_final(
            Mechanism::ScramSha256,
            &exchange,
            b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
              p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVU=",
        )
        .is_err());
    }

    #[test]
    fn scram_refuses_a_wrong_nonce_binding_or_proof() {
        let mut users = Users::default();
        users.add(&SaslUser::new(Mechanism::ScramSha256, "alice", "right"));
        let mut session = Session::Chosen {
            mechanism: Mechanism::ScramSha256,
            raw: false,
        };
        let first = session.step(&mut users, b"n,,n=alice,r=abc").unwrap();
        let first = String::from_utf8(first).unwrap();
        assert!(first.starts_with("r=abc"), "{first}");
        let nonce = first.split(',').next().unwrap();
        // A proof of the right length that is not the user's.
        let proof = STANDARD.encode([7u8; 32]);
        let final_message = format!("c=biws,{nonce},p={proof}");
        let refused = session
            .step(&mut users, final_message.as_bytes())
            .unwrap_err();
        assert_eq!(
            refused.message,
            "Authentication failed during authentication due to invalid credentials with SASL \
             mechanism SCRAM-SHA-256"
        );
        assert!(session.failed());

        // An unknown user is refused with the same words as a wrong proof.
        let mut session = Session::Chosen {
            mechanism: Mechanism::ScramSha256,
            raw: false,
        };
        assert_eq!(
            session.step(&mut users, b"n,,n=mallory,r=abc").unwrap_err(),
            refused
        );
        // A user of the other SCRAM mechanism has no credential for this one.
        let mut session = Session::Chosen {
            mechanism: Mechanism::ScramSha512,
            raw: false,
        };
        assert!(session.step(&mut users, b"n,,n=alice,r=abc").is_err());
        // Channel binding asked for (`p=`) is not served.
        let mut session = Session::Chosen {
            mechanism: Mechanism::ScramSha256,
            raw: false,
        };
        assert!(session
            .step(&mut users, b"p=tls-unique,,n=alice,r=abc")
            .is_err());
    }
}
