//! [`Endpoints`]: where a voter listens.

use crate::messages::{add_raft_voter_request, describe_quorum_response, voters_record};
use std::collections::BTreeMap;
use std::fmt;

/// A host and port.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Address {
    /// Host name or IP address, as configured (never resolved by the model).
    pub host: String,
    /// TCP port.
    pub port: u16,
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// A voter's listeners: listener name → address, one address per name.
///
/// Names are normalised to upper case (Kafka's listener names are case-insensitive and it
/// stores them upper-cased), and iteration is in name order, so two endpoint sets built from
/// the same listeners in a different order are equal and render identically. Observers have
/// empty endpoints: the leader learns addresses only from `VotersRecord`s and the static
/// voter configuration, never from fetches.
///
/// ```
/// use kafka_codec::quorum::Endpoints;
///
/// let endpoints = Endpoints::from_iter([("controller", "c1.example", 9093), ("ALT", "c1.example", 9094)]);
/// let names: Vec<&str> = endpoints.iter().map(|(name, _)| name).collect();
/// assert_eq!(names, ["ALT", "CONTROLLER"]);
/// assert_eq!(endpoints.address("Controller").unwrap().port, 9093);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Endpoints {
    listeners: BTreeMap<String, Address>,
}

impl Endpoints {
    /// No listeners (what observers have).
    pub fn empty() -> Self {
        Endpoints::default()
    }

    /// A single listener, as a static voter (`controller.quorum.voters`) has.
    pub fn single(listener: &str, host: &str, port: u16) -> Self {
        Endpoints::from_iter([(listener, host, port)])
    }

    /// Adds or replaces one listener.
    pub fn insert(&mut self, listener: &str, host: &str, port: u16) {
        self.listeners.insert(
            normalise(listener),
            Address {
                host: host.to_owned(),
                port,
            },
        );
    }

    /// The endpoints listed in a `VotersRecord` voter entry. A repeated name keeps the last
    /// address, as a map built from the list would.
    pub fn from_voters_record(endpoints: &[voters_record::Endpoint]) -> Self {
        let mut out = Endpoints::empty();
        for endpoint in endpoints {
            out.insert(&endpoint.name, &endpoint.host, endpoint.port);
        }
        out
    }

    /// The listeners an AddRaftVoter request names for the new voter (a repeated name keeps
    /// the last address).
    pub fn from_add_raft_voter(listeners: &[add_raft_voter_request::Listener]) -> Self {
        let mut out = Endpoints::empty();
        for listener in listeners {
            out.insert(&listener.name, &listener.host, listener.port);
        }
        out
    }

    /// The endpoints as `VotersRecord` entries, in name order.
    pub fn to_voters_record(&self) -> Vec<voters_record::Endpoint> {
        self.iter()
            .map(|(name, address)| voters_record::Endpoint {
                name: name.into(),
                host: address.host.as_str().into(),
                port: address.port,
                ..Default::default()
            })
            .collect()
    }

    /// The endpoints as `DescribeQuorumResponse` listeners, in name order.
    pub fn to_describe_quorum_listeners(&self) -> Vec<describe_quorum_response::Listener> {
        self.iter()
            .map(|(name, address)| describe_quorum_response::Listener {
                name: name.into(),
                host: address.host.as_str().into(),
                port: address.port,
                ..Default::default()
            })
            .collect()
    }

    /// The address of a listener (name compared case-insensitively).
    pub fn address(&self, listener: &str) -> Option<&Address> {
        self.listeners.get(&normalise(listener))
    }

    /// Listeners in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Address)> {
        self.listeners
            .iter()
            .map(|(name, address)| (name.as_str(), address))
    }

    /// Whether there are no listeners.
    pub fn is_empty(&self) -> bool {
        self.listeners.is_empty()
    }

    /// Number of listeners.
    pub fn len(&self) -> usize {
        self.listeners.len()
    }
}

impl<'a> FromIterator<(&'a str, &'a str, u16)> for Endpoints {
    fn from_iter<I: IntoIterator<Item = (&'a str, &'a str, u16)>>(iter: I) -> Self {
        let mut out = Endpoints::empty();
        for (name, host, port) in iter {
            out.insert(name, host, port);
        }
        out
    }
}

impl fmt::Display for Endpoints {
    /// `NAME=host:port,NAME=host:port`, or `-` when empty.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("-");
        }
        for (i, (name, address)) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{name}={address}")?;
        }
        Ok(())
    }
}

fn normalise(listener: &str) -> String {
    listener.to_uppercase()
}
