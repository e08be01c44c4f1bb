//! The transport below the request path: each broker's and controller's accept loop and
//! connections, on the server plumbing the CLI's `tap` stands on too (`kafka-codec-server`):
//! every byte read and not yet answered is charged to the memory budget, connections are
//! capped with eviction of the least useful, idle ones are closed, and whatever a peer sends
//! fails that connection only (the event observer is told why). Frames go to [`dispatch`];
//! nothing here knows an API.

use crate::dispatch::{dispatch, Reply};
use crate::sasl::{Gate, Session};
use crate::{Event, Shared};
use kafka_codec::bytes::{Buf, BufMut, BytesMut};
use kafka_codec::conn::{Direction, ServerConnection};
use kafka_codec::wire::Segments;
use kafka_codec_server::accept::Acceptor;
use kafka_codec_server::budget::Charge;
use kafka_codec_server::frames::{FrameError, FrameReader};
use kafka_codec_server::metrics::{Evicted, Undecoded};
use kafka_codec_server::registry::Member;
use kafka_codec_server::stream::{accept_tls, read_chunk, Stream};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Accepts connections for broker `node_id` until the cluster is dropped. While the broker
/// is stopped (`Control::stop_broker`) it has no listener, so connections are refused, and
/// it listens again on the same address when restarted.
pub async fn serve(
    shared: Arc<Shared>,
    node_id: i32,
    listener: TcpListener,
    mut stop: watch::Receiver<()>,
) {
    let Some(address) = shared.address(node_id) else {
        return;
    };
    let Ok(mut up) = shared.control.watch_up(node_id) else {
        return;
    };
    let mut listener = Some(listener);
    loop {
        let Some(bound) = listener.take() else {
            tokio::select! {
                restarted = up.wait_for(|up| *up) => if restarted.is_err() { return },
                _ = stop.changed() => return,
            }
            match TcpListener::bind(address).await {
                Ok(bound) => listener = Some(bound),
                // The port is held by someone else for now: try again shortly.
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
            }
            continue;
        };
        let mut acceptor = Acceptor::new(bound);
        loop {
            let (tcp, peer) = tokio::select! {
                accepted = acceptor.accept(|line| shared.event(Event::Server(&line))) => accepted,
                // Dropping the acceptor closes the listener (and a removed broker's watch
                // ends: the wait for a restart below returns at once and the loop ends).
                _ = up.wait_for(|up| !*up) => break,
                _ = stop.changed() => return,
            };
            let _ = tcp.set_nodelay(true);
            let id = shared.next_connection.fetch_add(1, Ordering::Relaxed);
            let (member, _) = shared.registry.join(id);
            let shared = Arc::clone(&shared);
            let stop = stop.clone();
            tokio::spawn(async move {
                // The handshake runs on the connection's own task, so a slow client holds
                // up no other; one that fails it is dropped alone.
                let stream = match &shared.tls {
                    None => Stream::Plain(tcp),
                    Some(tls) => match accept_tls(&tls.0, tcp, TLS_HANDSHAKE_TIMEOUT).await {
                        Ok(stream) => stream,
                        Err(e) => return tell(&shared, node_id, peer, &e.to_string()),
                    },
                };
                if let Some(subject) = stream.client_subject() {
                    tell(
                        &shared,
                        node_id,
                        peer,
                        &format!("TLS client certificate {subject}"),
                    );
                }
                connection(shared, node_id, id, member, stream, peer, stop).await;
            });
        }
    }
}

/// Closes a connection that holds memory each time the budget asks for room.
pub async fn relieve_memory_pressure(shared: Arc<Shared>, mut stop: watch::Receiver<()>) {
    loop {
        tokio::select! {
            () = shared.budget.pressure() => {}
            _ = stop.changed() => return,
        }
        if let Some(id) = shared.registry.evict_for_memory() {
            shared.event(Event::Server(&format!(
                "the memory budget ({} bytes, {} in use) is spent; closing connection {id}, \
                 the one holding memory that has gone longest without a complete request",
                shared.budget.limit(),
                shared.budget.in_use()
            )));
        }
    }
}

/// Shows what happened to one connection to the event observer.
fn tell(shared: &Shared, node_id: i32, peer: SocketAddr, message: &str) {
    shared.event(Event::Connection {
        node_id,
        peer,
        message,
    });
}

/// A connection to broker `node_id` over an in-memory pipe rather than a socket (the
/// transport of deterministic tests: nothing but the runtime's tasks and clock), served as
/// a TCP connection is; refused while the broker is stopped.
pub fn connect_in_memory(shared: &Arc<Shared>, node_id: i32) -> io::Result<DuplexStream> {
    let up = shared
        .control
        .watch_up(node_id)
        .map_err(|_| io::Error::new(io::ErrorKind::NotFound, format!("no broker {node_id}")))?;
    if !*up.borrow() {
        return Err(io::Error::new(
            io::ErrorKind::ConnectionRefused,
            format!("broker {node_id} is stopped"),
        ));
    }
    let (client, server) = tokio::io::duplex(IN_MEMORY_BUFFER);
    let id = shared.next_connection.fetch_add(1, Ordering::Relaxed);
    let (member, _) = shared.registry.join(id);
    // An in-memory peer has no address; the connection id stands in for its port.
    let peer = SocketAddr::from(([0, 0, 0, 0], (id % 65536) as u16));
    tokio::spawn(connection(
        Arc::clone(shared),
        node_id,
        id,
        member,
        server,
        peer,
        shared.stop.clone(),
    ));
    Ok(client)
}

/// How long a client has to finish its TLS handshake.
const TLS_HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// How long a connection refused authentication stays open for its client to read why.
const REFUSED_LINGER: std::time::Duration = std::time::Duration::from_secs(1);

/// Bytes an in-memory pipe holds each way before a writer waits.
const IN_MEMORY_BUFFER: usize = 64 * 1024;

async fn connection<S: AsyncRead + AsyncWrite + Unpin>(
    shared: Arc<Shared>,
    node_id: i32,
    id: u64,
    member: Member,
    stream: S,
    peer: SocketAddr,
    mut stop: watch::Receiver<()>,
) {
    let _open = shared.metrics.connection();
    let idle = async {
        let Some(timeout) = shared.idle_timeout else {
            return std::future::pending().await;
        };
        loop {
            let deadline = member.last_activity() + timeout;
            if tokio::time::Instant::now() >= deadline.into() {
                return timeout;
            }
            tokio::time::sleep_until(deadline.into()).await;
        }
    };
    // A stopped broker drops its connections.
    let Ok(mut up) = shared.control.watch_up(node_id) else {
        return;
    };
    tokio::select! {
        () = converse(&shared, node_id, id, peer, &member, stream) => {}
        _ = up.wait_for(|up| !*up) => {}
        why = member.evicted() => {
            shared.metrics.evicted(why.into());
            tell(&shared, node_id, peer, &why.describe(shared.registry.max()));
        }
        timeout = idle => {
            shared.metrics.evicted(Evicted::IdleTimeout);
            tell(&shared, node_id, peer, &format!(
                "closed by the server: no byte either way for the idle timeout ({} s)",
                timeout.as_secs()
            ));
        }
        _ = stop.changed() => {}
    }
}

/// Reads requests and answers them in order until the peer goes or sends something
/// unreadable (a frame too large, a header or body that does not decode): then the
/// connection closes, as Kafka closes it.
async fn converse<S: AsyncRead + AsyncWrite + Unpin>(
    shared: &Shared,
    node_id: i32,
    id: u64,
    peer: SocketAddr,
    member: &Member,
    mut stream: S,
) {
    let mut connection = ServerConnection::new().with_options(shared.options);
    // Each frame in a buffer of its own: a produced batch the partition keeps is a slice of
    // its request's frame, not a copy (handlers/produce.rs).
    let mut frames = FrameReader::new(shared.options.limits.max_frame_size);
    // What `frames` holds, charged to the budget before it is held.
    let mut charge: Charge = shared.budget.none();
    let mut queue = Segments::new();
    let mut session = Session::new(shared.sasl);
    loop {
        let Some(frame) = frames.next_frame() else {
            let read = match frames.read(&mut stream).await {
                Ok(0) => return,
                Ok(read) => read,
                Err(FrameError::Io(e)) => {
                    return tell(shared, node_id, peer, &format!("read failed: {e}"))
                }
                Err(e) => {
                    shared
                        .metrics
                        .undecoded(Direction::ToServer, Undecoded::Error);
                    return tell(
                        shared,
                        node_id,
                        peer,
                        &format!("closing the connection: {e}"),
                    );
                }
            };
            member.touch();
            shared.metrics.bytes(Direction::ToServer, read);
            let Some(more) = shared.budget.reserve(read).await else {
                return;
            };
            charge.absorb(more);
            charge.shrink_to(frames.held());
            member.set_held(charge.bytes());
            continue;
        };
        charge.shrink_to(frames.held());
        member.set_held(charge.bytes());
        // After a SaslHandshake v0 the client sends raw SASL tokens, size-prefixed frames
        // with no header, and each answer is one too (an empty one for PLAIN).
        if session.gate() == Gate::RawTokens {
            let Ok(answer) = session.step(&mut shared.users(), &frame) else {
                // Kafka closes a raw-token connection without an answer.
                return;
            };
            let mut out = BytesMut::with_capacity(4 + answer.len());
            out.put_u32(answer.len() as u32);
            out.extend_from_slice(&answer);
            if stream.write_all(&out).await.is_err() || stream.flush().await.is_err() {
                return;
            }
            shared.metrics.bytes(Direction::ToClient, out.len());
            member.touch();
            continue;
        }
        match connection.decode_request(frame) {
            Ok(request) => {
                let counted = shared
                    .metrics
                    .request(request.api_key().key(), request.api_version);
                let started = Instant::now();
                member.completed_request();
                let response =
                    match dispatch(shared, node_id, id, peer, &request, &mut session).await {
                        Reply::Respond(response) => response,
                        Reply::Nothing => continue,
                        Reply::Close(_why) => return,
                    };
                if let Err(e) = connection.send_segments(&response, &mut queue) {
                    return tell(
                        shared,
                        node_id,
                        peer,
                        &format!("cannot send the answer: {e}"),
                    );
                }
                let written = queue.remaining();
                let sent = async {
                    stream.write_all_buf(&mut queue).await?;
                    stream.flush().await
                };
                if let Err(e) = sent.await {
                    return tell(shared, node_id, peer, &format!("write failed: {e}"));
                }
                shared.metrics.bytes(Direction::ToClient, written);
                shared.metrics.response(counted, started.elapsed());
                member.touch();
                if session.failed() {
                    // A refused login or mechanism: answered, then closed, as Kafka does;
                    // but only once the client has read the answer and gone, or after a
                    // second: a client that reads the answer and the close in one go may
                    // drop the answer (kafka-python 3 does), and then never says why.
                    let _ = tokio::time::timeout(REFUSED_LINGER, async {
                        while matches!(read_chunk(&mut stream).await, Ok(c) if !c.is_empty()) {}
                    })
                    .await;
                    return;
                }
            }
            Err(e) => {
                shared
                    .metrics
                    .undecoded(Direction::ToServer, Undecoded::Error);
                return tell(
                    shared,
                    node_id,
                    peer,
                    &format!("closing the connection: {e}"),
                );
            }
        }
    }
}
