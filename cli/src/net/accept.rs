//! Accepting connections without spinning or dying when the OS says no.
//!
//! `accept` fails for two kinds of reasons: the connection went away before it was taken
//! (tried again at once), or the process or system is out of something (file descriptors,
//! socket buffers, memory). For the second kind the listener backs off, from 10 ms doubling
//! to 1 s, and reports the first failure of a run and how many there were once accepting
//! works again: one line per episode, not one per attempt.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

const FIRST_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_secs(1);

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

/// A listener that backs off when accepting fails.
pub struct Acceptor {
    listener: TcpListener,
    /// Failures in the current run of them, and the first one.
    failures: u64,
    first: Option<io::Error>,
}

impl Acceptor {
    pub fn new(listener: TcpListener) -> Self {
        Acceptor {
            listener,
            failures: 0,
            first: None,
        }
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The next connection. `report` gets a line when a run of failures starts and when it
    /// ends.
    pub async fn accept(&mut self, report: impl Fn(String)) -> (TcpStream, SocketAddr) {
        let mut backoff = FIRST_BACKOFF;
        loop {
            match self.listener.accept().await {
                Ok(accepted) => {
                    if let Some(first) = self.first.take() {
                        report(format!(
                            "accepting again after {} failed attempts (the first: {first})",
                            self.failures
                        ));
                        self.failures = 0;
                    }
                    return accepted;
                }
                Err(e) if connection_gone(&e) => continue,
                Err(e) => {
                    self.failures += 1;
                    if self.first.is_none() {
                        report(format!(
                            "cannot accept connections ({e}); backing off and retrying, \
                             open connections are served meanwhile"
                        ));
                        self.first = Some(e);
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }
}
