//! A client over the cluster's in-memory transport (`ClusterBuilder::in_memory`,
//! `Cluster::connect`), for the tests that run on tokio's paused clock. Each test file adds
//! the calls of its own APIs in an `impl PipeClient` of its own, as with `support::Client`.

use kafka_codec::bytes::BytesMut;
use kafka_codec::conn::ClientConnection;
use kafka_codec::{Request, Response};
use kafka_codec_cluster::Cluster;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

pub struct PipeClient {
    pub pipe: DuplexStream,
    pub connection: ClientConnection,
    pub received: BytesMut,
}

impl PipeClient {
    /// A connection to broker `node_id`, which must be up.
    pub fn connect(cluster: &Cluster, node_id: i32) -> PipeClient {
        PipeClient {
            pipe: cluster.connect(node_id).expect("the broker is up"),
            connection: ClientConnection::new().with_client_id("pipe"),
            received: BytesMut::new(),
        }
    }

    /// The answer to `body`, or `None` if the connection closed first.
    pub async fn answer(&mut self, version: i16, body: impl Into<Request>) -> Option<Response> {
        let mut out = BytesMut::new();
        self.connection
            .send(version, &body.into(), &mut out)
            .expect("encode");
        self.pipe.write_all(&out).await.ok()?;
        loop {
            if let Some(response) = self.connection.receive(&mut self.received).expect("decode") {
                return Some(response.body);
            }
            match self.pipe.read_buf(&mut self.received).await {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    /// The answer to `body`; the connection must stay open.
    pub async fn call(&mut self, version: i16, body: impl Into<Request>) -> Response {
        self.answer(version, body)
            .await
            .expect("the connection closed")
    }
}

/// A current-thread runtime whose clock starts paused: simulated seconds cost no wall time.
pub fn paused() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a runtime")
}

impl super::Calls for PipeClient {
    async fn call(&mut self, version: i16, body: impl Into<Request>) -> Response {
        PipeClient::call(self, version, body).await
    }
}

/// A cluster of `brokers` brokers on the in-memory transport, its randomness from `seed`,
/// that never closes an idle connection (on the paused clock a test's client idles for
/// simulated minutes): the deterministic tests' cluster, to build or configure further.
pub fn paused_cluster(brokers: usize, seed: u64) -> kafka_codec_cluster::ClusterBuilder {
    Cluster::builder()
        .brokers(brokers)
        .in_memory()
        .seed(seed)
        .idle_timeout(None)
}

/// The recorded ACL fixtures' cluster: one broker on the paused clock with SASL PLAIN, a super
/// user `admin` and the live broker's PLAIN user ([`super::tools_plain_user`]), both logged
/// in, and ALTER on the cluster allowed to `other` alone, so that the user is refused it.
/// Returns the cluster and the clients of the admin and of the user.
pub async fn acl_cluster(seed: u64, other: &str) -> (Cluster, PipeClient, PipeClient) {
    use kafka_codec_cluster::sasl::{Mechanism, SaslUser};
    let (user, password) = super::tools_plain_user();
    let cluster = paused_cluster(1, seed)
        .sasl(SaslUser::new(Mechanism::Plain, "admin", "admin-secret"))
        .sasl(SaslUser::new(Mechanism::Plain, &user, &password))
        .super_user("User:admin")
        .build()
        .await
        .expect("cluster");
    let mut admin = PipeClient::connect(&cluster, 0);
    super::plain_login(&mut admin, "admin", "admin-secret").await;
    super::allow_cluster_alter(&mut admin, other).await;
    let mut client = PipeClient::connect(&cluster, 0);
    super::plain_login(&mut client, &user, &password).await;
    (cluster, admin, client)
}
