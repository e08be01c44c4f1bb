//! The limits every server command takes (`tap`, `quorum serve`): how many connections, how
//! long one may sit idle, how much memory all of them may hold; and the process's
//! file-descriptor limit, which bounds the first.

use super::budget::DEFAULT_BUDGET;
use std::time::Duration;

/// File descriptors kept for everything but connections: listeners (one per broker with
/// `--rewrite-brokers`), the log, the runtime's own.
const RESERVED_FDS: usize = 64;

/// `--max-connections`, `--idle-timeout`, `--memory-budget`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerLimits {
    /// Most connections open at once. When another arrives, the open connection that has
    /// gone longest without a complete request is closed to make room. Default: what the
    /// file-descriptor limit allows (raised to its hard limit at start), less a reserve.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub max_connections: Option<u64>,
    /// Close a connection after this many seconds without a byte either way; 0 never does.
    /// The default is Kafka's broker's own (connections.max.idle.ms, 10 minutes).
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub idle_timeout: u64,
    /// Bytes that all connections together may hold: frames read and not yet written, frames
    /// kept to be decoded and logged, requests awaiting their responses. When it is spent,
    /// reading waits (backpressure) and frames are forwarded without being decoded; bytes are
    /// never dropped. Accepts K, M, G (powers of 1024) and KiB, MiB, GiB.
    #[arg(long, value_name = "BYTES", default_value = "256MiB", value_parser = parse_bytes)]
    pub memory_budget: usize,
}

impl ServerLimits {
    /// The idle timeout, `None` for never.
    pub fn idle_timeout(&self) -> Option<Duration> {
        (self.idle_timeout > 0).then(|| Duration::from_secs(self.idle_timeout))
    }

    /// `--max-connections`, or the default for a command that uses `fds_per_connection`
    /// file descriptors per connection under a limit of `fd_limit`.
    pub fn max_connections(&self, fd_limit: usize, fds_per_connection: usize) -> usize {
        match self.max_connections {
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
            None => default_max_connections(fd_limit, fds_per_connection),
        }
    }
}

/// The connections `fd_limit` descriptors allow at `per_connection` each, after the reserve.
pub fn default_max_connections(fd_limit: usize, per_connection: usize) -> usize {
    (fd_limit.saturating_sub(RESERVED_FDS) / per_connection.max(1)).max(1)
}

/// `256MiB`, `1G`, `4096`: bytes, with an optional binary suffix.
pub fn parse_bytes(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let number: usize = number
        .parse()
        .map_err(|_| format!("{text:?} is not a number of bytes (such as 268435456 or 256MiB)"))?;
    let shift = match suffix.trim() {
        "" | "B" => 0,
        "K" | "KiB" | "k" => 10,
        "M" | "MiB" => 20,
        "G" | "GiB" => 30,
        other => {
            return Err(format!(
                "unknown unit {other:?} in {text:?} (use K, M, G, KiB, MiB or GiB)"
            ))
        }
    };
    let bytes = number
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))?;
    if bytes < 1 << 20 {
        return Err(format!("{text:?} is below the smallest budget, 1MiB"));
    }
    Ok(bytes)
}

/// Raises the soft file-descriptor limit to the hard one (as Go's runtime and most servers
/// do) and returns the limit now in force.
pub fn raise_fd_limit() -> usize {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable `rlimit` that lives for the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: `raised` is a valid `rlimit` that lives for the call.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit.rlim_cur = limit.rlim_max;
        }
    }
    usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX)
}

#[allow(dead_code)]
const _: usize = DEFAULT_BUDGET;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_sizes() {
        assert_eq!(parse_bytes("256MiB"), Ok(256 << 20));
        assert_eq!(parse_bytes("1G"), Ok(1 << 30));
        assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
        assert!(parse_bytes("12").unwrap_err().contains("smallest"));
        assert!(parse_bytes("3 parsecs").unwrap_err().contains("unit"));
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("99999999999999999999G").is_err());
    }

    #[test]
    fn the_default_cap_leaves_descriptors_over() {
        assert_eq!(default_max_connections(1024, 2), 480);
        assert_eq!(default_max_connections(20_000, 1), 19_936);
        assert_eq!(default_max_connections(10, 2), 1);
    }

    #[test]
    fn the_fd_limit_is_read() {
        assert!(raise_fd_limit() >= 64);
    }
}
