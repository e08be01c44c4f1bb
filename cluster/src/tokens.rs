//! Delegation tokens (KIP-48), as Kafka 4.4's controller keeps them
//! (`DelegationTokenControlManager`) and its brokers check logins with them
//! (`DelegationTokenCache`): a token has an id (a random UUID's text), an owner, the
//! principal that asked for it, renewers, and issue, expiry and maximum timestamps; its HMAC
//! (HmacSHA512 of the token id keyed with `delegation.token.secret.key`) is its password: a
//! client logs in with SCRAM (either mechanism) naming the token id as user, the HMAC in
//! base64 as password and the SCRAM extension `tokenauth=true`, and is then its owner.
//!
//! Without a secret key the tokens are off (DELEGATION_TOKEN_AUTH_DISABLED). Expired tokens
//! are removed as Kafka's controller sweeps them, every
//! `delegation.token.expiry.check.interval.ms` (here when the tokens are next used after
//! that). Nothing here ever shows an HMAC or a key: Debug leaves them out.

use crate::sasl::{Mechanism, ScramCredential, DEFAULT_ITERATIONS};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use kafka_codec::ErrorCode;
use ring::hmac;
use std::collections::BTreeMap;
use std::fmt;

/// The broker settings of delegation tokens (Kafka's `DelegationTokenManagerConfigs`), read
/// from the static broker settings (`ClusterBuilder::broker_config`).
#[derive(Clone, PartialEq, Eq)]
pub struct TokenSettings {
    /// `delegation.token.secret.key`: none (or empty) turns tokens off.
    pub secret_key: Option<String>,
    /// `delegation.token.max.lifetime.ms`.
    pub max_lifetime_ms: i64,
    /// `delegation.token.expiry.time.ms`: how long a token lives until renewed.
    pub expiry_time_ms: i64,
    /// `delegation.token.expiry.check.interval.ms`: how often expired tokens are removed.
    pub check_interval_ms: i64,
}

/// The setting names, as Kafka names them.
pub const SECRET_KEY: &str = "delegation.token.secret.key";
pub const MAX_LIFETIME_MS: &str = "delegation.token.max.lifetime.ms";
pub const EXPIRY_TIME_MS: &str = "delegation.token.expiry.time.ms";
pub const CHECK_INTERVAL_MS: &str = "delegation.token.expiry.check.interval.ms";

impl Default for TokenSettings {
    /// Kafka's defaults: no key, 7 days, 1 day, 1 hour.
    fn default() -> Self {
        TokenSettings {
            secret_key: None,
            max_lifetime_ms: 604_800_000,
            expiry_time_ms: 86_400_000,
            check_interval_ms: 3_600_000,
        }
    }
}

impl fmt::Debug for TokenSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSettings")
            .field(
                "secret_key",
                &self.secret_key.as_ref().map(|_| "<not shown>"),
            )
            .field("max_lifetime_ms", &self.max_lifetime_ms)
            .field("expiry_time_ms", &self.expiry_time_ms)
            .field("check_interval_ms", &self.check_interval_ms)
            .finish()
    }
}

impl TokenSettings {
    /// The settings given by `setting` (a static broker setting's value, if set), each
    /// already checked by `configs::check_static_setting`.
    pub fn from_settings(setting: impl Fn(&str) -> Option<String>) -> Self {
        let defaults = TokenSettings::default();
        let number = |name, default| {
            setting(name)
                .and_then(|value| value.trim().parse().ok())
                .unwrap_or(default)
        };
        TokenSettings {
            secret_key: setting(SECRET_KEY),
            max_lifetime_ms: number(MAX_LIFETIME_MS, defaults.max_lifetime_ms),
            expiry_time_ms: number(EXPIRY_TIME_MS, defaults.expiry_time_ms),
            check_interval_ms: number(CHECK_INTERVAL_MS, defaults.check_interval_ms),
        }
    }
}

/// A principal as Kafka's `KafkaPrincipal`: a type (`User`) and a name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Principal {
    pub kind: String,
    pub name: String,
}

impl Principal {
    /// `User:name`.
    pub fn user(name: &str) -> Principal {
        Principal {
            kind: "User".into(),
            name: name.into(),
        }
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind, self.name)
    }
}

/// One token (Kafka's `TokenInformation` and its HMAC).
#[derive(Clone)]
pub struct Token {
    pub id: String,
    pub owner: Principal,
    pub requester: Principal,
    pub renewers: Vec<Principal>,
    pub issue_ms: i64,
    pub expiry_ms: i64,
    pub max_ms: i64,
    /// The HMAC: the token's password.
    pub hmac: Vec<u8>,
    /// Its SCRAM credentials, one per mechanism, of the HMAC's base64 text.
    credentials: BTreeMap<Mechanism, ScramCredential>,
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Token")
            .field("id", &self.id)
            .field("owner", &self.owner)
            .field("requester", &self.requester)
            .field("renewers", &self.renewers)
            .field("issue_ms", &self.issue_ms)
            .field("expiry_ms", &self.expiry_ms)
            .field("max_ms", &self.max_ms)
            .finish_non_exhaustive()
    }
}

impl Token {
    /// Kafka's `TokenInformation.ownerOrRenewer`: the owner, the requester or a renewer.
    pub fn owner_or_renewer(&self, principal: &Principal) -> bool {
        self.owner == *principal
            || self.requester == *principal
            || self.renewers.contains(principal)
    }

    /// Whether the controller would call it expired at `now`.
    fn expired(&self, now: i64) -> bool {
        self.max_ms < now || self.expiry_ms < now
    }
}

/// The tokens of the cluster.
#[derive(Debug, Default)]
pub struct Tokens {
    settings: TokenSettings,
    tokens: BTreeMap<String, Token>,
    /// When expired tokens are next removed.
    next_sweep_ms: i64,
}

/// `a + b`, at most `i64::MAX`, as the controller's `sum`.
fn saturating(a: i64, b: i64) -> i64 {
    a.saturating_add(b)
}

impl Tokens {
    /// No tokens, with these settings.
    pub fn new(settings: TokenSettings) -> Self {
        Tokens {
            settings,
            tokens: BTreeMap::new(),
            next_sweep_ms: 0,
        }
    }

    /// Whether tokens are on: a secret key is set (and not empty).
    pub fn enabled(&self) -> bool {
        self.key().is_some()
    }

    fn key(&self) -> Option<hmac::Key> {
        let secret = self
            .settings
            .secret_key
            .as_deref()
            .filter(|s| !s.is_empty())?;
        Some(hmac::Key::new(hmac::HMAC_SHA512, secret.as_bytes()))
    }

    /// Kafka's `createHmac`: HmacSHA512 of the token id's UTF-8 bytes, keyed with the
    /// secret key's. `None` with tokens off.
    pub fn hmac(&self, token_id: &str) -> Option<Vec<u8>> {
        Some(
            hmac::sign(&self.key()?, token_id.as_bytes())
                .as_ref()
                .to_vec(),
        )
    }

    /// Removes the expired tokens if the check interval has passed since the last sweep.
    fn sweep(&mut self, now: i64) {
        if now < self.next_sweep_ms {
            return;
        }
        self.tokens.retain(|_, token| !token.expired(now));
        self.next_sweep_ms = saturating(now, self.settings.check_interval_ms.max(1));
    }

    /// Creates a token for `owner`, asked for by `requester`, as the controller's
    /// `createDelegationToken` does (the broker's checks come first, in the handler): the
    /// maximum is now plus the smaller of `delegation.token.max.lifetime.ms` and
    /// `max_lifetime_ms` (when positive), the expiry the sooner of that and now plus
    /// `delegation.token.expiry.time.ms`. Errors: DELEGATION_TOKEN_AUTH_DISABLED,
    /// INVALID_PRINCIPAL_TYPE (a renewer not of type `User`).
    pub fn create(
        &mut self,
        now: i64,
        id: String,
        owner: Principal,
        requester: Principal,
        renewers: Vec<Principal>,
        max_lifetime_ms: i64,
    ) -> Result<&Token, ErrorCode> {
        self.sweep(now);
        let Some(hmac) = self.hmac(&id) else {
            return Err(ErrorCode::DELEGATION_TOKEN_AUTH_DISABLED);
        };
        if renewers.iter().any(|renewer| renewer.kind != "User") {
            return Err(ErrorCode::INVALID_PRINCIPAL_TYPE);
        }
        let mut lifetime = self.settings.max_lifetime_ms;
        if max_lifetime_ms > 0 {
            lifetime = lifetime.min(max_lifetime_ms);
        }
        let max_ms = saturating(now, lifetime);
        let expiry_ms = max_ms.min(saturating(now, self.settings.expiry_time_ms));
        // Kafka's `DelegationTokenManager.prepareScramCredentials`: the password is the
        // HMAC's base64 text, at each mechanism's minimum iterations.
        let password = STANDARD.encode(&hmac);
        let credentials = [Mechanism::ScramSha256, Mechanism::ScramSha512]
            .into_iter()
            .filter_map(|mechanism| {
                let credential =
                    ScramCredential::from_password(mechanism, &password, DEFAULT_ITERATIONS)?;
                Some((mechanism, credential))
            })
            .collect();
        let token = Token {
            id: id.clone(),
            owner,
            requester,
            renewers,
            issue_ms: now,
            expiry_ms,
            max_ms,
            hmac,
            credentials,
        };
        self.tokens.insert(id.clone(), token);
        Ok(&self.tokens[&id])
    }

    /// The token whose HMAC is `hmac`.
    fn by_hmac(&mut self, hmac: &[u8]) -> Option<&mut Token> {
        self.tokens.values_mut().find(|token| token.hmac == hmac)
    }

    /// Renews the token of `hmac` for `principal`, as the controller's
    /// `renewDelegationToken`: its expiry becomes now plus the smaller of
    /// `delegation.token.expiry.time.ms` and `renew_period_ms` (when positive), at most its
    /// maximum; the new expiry. Errors, in Kafka's order: DELEGATION_TOKEN_AUTH_DISABLED,
    /// DELEGATION_TOKEN_NOT_FOUND, DELEGATION_TOKEN_EXPIRED, DELEGATION_TOKEN_OWNER_MISMATCH
    /// (neither its owner nor a renewer).
    pub fn renew(
        &mut self,
        now: i64,
        hmac: &[u8],
        principal: &Principal,
        renew_period_ms: i64,
    ) -> Result<i64, ErrorCode> {
        self.sweep(now);
        if !self.enabled() {
            return Err(ErrorCode::DELEGATION_TOKEN_AUTH_DISABLED);
        }
        let mut period = self.settings.expiry_time_ms;
        if renew_period_ms > 0 {
            period = period.min(renew_period_ms);
        }
        let token = self
            .by_hmac(hmac)
            .ok_or(ErrorCode::DELEGATION_TOKEN_NOT_FOUND)?;
        if token.expired(now) {
            return Err(ErrorCode::DELEGATION_TOKEN_EXPIRED);
        }
        if !renews(token, principal) {
            return Err(ErrorCode::DELEGATION_TOKEN_OWNER_MISMATCH);
        }
        token.expiry_ms = token.max_ms.min(now.wrapping_add(period));
        Ok(token.expiry_ms)
    }

    /// Expires the token of `hmac` for `principal`, as the controller's
    /// `expireDelegationToken`: a negative period removes it at once (answered with now);
    /// else its expiry becomes now plus the period, at most its maximum. Errors, in
    /// Kafka's order: DELEGATION_TOKEN_AUTH_DISABLED, DELEGATION_TOKEN_NOT_FOUND,
    /// DELEGATION_TOKEN_OWNER_MISMATCH, DELEGATION_TOKEN_EXPIRED.
    pub fn expire(
        &mut self,
        now: i64,
        hmac: &[u8],
        principal: &Principal,
        expiry_period_ms: i64,
    ) -> Result<i64, ErrorCode> {
        self.sweep(now);
        if !self.enabled() {
            return Err(ErrorCode::DELEGATION_TOKEN_AUTH_DISABLED);
        }
        let token = self
            .by_hmac(hmac)
            .ok_or(ErrorCode::DELEGATION_TOKEN_NOT_FOUND)?;
        if !renews(token, principal) {
            return Err(ErrorCode::DELEGATION_TOKEN_OWNER_MISMATCH);
        }
        if expiry_period_ms < 0 {
            let id = token.id.clone();
            self.tokens.remove(&id);
            return Ok(now);
        }
        if token.expired(now) {
            return Err(ErrorCode::DELEGATION_TOKEN_EXPIRED);
        }
        token.expiry_ms = token.max_ms.min(saturating(now, expiry_period_ms));
        Ok(token.expiry_ms)
    }

    /// Every token (the expired ones the sweep has not removed yet included), by id.
    pub fn all(&mut self, now: i64) -> impl Iterator<Item = &Token> + '_ {
        self.sweep(now);
        self.tokens.values()
    }

    /// A login with token `id` over SCRAM `mechanism`: the owner's name (the login's
    /// principal is `User:` and it) and the token's credential. `None` for an unknown or
    /// expired token (Kafka lets a login with an expired token the sweep has not removed
    /// yet through, with a session that ends at once; here it is refused).
    pub fn login(
        &mut self,
        now: i64,
        id: &str,
        mechanism: Mechanism,
    ) -> Option<(String, ScramCredential)> {
        self.sweep(now);
        let token = self.tokens.get(id).filter(|token| !token.expired(now))?;
        let credential = token.credentials.get(&mechanism)?.clone();
        Some((token.owner.name.clone(), credential))
    }
}

/// The controller's `allowedToRenew`: the owner or a renewer (not the requester).
fn renews(token: &Token, principal: &Principal) -> bool {
    token.owner == *principal || token.renewers.contains(principal)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens() -> Tokens {
        Tokens::new(TokenSettings {
            secret_key: Some("secret".into()),
            max_lifetime_ms: 1000,
            expiry_time_ms: 100,
            check_interval_ms: 10,
        })
    }

    /// RFC 4231's HMAC-SHA-512 test case 2 (key "Jefe"): the HMAC is computed as Kafka's
    /// `Mac.getInstance("HmacSHA512")` over the id's UTF-8 bytes.
    #[test]
    fn the_hmac_is_hmac_sha512_of_the_token_id() {
        let tokens = Tokens::new(TokenSettings {
            secret_key: Some("Jefe".into()),
            ..TokenSettings::default()
        });
        let hmac = tokens.hmac("what do ya want for nothing?").unwrap();
        let hex: String = hmac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a\
             6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
        );
        assert!(Tokens::default().hmac("x").is_none());
        let empty = Tokens::new(TokenSettings {
            secret_key: Some(String::new()),
            ..TokenSettings::default()
        });
        assert!(!empty.enabled());
    }

    #[test]
    fn lifetimes_follow_the_settings_and_the_request() {
        let mut tokens = tokens();
        let alice = Principal::user("alice");
        let token = tokens
            .create(5000, "t1".into(), alice.clone(), alice.clone(), vec![], 0)
            .unwrap();
        assert_eq!(
            (token.issue_ms, token.expiry_ms, token.max_ms),
            (5000, 5100, 6000)
        );
        let token = tokens
            .create(5000, "t2".into(), alice.clone(), alice.clone(), vec![], 50)
            .unwrap();
        assert_eq!((token.expiry_ms, token.max_ms), (5050, 5050));
        let hmac = tokens.hmac("t1").unwrap();
        // Renewed: now plus the smaller period, never past the maximum.
        let short = tokens.hmac("t2").unwrap();
        assert_eq!(tokens.renew(5040, &short, &alice, 0), Ok(5050));
        assert_eq!(tokens.renew(5050, &hmac, &alice, 30), Ok(5080));
        assert_eq!(tokens.renew(5070, &hmac, &alice, 0), Ok(5170));
        let bob = Principal::user("bob");
        assert_eq!(
            tokens.renew(5100, &hmac, &bob, 0),
            Err(ErrorCode::DELEGATION_TOKEN_OWNER_MISMATCH)
        );
        assert_eq!(
            tokens.renew(5100, b"nope", &alice, 0),
            Err(ErrorCode::DELEGATION_TOKEN_NOT_FOUND)
        );
        // Swept at 5070, past its expiry.
        assert_eq!(
            tokens.renew(5100, &short, &alice, 0),
            Err(ErrorCode::DELEGATION_TOKEN_NOT_FOUND)
        );
        // Expired before the next sweep (due at 5110): DELEGATION_TOKEN_EXPIRED.
        tokens
            .create(5100, "t3".into(), alice.clone(), alice.clone(), vec![], 1)
            .unwrap();
        let brief = tokens.hmac("t3").unwrap();
        assert_eq!(
            tokens.renew(5105, &brief, &alice, 0),
            Err(ErrorCode::DELEGATION_TOKEN_EXPIRED)
        );
        assert_eq!(
            tokens.expire(5106, &brief, &alice, 0),
            Err(ErrorCode::DELEGATION_TOKEN_EXPIRED)
        );
        // Past its expiry: expired, then swept away.
        assert_eq!(
            tokens.renew(6001, &hmac, &alice, 0),
            Err(ErrorCode::DELEGATION_TOKEN_NOT_FOUND)
        );
    }

    #[test]
    fn renewers_must_be_users() {
        let mut tokens = tokens();
        let alice = Principal::user("alice");
        let group = Principal {
            kind: "Group".into(),
            name: "g".into(),
        };
        assert_eq!(
            tokens
                .create(0, "t".into(), alice.clone(), alice, vec![group], 0)
                .unwrap_err(),
            ErrorCode::INVALID_PRINCIPAL_TYPE
        );
        let mut off = Tokens::default();
        let alice = Principal::user("alice");
        assert_eq!(
            off.create(0, "t".into(), alice.clone(), alice.clone(), vec![], 0)
                .unwrap_err(),
            ErrorCode::DELEGATION_TOKEN_AUTH_DISABLED
        );
        assert_eq!(
            off.renew(0, b"x", &alice, 0),
            Err(ErrorCode::DELEGATION_TOKEN_AUTH_DISABLED)
        );
    }

    #[test]
    fn a_negative_expiry_period_removes_the_token() {
        let mut tokens = tokens();
        let alice = Principal::user("alice");
        let carol = Principal::user("carol");
        tokens
            .create(
                0,
                "t".into(),
                alice.clone(),
                alice.clone(),
                vec![carol.clone()],
                0,
            )
            .unwrap();
        let hmac = tokens.hmac("t").unwrap();
        assert!(tokens.login(1, "t", Mechanism::ScramSha512).is_some());
        assert_eq!(tokens.expire(1, &hmac, &carol, 20), Ok(21));
        assert_eq!(tokens.expire(2, &hmac, &alice, -1), Ok(2));
        assert_eq!(tokens.all(3).count(), 0);
        assert!(tokens.login(3, "t", Mechanism::ScramSha512).is_none());
    }
}
