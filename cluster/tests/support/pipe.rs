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
