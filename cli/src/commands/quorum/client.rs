//! A blocking connection to a KRaft controller for the quorum commands, over the library's
//! sans-IO [`ClientConnection`]: ApiVersions first (with the fallback), then one request at
//! a time, and the way Kafka's admin client finds the quorum leader from a bootstrap
//! controller.

use crate::common::Failure;
use kafka_codec::bytes::BytesMut;
use kafka_codec::conn::{ApiVersionsReply, ClientConnection, SupportedVersions};
use kafka_codec::messages::describe_cluster_response::DescribeClusterResponse;
use kafka_codec::messages::{ApiVersionsRequest, DescribeClusterRequest};
use kafka_codec::ErrorCode;
use kafka_codec::{ApiKey, Request, Response, VersionRange};
use kafka_codec_server::tls;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// `EndpointType` 2: the controllers (KIP-919).
const CONTROLLER_ENDPOINTS: i8 = 2;

/// How to reach a controller: `--timeout`, and TLS if asked for.
#[derive(Clone)]
pub struct Connect {
    /// How long connecting, and each answer, may take.
    pub timeout: Duration,
    pub tls: Option<tls::Client>,
}

/// The flags of a command that talks to a controller.
#[derive(Debug, Clone, clap::Args)]
pub struct ConnectArgs {
    /// Seconds to wait to connect, and for each answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    #[command(flatten)]
    pub tls: tls::ClientTls,
}

impl ConnectArgs {
    pub fn connect(&self) -> Result<Connect, Failure> {
        Ok(Connect {
            timeout: Duration::from_secs(self.timeout),
            tls: self.tls.client()?,
        })
    }
}

/// Plain TCP or TLS over it.
enum Stream {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.read(buf),
            Stream::Tls(tls) => tls.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.write(data),
            Stream::Tls(tls) => tls.write(data),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(tcp) => tcp.flush(),
            Stream::Tls(tls) => tls.flush(),
        }
    }
}

/// One connection to a Kafka node, its ApiVersions exchange done.
pub struct Peer {
    address: String,
    stream: Stream,
    timeout: Duration,
    /// Whether the stream is TLS.
    tls: bool,
    /// How to explain a TLS failure.
    side: Option<tls::Side>,
    connection: ClientConnection,
    received: BytesMut,
    versions: SupportedVersions,
}

impl Peer {
    /// Connects to `address` (`host:port`) and asks what it speaks, at the newest ApiVersions
    /// this crate knows, falling back as the peer says.
    pub fn connect(address: &str, how: &Connect) -> Result<Peer, Failure> {
        let fail = |e: &dyn std::fmt::Display| Failure::Peer(format!("{address}: {e}"));
        let addresses = address.to_socket_addrs().map_err(|e| fail(&e))?;
        let mut last = None;
        let mut stream = None;
        for socket in addresses {
            match TcpStream::connect_timeout(&socket, how.timeout) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let stream = match (stream, last) {
            (Some(stream), _) => stream,
            (None, Some(e)) => return Err(fail(&format!("cannot connect: {e}"))),
            (None, None) => return Err(fail(&"the name resolves to no address")),
        };
        stream
            .set_read_timeout(Some(how.timeout))
            .map_err(|e| fail(&e))?;
        stream
            .set_write_timeout(Some(how.timeout))
            .map_err(|e| fail(&e))?;
        stream.set_nodelay(true).map_err(|e| fail(&e))?;
        let stream = match &how.tls {
            None => Stream::Plain(stream),
            Some(tls) => {
                let host = address.rsplit_once(':').map_or(address, |(host, _)| host);
                let name = tls.server_name(host).map_err(|e| fail(&e))?;
                let connection = rustls::ClientConnection::new(tls.config.clone(), name)
                    .map_err(|e| fail(&format!("TLS: {e}")))?;
                Stream::Tls(Box::new(rustls::StreamOwned::new(connection, stream)))
            }
        };
        let mut peer = Peer {
            address: address.to_owned(),
            tls: matches!(stream, Stream::Tls(_)),
            side: how.tls.as_ref().map(|tls| tls.side),
            stream,
            timeout: how.timeout,
            connection: ClientConnection::new().with_client_id("kafka-codec"),
            received: BytesMut::new(),
            versions: SupportedVersions::default(),
        };
        let mut version = ApiVersionsReply::first_version();
        loop {
            let request = ApiVersionsRequest::default()
                .with_client_software_name("kafka-codec".into())
                .with_client_software_version(env!("CARGO_PKG_VERSION").into());
            let Response::ApiVersions(body) = peer.call(version, request)? else {
                unreachable!("the answer to ApiVersions is decoded as ApiVersions");
            };
            match ApiVersionsReply::read(&body, version) {
                Ok(ApiVersionsReply::Supported(versions)) => {
                    peer.versions = versions;
                    return Ok(peer);
                }
                Ok(ApiVersionsReply::RetryWith(lower)) => version = lower,
                Err(e) => return Err(fail(&e)),
            }
        }
    }

    /// The address connected to.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The highest version of `api` in `ours` that the peer speaks.
    pub fn negotiate(&self, api: ApiKey, ours: VersionRange) -> Result<i16, Failure> {
        self.versions
            .negotiate_within(api, ours)
            .map_err(|e| Failure::Peer(format!("{}: {e}", self.address)))
    }

    /// Sends `request` at `version` and waits for its answer.
    pub fn call(&mut self, version: i16, request: impl Into<Request>) -> Result<Response, Failure> {
        let request = request.into();
        let api = request.api_key();
        let fail = |e: &dyn std::fmt::Display| {
            Failure::Peer(format!("{}: {api} v{version}: {e}", self.address))
        };
        let mut out = BytesMut::new();
        self.connection
            .send(version, &request, &mut out)
            .map_err(|e| fail(&e))?;
        let timeout = self.timeout;
        let side = self.side;
        let handshaking = match &self.stream {
            Stream::Tls(tls) => tls.conn.is_handshaking(),
            Stream::Plain(_) => false,
        };
        let io_failed = |e: std::io::Error| match (e.kind(), side) {
            // A socket timeout reads as "Resource temporarily unavailable".
            (std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut, _) => fail(&format!(
                "no answer within {} s (--timeout)",
                timeout.as_secs()
            )),
            (_, Some(side)) => fail(&format!(
                "TLS: {}",
                tls::explain::explain_io(&e, side, handshaking)
            )),
            (_, None) => fail(&e),
        };
        self.stream.write_all(&out).map_err(io_failed)?;
        self.stream.flush().map_err(io_failed)?;
        let mut chunk = [0u8; 16 * 1024];
        let tls = self.tls;
        loop {
            let received = self.connection.receive(&mut self.received).map_err(|e| {
                match crate::common::OtherProtocol::recognise(&self.received) {
                    Some(protocol) if protocol.is_tls() && !tls => {
                        fail(&"the peer answered with TLS, not plaintext Kafka: add --tls")
                    }
                    Some(protocol) => fail(&format!(
                        "the peer answered with {}, not the Kafka protocol (is this a Kafka \
                         controller listener?)",
                        protocol.name()
                    )),
                    None => fail(&e),
                }
            })?;
            if let Some(frame) = received {
                return Ok(frame.body);
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err(fail(&"the peer closed the connection")),
                Ok(n) => self.received.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_failed(e)),
            }
        }
    }
}

/// The controller endpoints a node lists, and which of them leads.
pub struct Controllers {
    /// The connection the question went over.
    pub bootstrap: Peer,
    /// How it was made, to reach the leader the same way.
    how: Connect,
    /// The answer.
    pub cluster: DescribeClusterResponse,
}

impl Controllers {
    /// Asks the controller at `bootstrap` for the controllers (DescribeCluster with endpoint
    /// type 2, as `kafka-metadata-quorum --bootstrap-controller` does).
    pub fn discover(bootstrap: &str, how: &Connect) -> Result<Controllers, Failure> {
        let mut peer = Peer::connect(bootstrap, how)?;
        // Version 0 cannot ask for controller endpoints.
        let ours = ApiKey::DescribeCluster.valid_versions();
        let version = peer.negotiate(ApiKey::DescribeCluster, VersionRange::new(1, ours.max))?;
        let request = DescribeClusterRequest::default().with_endpoint_type(CONTROLLER_ENDPOINTS);
        let Response::DescribeCluster(cluster) = peer.call(version, request)? else {
            unreachable!("the answer to DescribeCluster is decoded as DescribeCluster");
        };
        let error = ErrorCode::from(cluster.error_code);
        if error.is_error() {
            return Err(Failure::Peer(format!(
                "{bootstrap}: DescribeCluster: {error}{}",
                cluster
                    .error_message
                    .as_deref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            )));
        }
        if cluster.endpoint_type != CONTROLLER_ENDPOINTS {
            return Err(Failure::Peer(format!(
                "{bootstrap}: DescribeCluster answered with endpoint type {}, not the \
                 controllers (is this a broker listener? use the controller listener)",
                cluster.endpoint_type
            )));
        }
        Ok(Controllers {
            bootstrap: peer,
            how: how.clone(),
            cluster,
        })
    }

    /// A connection to the leader: the bootstrap connection when the leader listens there,
    /// else a new one to the address DescribeCluster gives for it.
    pub fn connect_to_leader(self) -> Result<Peer, Failure> {
        let leader = self.cluster.controller_id;
        let Some(node) = self.cluster.brokers.iter().find(|b| b.broker_id == leader) else {
            return Err(Failure::Peer(format!(
                "{}: no quorum leader among the controllers it lists (ControllerId {leader})",
                self.bootstrap.address()
            )));
        };
        let host = node.host.as_str();
        let address = if host.contains(':') {
            format!("[{host}]:{}", node.port)
        } else {
            format!("{host}:{}", node.port)
        };
        if address == self.bootstrap.address() {
            Ok(self.bootstrap)
        } else {
            Peer::connect(&address, &self.how)
        }
    }
}
