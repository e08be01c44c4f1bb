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
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::sync::{mpsc, Arc, Mutex};
use std::task::{ready, Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

/// Most bytes one read takes.
pub const CHUNK: usize = 64 * 1024;

/// Plain TCP, or TLS over it (and which end of it the tool is, to explain its failures).
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::TlsStream<TcpStream>>, tls::Side),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_read(cx, buf),
            Stream::Tls(tls, _) => Pin::new(tls.as_mut()).poll_read(cx, buf),
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
            Stream::Tls(tls, _) => Pin::new(tls.as_mut()).poll_write(cx, data),
        }
    }

    // Forwarded, so that an answer of several buffers (a frame's head and the record
    // batches it shares, `kafka_codec::wire::Segments`) goes out in one system call and one
    // TCP segment rather than one write (and, with no Nagle delay, one packet) per buffer.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_write_vectored(cx, bufs),
            Stream::Tls(tls, _) => Pin::new(tls.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(tcp) => tcp.is_write_vectored(),
            Stream::Tls(tls, _) => tls.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            Stream::Tls(tls, _) => Pin::new(tls.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            Stream::Tls(tls, _) => Pin::new(tls.as_mut()).poll_shutdown(cx),
        }
    }
}

impl Stream {
    /// The socket's descriptor, for [`peer_closed`].
    pub fn raw_fd(&self) -> RawFd {
        match self {
            Stream::Plain(tcp) => tcp.as_raw_fd(),
            Stream::Tls(tls, _) => tls.get_ref().0.as_raw_fd(),
        }
    }

    /// Reads what has arrived, as [`read_chunk`] does, a TLS failure in words.
    pub async fn read_chunk(&mut self) -> io::Result<Bytes> {
        let side = match self {
            Stream::Tls(_, side) => Some(*side),
            Stream::Plain(_) => None,
        };
        read_chunk(self).await.map_err(|e| match side {
            Some(side) => in_words(e, side),
            None => e,
        })
    }

    /// The subject of the certificate the client presented, on a TLS listener that asked
    /// for one.
    pub fn client_subject(&self) -> Option<String> {
        match self {
            Stream::Tls(tls, _) => match tls.as_ref() {
                tokio_rustls::TlsStream::Server(server) => tls::client_subject(server.get_ref().1),
                tokio_rustls::TlsStream::Client(_) => None,
            },
            Stream::Plain(_) => None,
        }
    }
}

/// How the peer of a socket has closed, seen without reading from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerClosed {
    /// It shut down its sending side (bytes it sent before may still wait unread).
    Sending,
    /// The connection failed or was reset.
    Connection,
}

/// Whether the peer of socket `fd` has closed, without reading: for a side that has stopped
/// reading (backpressure) and must still notice that its peer went away.
///
/// `fd` must be a socket the caller keeps open for the duration of the call.
pub fn peer_closed(fd: RawFd) -> Option<PeerClosed> {
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLRDHUP,
        revents: 0,
    };
    // SAFETY: `poll` points to one valid, writable `pollfd` for the duration of the call, and
    // a timeout of 0 makes the call return at once. An fd that is not open is reported in
    // `revents` (POLLNVAL), not undefined behaviour.
    let ready = unsafe { libc::poll(&mut poll, 1, 0) };
    if ready <= 0 {
        return None;
    }
    if poll.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
        Some(PeerClosed::Connection)
    } else if poll.revents & libc::POLLRDHUP != 0 {
        Some(PeerClosed::Sending)
    } else {
        None
    }
}

/// A TLS failure on an established connection (an alert the peer sent after the handshake,
/// such as a client certificate refused under TLS 1.3) in words; other errors as they are.
fn in_words(error: io::Error, side: tls::Side) -> io::Error {
    if tls::explain::tls_error(&error).is_some() {
        io::Error::new(error.kind(), tls::explain::explain_io(&error, side, false))
    } else {
        error
    }
}

/// The reading half of a [`Stream`]: plain TCP halves need no lock and can wait for bytes
/// without a buffer; TLS shares its session between the halves.
pub enum ReadHalf {
    Plain(tokio::net::tcp::OwnedReadHalf),
    Tls(tokio::io::ReadHalf<Stream>, tls::Side),
}

/// The writing half of a [`Stream`].
pub enum WriteHalf {
    Plain(tokio::net::tcp::OwnedWriteHalf),
    Tls(tokio::io::WriteHalf<Stream>),
}

impl Stream {
    /// The stream as two halves, for a pump each way.
    pub fn split(self) -> (ReadHalf, WriteHalf) {
        match self {
            Stream::Plain(tcp) => {
                let (read, write) = tcp.into_split();
                (ReadHalf::Plain(read), WriteHalf::Plain(write))
            }
            Stream::Tls(tls, side) => {
                let (read, write) = tokio::io::split(Stream::Tls(tls, side));
                (ReadHalf::Tls(read, side), WriteHalf::Tls(write))
            }
        }
    }
}

impl ReadHalf {
    /// Reads what has arrived, up to [`CHUNK`] bytes; empty at the end of the stream. While
    /// it waits it holds no buffer: plain TCP waits for readiness first, then reads into a
    /// buffer made for the bytes; TLS reads through [`read_chunk`], and a TLS failure (an
    /// alert the peer sent after the handshake: a client certificate refused under TLS 1.3)
    /// comes back in words.
    pub async fn read_chunk(&mut self) -> io::Result<Bytes> {
        match self {
            ReadHalf::Plain(tcp) => loop {
                tcp.readable().await?;
                let mut buf = bytes::BytesMut::with_capacity(CHUNK);
                match tcp.try_read_buf(&mut buf) {
                    Ok(_) => return Ok(buf.freeze()),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    Err(e) => return Err(e),
                }
            },
            ReadHalf::Tls(tls, side) => read_chunk(tls).await.map_err(|e| in_words(e, *side)),
        }
    }
}

impl AsyncWrite for WriteHalf {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            WriteHalf::Plain(tcp) => Pin::new(tcp).poll_write(cx, data),
            WriteHalf::Tls(tls) => Pin::new(tls).poll_write(cx, data),
        }
    }

    // Forwarded for the reason `Stream` forwards it.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            WriteHalf::Plain(tcp) => Pin::new(tcp).poll_write_vectored(cx, bufs),
            WriteHalf::Tls(tls) => Pin::new(tls).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            WriteHalf::Plain(tcp) => tcp.is_write_vectored(),
            WriteHalf::Tls(tls) => tls.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            WriteHalf::Plain(tcp) => Pin::new(tcp).poll_flush(cx),
            WriteHalf::Tls(tls) => Pin::new(tls).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            WriteHalf::Plain(tcp) => Pin::new(tcp).poll_shutdown(cx),
            WriteHalf::Tls(tls) => Pin::new(tls).poll_shutdown(cx),
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

/// A name to look up and where the answer goes.
type Lookup = (String, oneshot::Sender<io::Result<Vec<SocketAddr>>>);

/// Host names to addresses, on one thread started with the server (so no lookup ever has
/// to start a thread), with answers kept for a while.
pub struct Resolver {
    lookups: Mutex<mpsc::Sender<Lookup>>,
    cache: Mutex<HashMap<String, (Instant, Vec<SocketAddr>)>>,
}

/// How long an answer is reused.
const CACHE_FOR: Duration = Duration::from_secs(30);

impl Resolver {
    pub fn start() -> io::Result<Arc<Resolver>> {
        let (lookups, requests) = mpsc::channel::<Lookup>();
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
                        let why = tls::explain::explain_io(&e, tls.side, true);
                        io::Error::new(e.kind(), format!("TLS handshake failed: {why}"))
                    })?;
                    return Ok((Stream::Tls(Box::new(stream.into()), tls.side), socket));
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
    acceptor: &tls::Acceptor,
    tcp: TcpStream,
    timeout: Duration,
) -> io::Result<Stream> {
    let handshake = async {
        // The first bytes, left in the socket for the handshake: a client that does not
        // start TLS is told from what it sent.
        let mut first = [0u8; 8];
        let seen = tcp.peek(&mut first).await?;
        if seen == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the client closed the connection before starting TLS",
            ));
        }
        let first = &first[..seen];
        match acceptor.acceptor.accept(tcp).await {
            Ok(stream) => Ok(Stream::Tls(Box::new(stream.into()), acceptor.side)),
            Err(e) => {
                let why = if first[0] != 0x16 {
                    tls::explain::not_tls_client(Some(first))
                } else {
                    tls::explain::explain_io(&e, acceptor.side, true)
                };
                Err(io::Error::new(
                    e.kind(),
                    format!("TLS handshake with the client failed: {why}"),
                ))
            }
        }
    };
    match tokio::time::timeout(timeout, handshake).await {
        Ok(done) => done,
        Err(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "the client did not finish the TLS handshake within {} s",
                timeout.as_secs()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_that_closes_is_seen_without_reading() {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        let fd = server.as_raw_fd();
        assert_eq!(peer_closed(fd), None);
        // Unread bytes, then the peer stops sending: seen although nothing was read.
        client.write_all(b"unread").unwrap();
        client.shutdown(std::net::Shutdown::Write).unwrap();
        let start = std::time::Instant::now();
        while peer_closed(fd).is_none() && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(peer_closed(fd), Some(PeerClosed::Sending));
        drop(server);
    }
}
