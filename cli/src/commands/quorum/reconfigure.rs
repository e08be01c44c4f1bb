//! `kafka-codec quorum add-controller | remove-controller`: AddRaftVoter and RemoveRaftVoter
//! sent to the quorum leader, as `kafka-metadata-quorum` sends them.

use super::client::{ConnectArgs, Controllers};
use crate::common::{write_stdout, Failure, Run};
use kafka_codec::messages::add_raft_voter_request::{AddRaftVoterRequest, Listener};
use kafka_codec::messages::RemoveRaftVoterRequest;
use kafka_codec::ErrorCode;
use kafka_codec::{Request, Response, Uuid};

/// Remove a voter from a KRaft quorum (RemoveRaftVoter).
///
/// The leader appends the new voter set at once (the voter leaves CurrentVoters) and answers
/// when that record commits; until then the voter is still in the committed set, which
/// `kafka-codec quorum describe` shows from another terminal.
#[derive(Debug, clap::Args)]
pub struct RemoveController {
    #[command(flatten)]
    voter: Voter,
}

/// Where to send the change, and which voter it is about.
#[derive(Debug, clap::Args)]
struct Voter {
    /// A controller to ask first (its controller listener).
    #[arg(long, value_name = "HOST:PORT")]
    bootstrap_controller: String,
    /// The voter's node id.
    #[arg(long, value_name = "ID", value_parser = clap::value_parser!(i32).range(0..))]
    controller_id: i32,
    /// The voter's directory id (its metadata log directory's `directory.id`, as `quorum
    /// describe` prints it).
    #[arg(long, value_name = "UUID", value_parser = parse_directory_id)]
    controller_directory_id: Uuid,
    #[command(flatten)]
    connect: ConnectArgs,
}

/// Add a voter to a KRaft quorum (AddRaftVoter).
///
/// Kafka's leader adds only a controller that already fetches as an observer, has caught up
/// and answers on the listener given here. Against `quorum serve` that is controller 4 (its
/// directory id is in `quorum describe`'s observers), or a voter removed earlier, which keeps
/// fetching.
#[derive(Debug, clap::Args)]
pub struct AddController {
    #[command(flatten)]
    voter: Voter,
    /// A listener of the new voter, NAME://HOST:PORT; repeat for more. The leader's own
    /// controller listener name must be among them.
    #[arg(long = "listener", value_name = "NAME://HOST:PORT", required = true,
          value_parser = parse_listener)]
    listeners: Vec<Listener>,
}

impl Run for RemoveController {
    fn run(self) -> Result<(), Failure> {
        let request = RemoveRaftVoterRequest::default()
            .with_cluster_id(None)
            .with_voter_id(self.voter.controller_id)
            .with_voter_directory_id(self.voter.controller_directory_id);
        change_voters(&self.voter, request)?;
        write_stdout(
            format!(
                "Removed KRaft controller {} with directory id {}\n",
                self.voter.controller_id, self.voter.controller_directory_id
            )
            .as_bytes(),
        )
    }
}

impl Run for AddController {
    fn run(self) -> Result<(), Failure> {
        let endpoints: Vec<String> = self
            .listeners
            .iter()
            .map(|l| format!("{}://{}:{}", l.name, l.host, l.port))
            .collect();
        let request = AddRaftVoterRequest::default()
            .with_cluster_id(None)
            .with_timeout_ms(30_000)
            .with_voter_id(self.voter.controller_id)
            .with_voter_directory_id(self.voter.controller_directory_id)
            .with_listeners(self.listeners)
            .with_ack_when_committed(true);
        change_voters(&self.voter, request)?;
        write_stdout(
            format!(
                "Added controller {} with directory id {} and endpoints: {}\n",
                self.voter.controller_id,
                self.voter.controller_directory_id,
                endpoints.join(", ")
            )
            .as_bytes(),
        )
    }
}

/// Sends a voter change to the quorum leader found from `bootstrap`, at the highest version
/// both sides speak, and waits for the answer: `Ok` once the leader says the change is done.
fn change_voters(voter: &Voter, request: impl Into<Request>) -> Result<(), Failure> {
    let bootstrap = voter.bootstrap_controller.as_str();
    let request = request.into();
    let api = request.api_key();
    let mut leader =
        Controllers::discover(bootstrap, &voter.connect.connect()?)?.connect_to_leader()?;
    let version = leader.negotiate(api, api.valid_versions())?;
    let (code, message) = match leader.call(version, request)? {
        Response::AddRaftVoter(r) => (r.error_code, r.error_message),
        Response::RemoveRaftVoter(r) => (r.error_code, r.error_message),
        other => unreachable!("{api} answered as {}", other.api_key()),
    };
    let code = ErrorCode::from(code);
    if !code.is_error() {
        return Ok(());
    }
    Err(Failure::Peer(match message.as_deref() {
        Some(message) if !message.is_empty() => format!("{api}: {code}: {message}"),
        _ => format!("{api}: {code}"),
    }))
}

fn parse_directory_id(text: &str) -> Result<Uuid, String> {
    let id: Uuid = text.parse().map_err(|e| format!("{e}"))?;
    if id.is_zero() {
        return Err("the zero UUID is not a directory id".into());
    }
    Ok(id)
}

/// `NAME://HOST:PORT`, with `[...]` around an IPv6 host.
fn parse_listener(text: &str) -> Result<Listener, String> {
    let (name, address) = text
        .split_once("://")
        .ok_or_else(|| "expected NAME://HOST:PORT".to_owned())?;
    let (host, port) = address
        .rsplit_once(':')
        .ok_or_else(|| "expected NAME://HOST:PORT".to_owned())?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if name.is_empty() || host.is_empty() {
        return Err("expected NAME://HOST:PORT".into());
    }
    let port: u16 = port.parse().map_err(|_| format!("bad port {port:?}"))?;
    Ok(Listener::default()
        .with_name(name.into())
        .with_host(host.into())
        .with_port(port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listeners_parse() {
        let l = parse_listener("CONTROLLER://[::1]:9093").unwrap();
        assert_eq!(
            (l.name.as_str(), l.host.as_str(), l.port),
            ("CONTROLLER", "::1", 9093)
        );
        let l = parse_listener("CONTROLLER://c4.example:19093").unwrap();
        assert_eq!(l.host.as_str(), "c4.example");
        for bad in [
            "c4:9093",
            "CONTROLLER://c4",
            "CONTROLLER://:9093",
            "://c4:1",
            "X://c4:99999",
        ] {
            assert!(parse_listener(bad).is_err(), "{bad}");
        }
        assert!(parse_directory_id("AAAAAAAAAAAAAAAAAAAAAA").is_err());
        assert!(parse_directory_id("not-a-uuid").is_err());
    }
}
