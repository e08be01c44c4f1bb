//! Accepting connections without spinning or dying when the OS says no.
//!
//! `accept` fails for two kinds of reasons: the connection went away before it was taken
//! (tried again at once), or the process or system is out of something (file descriptors,
//! socket buffers, memory). For the second kind the listener backs off, from 10 ms doubling
//! to 1 s, and reports a run of failures once when it starts and once when it is over (no
//! failure for `QUIET`): a few lines per episode, not one per attempt, even while single
//! connections come and go at the edge of the limit.

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};

const FIRST_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// How long accepting must go without failing before a run of failures is over.
const QUIET: Duration = Duration::from_secs(10);

/// Failures that say only that one connection is gone: take the next.
fn connection_gone(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    ) || matches!(error.raw_os_error(), Some(libc::EPROTO | libc::EPERM))
}

/// A run of failures.
struct Episode {
    first: io::Error,
    started: Instant,
    last: Instant,
    failures: u64,
    backoff: Duration,
}

/// A listener that backs off when accepting fails.
pub struct Acceptor {
    listener: TcpListener,
    episode: Option<Episode>,
}

impl Acceptor {
    pub fn new(listener: TcpListener) -> Self {
        Acceptor {
            listener,
            episode: None,
        }
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The next connection. `report` gets a line when a run of failures starts and when it
    /// is over.
    pub async fn accept(&mut self, report: impl Fn(String)) -> (TcpStream, SocketAddr) {
        loop {
            let accepted = self.listener.accept().await;
            let now = Instant::now();
            if let Some(episode) = &self.episode {
                if now.duration_since(episode.last) >= QUIET {
                    report(format!(
                        "accepting again: {} attempts failed over {} s (the first: {})",
                        episode.failures,
                        episode.last.duration_since(episode.started).as_secs(),
                        episode.first
                    ));
                    self.episode = None;
                }
            }
            match accepted {
                Ok(accepted) => return accepted,
                Err(e) if connection_gone(&e) => continue,
                Err(e) => {
                    let backoff = match &mut self.episode {
                        Some(episode) => {
                            episode.failures += 1;
                            episode.last = now;
                            episode.backoff = (episode.backoff * 2).min(MAX_BACKOFF);
                            episode.backoff
                        }
                        None => {
                            report(format!(
                                "cannot accept connections ({e}); backing off and retrying, \
                                 open connections are served meanwhile"
                            ));
                            self.episode = Some(Episode {
                                first: e,
                                started: now,
                                last: now,
                                failures: 1,
                                backoff: FIRST_BACKOFF,
                            });
                            FIRST_BACKOFF
                        }
                    };
                    tokio::time::sleep(backoff).await;
                }
            }
        }
    }
}
