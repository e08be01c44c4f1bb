//! A connection as the server commands use it: plain TCP or TLS over it, read in chunks that
//! exist only once bytes have arrived, and upstream connections made with a timeout through
//! a resolver that never starts a thread per lookup.

use super::tls;
use bytes::Bytes;
use kafka_codec::bytes;
use std::collections::HashMap;
use std::future::poll_fn;
use std::io;
use std::mem::MaybeUninit;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::pin::Pin;
use std::sync::{mpsc, Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

/// Most bytes one read takes.
pub const CHUNK: usize = 32 * 1024;

/// Plain TCP, or TLS over it.
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_write(cx, data),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_write(cx, data),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Stream::Tls(tls) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}

/// Reads what has arrived, up to [`CHUNK`] bytes; empty at the end of the stream.
///
/// While it waits nothing is held: the bytes land in a buffer on the stack of the poll that
/// finds them and are copied out at their size, so ten thousand idle connections hold no
/// read buffers.
pub async fn read_chunk<R: AsyncRead + Unpin + ?Sized>(reader: &mut R) -> io::Result<Bytes> {
    poll_fn(|cx| {
        let mut stack = [MaybeUninit::<u8>::uninit(); CHUNK];
        let mut buf = ReadBuf::uninit(&mut stack);
        ready!(Pin::new(&mut *reader).poll_read(cx, &mut buf))?;
        Poll::Ready(Ok(Bytes::copy_from_slice(buf.filled())))
    })
    .await
}

/// Host names to addresses, on one thread started with the server (so no lookup ever has
/// to start a thread), with answers kept for a while.
pub struct Resolver {
    lookups: Mutex<mpsc::Sender<(String, oneshot::Sender<io::Result<Vec<SocketAddr>>>)>>,
    cache: Mutex<HashMap<String, (Instant, Vec<SocketAddr>)>>,
}

/// How long an answer is reused.
const CACHE_FOR: Duration = Duration::from_secs(30);

impl Resolver {
    pub fn start() -> io::Result<Arc<Resolver>> {
        let (lookups, requests) =
            mpsc::channel::<(String, oneshot::Sender<io::Result<Vec<SocketAddr>>>)>();
        std::thread::Builder::new()
            .name("kafka-codec-resolve".into())
            .spawn(move || {
                for (address, reply) in requests {
                    let _ = reply.send(
                        address
                            .to_socket_addrs()
                            .map(|addresses| addresses.collect()),
                    );
                }
            })?;
        Ok(Arc::new(Resolver {
            lookups: Mutex::new(lookups),
            cache: Mutex::new(HashMap::new()),
        }))
    }

    /// The addresses of `host:port`.
    pub async fn resolve(&self, address: &str) -> io::Result<Vec<SocketAddr>> {
        if let Ok(socket) = address.parse::<SocketAddr>() {
            return Ok(vec![socket]);
        }
        if let Some((host, port)) = address.rsplit_once(':') {
            if let (Ok(ip), Ok(port)) = (host.parse::<IpAddr>(), port.parse::<u16>()) {
                return Ok(vec![SocketAddr::new(ip, port)]);
            }
        }
        {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((at, addresses)) = cache.get(address) {
                if at.elapsed() < CACHE_FOR {
                    return Ok(addresses.clone());
                }
            }
        }
        let (reply, answer) = oneshot::channel();
        self.lookups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send((address.to_owned(), reply))
            .map_err(|_| io::Error::other("the resolver thread is gone"))?;
        let addresses = answer
            .await
            .map_err(|_| io::Error::other("the resolver thread is gone"))??;
        if addresses.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "the name resolves to no address",
            ));
        }
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() > 4096 {
            cache.clear();
        }
        cache.insert(address.to_owned(), (Instant::now(), addresses.clone()));
        Ok(addresses)
    }
}

/// Connects to `address` (`host:port`), trying each address it resolves to within
/// `timeout`, then starts TLS if `tls` is given. Returns the stream and the address reached.
pub async fn connect(
    resolver: &Resolver,
    address: &str,
    timeout: Duration,
    tls: Option<&tls::Client>,
) -> io::Result<(Stream, SocketAddr)> {
    let work = async {
        let mut last = io::Error::new(io::ErrorKind::NotFound, "the name resolves to no address");
        for socket in resolver.resolve(address).await? {
            match TcpStream::connect(socket).await {
                Ok(tcp) => {
                    let _ = tcp.set_nodelay(true);
                    let Some(tls) = tls else {
                        return Ok((Stream::Plain(tcp), socket));
                    };
                    let host = address.rsplit_once(':').map_or(address, |(host, _)| host);
                    let name = tls
                        .server_name(host)
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                    let connector = tokio_rustls::TlsConnector::from(Arc::clone(&tls.config));
                    let stream = connector.connect(name, tcp).await.map_err(|e| {
                        io::Error::new(e.kind(), format!("TLS handshake failed: {e}"))
                    })?;
                    return Ok((Stream::Tls(Box::new(stream.into())), socket));
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    };
    tokio::time::timeout(timeout, work)
        .await
        .unwrap_or_else(|_| {
            Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("timed out after {} s", timeout.as_secs()),
            ))
        })
}

/// Accepts TLS on a connection a listener took, within `timeout`.
pub async fn accept_tls(
    acceptor: &tokio_rustls::TlsAcceptor,
    tcp: TcpStream,
    timeout: Duration,
) -> io::Result<Stream> {
    match tokio::time::timeout(timeout, acceptor.accept(tcp)).await {
        Ok(Ok(stream)) => Ok(Stream::Tls(Box::new(stream.into()))),
        Ok(Err(e)) => Err(io::Error::new(
            e.kind(),
            format!("TLS handshake with the client failed: {e}"),
        )),
        Err(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "the client did not finish the TLS handshake within {} s",
                timeout.as_secs()
            ),
        )),
    }
}
