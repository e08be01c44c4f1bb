//! The fuzz targets' allocation ceiling fires: a test binary with the allocator installed at
//! the fuzz targets' limit runs itself again as a child that asks for one byte over it, by
//! `alloc`, `alloc_zeroed` and a growing `realloc`, and the child dies of SIGABRT, naming
//! the size. At the limit, a request is served, and counted. The allocator is installed as
//! the fuzz targets that count install it, around the counting allocator.

use kafka_codec_test_support::alloc_limit::LimitedAllocator;
use kafka_codec_test_support::counting_alloc::{measure, CountingAllocator};
use std::hint::black_box;
use std::process::Command;

/// The fuzz targets' limit (fuzz/fuzz_targets/*.rs, `-malloc_limit_mb=64` in .ci/fuzz.sh).
const LIMIT: usize = 64 << 20;

#[global_allocator]
static ALLOCATOR: LimitedAllocator<CountingAllocator> =
    LimitedAllocator::wrapping(CountingAllocator::new(), LIMIT);

/// Set in the child: which way to ask for `LIMIT + 1` bytes.
const CHILD: &str = "ALLOC_LIMIT_CHILD";

/// In the child, asks for `LIMIT + 1` bytes the way `CHILD` names. Only the child half of
/// the test below, which runs it by name.
#[test]
#[ignore = "the child process of a_request_over_the_limit_aborts_the_process"]
fn child_over_the_limit() {
    let Ok(how) = std::env::var(CHILD) else {
        return;
    };
    match how.as_str() {
        "alloc" => drop(black_box(Vec::<u8>::with_capacity(LIMIT + 1))),
        "alloc_zeroed" => drop(black_box(vec![0u8; LIMIT + 1])),
        "realloc" => {
            let mut block = black_box(Vec::<u8>::with_capacity(16));
            block.reserve_exact(LIMIT + 1);
            drop(black_box(block));
        }
        // A quiet `Err` would hide the request: the ceiling aborts before `try_reserve` sees
        // a failure.
        "try_reserve" => {
            let mut block = Vec::<u8>::new();
            let _ = black_box(block.try_reserve_exact(LIMIT + 1));
        }
        other => panic!("unknown {CHILD}={other}"),
    }
    println!("child survived");
}

#[test]
fn a_request_over_the_limit_aborts_the_process() {
    let exe = std::env::current_exe().expect("the test binary");
    for how in ["alloc", "alloc_zeroed", "realloc", "try_reserve"] {
        let out = Command::new(&exe)
            .args([
                "--exact",
                "child_over_the_limit",
                "--ignored",
                "--nocapture",
            ])
            .env(CHILD, how)
            .output()
            .expect("run the child");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && !stdout.contains("child survived"),
            "{how}: the child survived a request over the limit: {stdout}{stderr}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(out.status.signal(), Some(6), "{how}: not SIGABRT: {stderr}");
        }
        let expected = format!(
            "LimitedAllocator: an allocation of {} bytes, over the limit of {LIMIT} bytes",
            LIMIT + 1
        );
        assert!(stderr.contains(&expected), "{how}: {stderr}");
    }
}

#[test]
fn a_request_at_the_limit_is_served() {
    assert_eq!(ALLOCATOR.limit(), LIMIT);
    // Not touched, so the pages are never faulted in.
    let (capacity, stats) = measure(|| black_box(Vec::<u8>::with_capacity(LIMIT)).capacity());
    assert_eq!(capacity, LIMIT);
    assert_eq!(stats.largest, LIMIT);
}
