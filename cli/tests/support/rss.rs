//! What a child process used, as `wait4` reports it: how the memory tests measure the
//! binary (and this test binary run again as a child).
//!
//! A caution the numbers need: std starts children with `posix_spawn`, sharing the parent's
//! memory until `exec`, and Linux carries the high-water mark across `exec`, so `ru_maxrss`
//! is at least the parent's RSS when the child started. Keep the parent small (build large
//! inputs in a child of their own), or read `VmHWM` from `/proc` for a child that runs on.

#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Runs `command` to its end and returns its maximum resident set size in bytes; fails the
/// test if it does not exit 0.
pub fn peak_rss(mut command: Command, what: &str) -> u64 {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let usage = wait_usage(child, what);
    assert!(
        usage.succeeded(),
        "{what}: exited with status {:#x}",
        usage.status
    );
    usage.peak_rss
}

/// How a child process ended and what it used, as `wait4` reports it.
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    /// The raw wait status.
    pub status: i32,
    /// The maximum resident set size, in bytes.
    pub peak_rss: u64,
    /// User plus system CPU time.
    pub cpu: Duration,
}

impl Usage {
    /// Whether the child exited with status 0.
    pub fn succeeded(&self) -> bool {
        libc::WIFEXITED(self.status) && libc::WEXITSTATUS(self.status) == 0
    }

    /// Whether the child was killed by a signal (and so did not exit, or panic, on its own).
    pub fn killed_by(&self, signal: i32) -> bool {
        libc::WIFSIGNALED(self.status) && libc::WTERMSIG(self.status) == signal
    }
}

/// Waits for `child` to end and returns its status and resource usage. `child` must not have
/// been waited for.
pub fn wait_usage(child: Child, what: &str) -> Usage {
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: `status` and `usage` are valid, writable and live for the call; `usage` is a
    // plain C struct for which all-zero bytes are a valid value. `pid` is our own child,
    // not yet waited for (`child` is dropped below without `wait`, so std never reaps it
    // again).
    let (reaped, usage) = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let reaped = libc::wait4(pid, &mut status, 0, &mut usage);
        (reaped, usage)
    };
    drop(child);
    assert_eq!(
        reaped,
        pid,
        "{what}: wait4 failed: {}",
        std::io::Error::last_os_error()
    );
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    Usage {
        status,
        // Linux reports kibibytes.
        peak_rss: usage.ru_maxrss as u64 * 1024,
        cpu: time(usage.ru_utime) + time(usage.ru_stime),
    }
}
