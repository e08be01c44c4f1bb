//! Client quotas (DescribeClientQuotas, AlterClientQuotas): stored per entity and described
//! back as Kafka's KRaft controller and brokers keep and describe them. They are not
//! enforced: no client is throttled.
//!
//! An entity is a set of (type, name) pairs, types among `user`, `client-id` and `ip`, a
//! name of `None` meaning the type's default entity. Its quotas are keys Kafka's
//! `QuotaConfig` defines for its kind of entity, each value checked as Kafka checks it.

use std::collections::BTreeMap;

/// The entity types Kafka knows.
pub const USER: &str = "user";
/// A client id entity.
pub const CLIENT_ID: &str = "client-id";
/// An IP address entity.
pub const IP: &str = "ip";

/// Entities the cluster holds quotas for at most (the cluster's own bound: Kafka has none).
pub const MAX_ENTITIES: usize = 10_000;

/// An entity: (type, name) pairs in type order; `None` names the default entity.
pub type Entity = Vec<(String, Option<String>)>;

/// An entity's quotas, by key.
pub type Quotas = BTreeMap<String, f64>;

/// Why a request is refused: Kafka's error and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The error.
    pub error: kafka_codec::ErrorCode,
    /// What Kafka says.
    pub message: String,
}

fn invalid(message: impl Into<String>) -> Refusal {
    Refusal {
        error: kafka_codec::ErrorCode::INVALID_REQUEST,
        message: message.into(),
    }
}

/// A quota key's type, as Kafka's `QuotaConfig` declares it.
#[derive(Debug, Clone, Copy)]
enum KeyType {
    Int,
    Long,
    Double,
}

/// The quota keys of a user or client-id entity, and of an IP entity.
fn key_type(ip: bool, key: &str) -> Option<KeyType> {
    if ip {
        return (key == "connection_creation_rate").then_some(KeyType::Int);
    }
    match key {
        "producer_byte_rate" | "consumer_byte_rate" => Some(KeyType::Long),
        "request_percentage" | "controller_mutation_rate" => Some(KeyType::Double),
        _ => None,
    }
}

/// Checks an entity as Kafka's controller does (`ClientQuotaControlManager`), returning it
/// in type order.
pub fn validate_entity(pairs: &[(String, Option<String>)]) -> Result<Entity, Refusal> {
    if pairs.is_empty() {
        return Err(invalid("Invalid empty client quota entity"));
    }
    let mut entity: BTreeMap<String, Option<String>> = BTreeMap::new();
    for (entity_type, name) in pairs {
        if entity.contains_key(entity_type) {
            return Err(invalid(format!(
                "Invalid empty client quota entity, duplicate entity entry {entity_type}"
            )));
        }
        match entity_type.as_str() {
            USER | CLIENT_ID => {}
            IP => {
                if let Some(name) = name {
                    // Kafka also resolves host names here; this cluster looks nothing up.
                    if name.parse::<std::net::IpAddr>().is_err() {
                        return Err(invalid(format!("Illegal ip address {name}")));
                    }
                }
            }
            other => {
                return Err(invalid(format!(
                    "Unhandled client quota entity type: {other}"
                )))
            }
        }
        if name.as_deref() == Some("") {
            return Err(invalid(format!("Empty {entity_type} not supported")));
        }
        entity.insert(entity_type.clone(), name.clone());
    }
    if entity.contains_key(IP) && (entity.contains_key(USER) || entity.contains_key(CLIENT_ID)) {
        return Err(invalid(
            "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId entities.",
        ));
    }
    Ok(entity.into_iter().collect())
}

/// Checks one quota value for `key` of an (IP or other) entity as Kafka does.
fn validate_value(ip: bool, key: &str, value: f64) -> Result<(), Refusal> {
    let Some(kind) = key_type(ip, key) else {
        return Err(invalid(format!("Invalid configuration key {key}")));
    };
    // Not `value <= 0.0` alone: NaN is no quota either.
    if value.is_nan() || value <= 0.0 {
        return Err(invalid(format!("Quota {key} must be greater than 0")));
    }
    let integral = |limit: f64, name: &str| {
        if value > limit {
            Err(invalid(format!(
                "Proposed value for {key} is too large for {name}."
            )))
        } else if (value % 1.0).abs() > 1e-6 {
            Err(invalid(format!("{key} cannot be a fractional value.")))
        } else {
            Ok(())
        }
    };
    match kind {
        KeyType::Double => Ok(()),
        KeyType::Int => integral(f64::from(i32::MAX), "an INT"),
        KeyType::Long => integral(i64::MAX as f64, "a LONG"),
    }
}

/// How a describe filter component matches an entity's name of its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    /// That name.
    Exact(String),
    /// The default entity of the type.
    Default,
    /// Any entity of the type (default or named).
    Any,
}

/// The client quotas held.
#[derive(Debug, Default)]
pub struct ClientQuotas {
    quotas: BTreeMap<Entity, Quotas>,
}

impl ClientQuotas {
    /// Applies `ops` (key, value, remove) to `entity` (already validated), as Kafka's
    /// controller does: a later op on a key overrides an earlier one; every value is checked
    /// first and nothing changes if one fails, nor with `validate_only`.
    pub fn alter(
        &mut self,
        entity: &Entity,
        ops: &[(String, f64, bool)],
        validate_only: bool,
    ) -> Result<(), Refusal> {
        let ip = entity.iter().any(|(t, _)| t == IP);
        let mut changes: BTreeMap<&str, Option<f64>> = BTreeMap::new();
        for (key, value, remove) in ops {
            changes.insert(key, (!remove).then_some(*value));
        }
        for (key, value) in &changes {
            if let Some(value) = value {
                validate_value(ip, key, *value)?;
            }
        }
        if !self.quotas.contains_key(entity)
            && changes.values().any(Option::is_some)
            && self.quotas.len() >= MAX_ENTITIES
        {
            return Err(invalid(format!(
                "This cluster holds quotas for at most {MAX_ENTITIES} entities"
            )));
        }
        if validate_only {
            return Ok(());
        }
        let quotas = self.quotas.entry(entity.clone()).or_default();
        for (key, value) in changes {
            match value {
                Some(value) => quotas.insert(key.to_owned(), value),
                None => quotas.remove(key),
            };
        }
        if quotas.is_empty() {
            self.quotas.remove(entity);
        }
        Ok(())
    }

    /// The entities that match every component (type, match) and their quotas, as Kafka's
    /// brokers describe them; `strict`: entities of no other type. Components are checked
    /// first (a type twice, an empty or unknown type, IP with user or client id).
    pub fn describe(
        &self,
        components: &[(String, Match)],
        strict: bool,
    ) -> Result<Vec<(&Entity, &Quotas)>, Refusal> {
        let mut seen: Vec<&str> = Vec::new();
        for (entity_type, _) in components {
            let which = match entity_type.as_str() {
                USER => "user",
                CLIENT_ID => "client",
                IP => "ip",
                "" => return Err(invalid("Unexpected empty filter component entity type")),
                other => {
                    return Err(Refusal {
                        error: kafka_codec::ErrorCode::UNSUPPORTED_VERSION,
                        message: format!("Custom entity type '{other}' not supported"),
                    })
                }
            };
            if seen.contains(&which) {
                return Err(invalid(format!(
                    "Duplicate {which} filter component entity type"
                )));
            }
            seen.push(which);
        }
        if seen.contains(&"ip") && (seen.contains(&"user") || seen.contains(&"client")) {
            return Err(invalid(
                "Invalid entity filter component combination, IP filter component should not be used with user or clientId filter component.",
            ));
        }
        Ok(self
            .quotas
            .iter()
            .filter(|(entity, _)| {
                let matched = components.iter().all(|(entity_type, wanted)| {
                    entity
                        .iter()
                        .find(|(t, _)| t == entity_type)
                        .is_some_and(|(_, name)| match wanted {
                            Match::Exact(wanted) => name.as_deref() == Some(wanted.as_str()),
                            Match::Default => name.is_none(),
                            Match::Any => true,
                        })
                });
                matched && (!strict || entity.len() == components.len())
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(pairs: &[(&str, Option<&str>)]) -> Entity {
        let pairs: Vec<_> = pairs
            .iter()
            .map(|(t, n)| ((*t).to_owned(), n.map(str::to_owned)))
            .collect();
        validate_entity(&pairs).expect("valid")
    }

    #[test]
    fn values_are_checked_by_their_key_type() {
        let user = entity(&[("user", Some("alice"))]);
        let ip = entity(&[("ip", Some("10.0.0.1"))]);
        let mut quotas = ClientQuotas::default();
        let set = |key: &str, value: f64| vec![(key.to_owned(), value, false)];
        assert!(quotas
            .alter(&user, &set("request_percentage", 0.5), false)
            .is_ok());
        assert!(quotas
            .alter(&user, &set("producer_byte_rate", 1.5), false)
            .is_err());
        assert!(quotas
            .alter(&user, &set("producer_byte_rate", -1.0), false)
            .is_err());
        assert!(quotas
            .alter(&user, &set("connection_creation_rate", 1.0), false)
            .is_err());
        assert!(quotas
            .alter(&ip, &set("connection_creation_rate", 3e9), false)
            .is_err());
        assert!(quotas
            .alter(&ip, &set("connection_creation_rate", 10.0), false)
            .is_ok());
        assert!(quotas
            .alter(&ip, &set("consumer_byte_rate", 10.0), false)
            .is_err());
        // Removing every key removes the entity.
        let remove = vec![("connection_creation_rate".to_owned(), 0.0, true)];
        assert!(quotas.alter(&ip, &remove, false).is_ok());
        assert_eq!(quotas.describe(&[], false).unwrap().len(), 1);
    }

    #[test]
    fn held_entities_are_bounded() {
        let mut quotas = ClientQuotas::default();
        let set = vec![("consumer_byte_rate".to_owned(), 1.0, false)];
        for i in 0..MAX_ENTITIES {
            let name = i.to_string();
            quotas
                .alter(&entity(&[("client-id", Some(&name))]), &set, false)
                .expect("room");
        }
        let one_more = entity(&[("client-id", Some("one more"))]);
        assert!(quotas.alter(&one_more, &set, false).is_err());
    }
}
