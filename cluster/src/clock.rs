//! The cluster's one clock. Every session, rebalance, transaction, fetch-session,
//! reassignment and long-poll deadline reads "now" here, so that on a runtime whose tokio clock
//! is paused (`tokio::time::pause`, a test's `start_paused`) a 45 s session timeout passes in
//! simulated time, together with the `tokio::time::sleep_until` that waits for it. Outside a
//! paused runtime this is the monotonic clock. Wall-clock timestamps (record and log times) and
//! the latency metrics stay on the real clocks.

use std::time::Instant;

/// Now, on the runtime's (possibly paused) clock.
pub fn now() -> Instant {
    tokio::time::Instant::now().into_std()
}
