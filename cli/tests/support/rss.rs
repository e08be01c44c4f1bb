//! The peak resident set size of a child process, as `wait4` reports it: how the memory
//! tests measure the binary (and this test binary run again as a child).

use std::process::{Command, Stdio};

/// Runs `command` to its end and returns its maximum resident set size in bytes; fails the
/// test if it does not exit 0.
pub fn peak_rss(mut command: Command, what: &str) -> u64 {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
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
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{what}: exited with status {status:#x}"
    );
    // Linux reports kibibytes.
    usage.ru_maxrss as u64 * 1024
}
