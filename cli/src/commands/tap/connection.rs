//! One proxied connection, as one task: TLS with the client if asked for, the upstream
//! connection once the client has sent something, the two pumps, and the reasons the tool
//! may close it early (the connection cap or memory budget evicting it, the idle timeout).
//! Its logger runs as a task of its own on the decoding threads, fed through a bounded queue.

use super::events::{ClosedEvent, ConnectEvent, Event};
use super::log::Logger;
use super::proxy::Proxy;
use super::pump::{pump, Link};
use kafka_codec::conn::Direction;
use kafka_codec_server::metrics::Evicted;
use kafka_codec_server::registry::Member;
use kafka_codec_server::stream::{self, Stream};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// Events a connection's logger may be behind by before its pumps wait.
const EVENT_QUEUE: usize = 1024;
/// How long the upstream connection (and its TLS handshake) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take over its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a connection is headed.
pub struct Target {
    /// The listener it came in on.
    pub listener: SocketAddr,
    /// The upstream `host:port` that listener stands for.
    pub upstream: String,
}

/// Proxies one client connection until it ends, then logs its close.
pub async fn serve(
    proxy: Arc<Proxy>,
    id: u64,
    member: Member,
    client: TcpStream,
    peer: SocketAddr,
    target: Target,
) {
    let _ = client.set_nodelay(true);
    let _open = proxy.metrics.connection();
    // The logger and its queue come once there is something to log (the connect line), so
    // that a connection that only waits costs its task and its socket.
    let start_logger = || {
        proxy.log.as_ref().map(|log| {
            let (events, received) = mpsc::channel(EVENT_QUEUE);
            let logger = Logger::new(
                id,
                Arc::clone(&proxy.config),
                Arc::clone(log),
                Arc::clone(&proxy.budget),
                Arc::clone(&proxy.metrics),
            );
            proxy.decode.spawn(logger.run(received));
            events
        })
    };
    let connect_event = |upstream_address, client_subject, error| {
        Event::Connect(Box::new(ConnectEvent {
            at: (Instant::now(), SystemTime::now()),
            client: peer,
            listener: target.listener,
            upstream: target.upstream.clone(),
            upstream_address,
            client_subject,
            error,
        }))
    };
    // Everything before the pumps start: may be cut short by an eviction or the idle timeout.
    // Fails with what went wrong, and the subject of the client's certificate if it gave one.
    let setup = async {
        let client = match &proxy.listen_tls {
            Some(acceptor) => Box::pin(stream::accept_tls(acceptor, client, HANDSHAKE_TIMEOUT))
                .await
                .map_err(|e| (e.to_string(), None))?,
            None => {
                // Kafka clients speak first: the upstream is reached once this one has (or
                // has closed), so an idle connection costs one descriptor, not two.
                let sent = client
                    .peek(&mut [0u8; 1])
                    .await
                    .map_err(|e| (format!("the client connection failed: {e}"), None))?;
                if sent == 0 {
                    return Err((
                        "the client closed before sending anything; not connected upstream"
                            .to_owned(),
                        None,
                    ));
                }
                Stream::Plain(client)
            }
        };
        let subject = client.client_subject();
        // Boxed, like the forwarding below: a waiting connection's task holds only the
        // state of waiting.
        let (server, address) = Box::pin(stream::connect(
            &proxy.resolver,
            &target.upstream,
            CONNECT_TIMEOUT,
            proxy.upstream_tls.as_ref(),
        ))
        .await
        .map_err(|e| (format!("cannot connect upstream: {e}"), subject.clone()))?;
        Ok::<_, (String, Option<String>)>((client, server, address, subject))
    };
    let interrupted = async {
        tokio::select! {
            why = member.evicted() => {
                proxy.metrics.evicted(why.into());
                why.describe(proxy.registry.max())
            }
            () = idle(proxy.idle_timeout, || None) => {
                proxy.metrics.evicted(Evicted::IdleTimeout);
                format!(
                    "closed by the tool: nothing sent for --idle-timeout ({} s)",
                    proxy.idle_timeout.map_or(0, |t| t.as_secs())
                )
            }
        }
    };
    let (client, server, address, subject) = tokio::select! {
        ready = setup => match ready {
            Ok(streams) => streams,
            Err((error, subject)) => {
                send(&start_logger(), connect_event(None, subject, Some(error))).await;
                return;
            }
        },
        why = interrupted => {
            let error = format!("{why}, before connecting upstream");
            send(&start_logger(), connect_event(None, None, Some(error))).await;
            return;
        }
    };
    let events = start_logger();
    if let Some(events) = &events {
        let _ = events
            .send(connect_event(Some(address), subject, None))
            .await;
    }
    Box::pin(forward(&proxy, member, events, client, server)).await;
}

/// Runs the two pumps until the connection ends, then logs its close.
async fn forward(
    proxy: &Proxy,
    member: Member,
    events: Option<mpsc::Sender<Event>>,
    client: Stream,
    server: Stream,
) {
    let rewrite = proxy.rewrite();
    let client_fd = client.raw_fd();
    let link = Link::new(
        Arc::clone(&proxy.config),
        Arc::clone(&proxy.budget),
        Arc::clone(&proxy.metrics),
        rewrite,
        Arc::clone(&proxy.rules),
        member,
        events,
        client_fd,
    );
    let (client_read, client_write) = client.split();
    let (server_read, server_write) = server.split();
    let pumps = async {
        let requests = pump(Direction::ToServer, &link, client_read, server_write);
        let responses = pump(Direction::ToClient, &link, server_read, client_write);
        tokio::pin!(requests, responses);
        // A clean end of one direction is passed on as such while the other goes on; any
        // failure ends both. Which peer ended first (and how) explains a request left
        // unanswered.
        tokio::select! {
            end = &mut requests => {
                if matches!(end, super::pump::End::Eof) { responses.await; }
                (end.ending(Direction::ToServer), end.refusal())
            }
            end = &mut responses => {
                if matches!(end, super::pump::End::Eof) { requests.await; }
                (end.ending(Direction::ToClient), end.refusal())
            }
        }
    };
    let (ended_first, closed_by) = tokio::select! {
        ended = pumps => ended,
        why = link.member().evicted() => {
            proxy.metrics.evicted(why.into());
            (None, Some(why.describe(proxy.registry.max())))
        }
        () = idle(proxy.idle_timeout, || Some(link.member().last_activity())) => {
            proxy.metrics.evicted(Evicted::IdleTimeout);
            (None, Some(format!(
                "closed by the tool: no byte either way for --idle-timeout ({} s)",
                proxy.idle_timeout.map_or(0, |t| t.as_secs())
            )))
        }
    };
    let (to_server, to_client) = link.finish();
    link.send(Event::Closed(Box::new(ClosedEvent {
        at: (Instant::now(), SystemTime::now()),
        to_server,
        to_client,
        ended_first,
        closed_by,
    })))
    .await;
    // Dropping the halves closes both sockets.
}

async fn send(events: &Option<mpsc::Sender<Event>>, event: Event) {
    if let Some(events) = events {
        let _ = events.send(event).await;
    }
}

/// Resolves once nothing has happened for `timeout` since `last()` (or since it was called,
/// while `last` gives `None`); never without a timeout.
async fn idle(timeout: Option<Duration>, last: impl Fn() -> Option<std::time::Instant>) {
    let Some(timeout) = timeout else {
        return std::future::pending().await;
    };
    let start = std::time::Instant::now();
    loop {
        let since = last().unwrap_or(start).max(start);
        let deadline = since + timeout;
        if std::time::Instant::now() >= deadline {
            return;
        }
        tokio::time::sleep_until(deadline.into()).await;
    }
}
