//! One memory budget for the whole process (`--memory-budget`): every byte a server command
//! holds for a connection — frames read and not yet written, frames kept for the log,
//! requests awaiting their responses, decode state — is charged here before it is held, so
//! that all connections together stay within the budget whatever their peers send.
//!
//! Two kinds of charge:
//! - **needed** ([`Budget::reserve`]): bytes a connection must hold to make progress (a read
//!   chunk until it is written, a partial request `quorum serve` must read whole). When the
//!   budget is spent the caller waits: backpressure, never a dropped byte.
//! - **optional** ([`Budget::try_reserve_optional`]): bytes held only to log or decode. They
//!   are refused once less than a quarter of the budget is left, so that logging can never
//!   starve forwarding; the caller then logs less (a frame "skipped: memory budget").
//!
//! The budget counts in units of [`UNIT`] bytes on a fair (FIFO) tokio semaphore.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, Semaphore};

/// Granularity of charges: every charge is rounded up to a multiple of it, and even an empty
/// frame costs one unit, so that a flood of zero-length frames is charged too.
pub const UNIT: usize = 64;

/// The default `--memory-budget`: 256 MiB.
pub const DEFAULT_BUDGET: usize = 256 << 20;

/// How long a needed charge waits before the budget asks for a connection to be evicted.
const PRESSURE_AFTER: Duration = Duration::from_millis(250);

/// The process's memory budget.
#[derive(Debug)]
pub struct Budget {
    units: Semaphore,
    limit_units: usize,
    /// Notified when a needed charge has waited [`PRESSURE_AFTER`]: the server closes the
    /// connection that has gone longest without a complete request and holds memory.
    pressure: Notify,
    /// Needed charges that had to wait, for the log.
    waits: AtomicU64,
}

fn units(bytes: usize) -> usize {
    bytes.div_ceil(UNIT).max(1)
}

impl Budget {
    /// A budget of `bytes` (rounded up to [`UNIT`]).
    pub fn new(bytes: usize) -> Arc<Budget> {
        let limit_units = units(bytes);
        Arc::new(Budget {
            units: Semaphore::new(limit_units),
            limit_units,
            pressure: Notify::new(),
            waits: AtomicU64::new(0),
        })
    }

    /// The budget in bytes.
    pub fn limit(&self) -> usize {
        self.limit_units * UNIT
    }

    /// Bytes charged now.
    pub fn in_use(&self) -> usize {
        (self.limit_units - self.units.available_permits()) * UNIT
    }

    /// Needed charges that had to wait so far.
    #[cfg(test)]
    fn waits(&self) -> u64 {
        self.waits.load(Ordering::Relaxed)
    }

    /// Resolves when memory is short: a needed charge has been waiting for a while.
    pub async fn pressure(&self) {
        self.pressure.notified().await;
    }

    /// Charges `bytes` the caller must hold to make progress, waiting until they fit; `None`
    /// only if they are more than the whole budget.
    pub async fn reserve(self: &Arc<Self>, bytes: usize) -> Option<Charge> {
        let n = units(bytes);
        if n > self.limit_units {
            return None;
        }
        let n32 = u32::try_from(n).ok()?;
        if let Ok(permit) = self.units.try_acquire_many(n32) {
            permit.forget();
            return Some(self.charge(n));
        }
        self.waits.fetch_add(1, Ordering::Relaxed);
        let acquire = self.units.acquire_many(n32);
        tokio::pin!(acquire);
        loop {
            tokio::select! {
                permit = &mut acquire => {
                    // The semaphore is never closed.
                    permit.ok()?.forget();
                    return Some(self.charge(n));
                }
                () = tokio::time::sleep(PRESSURE_AFTER) => self.pressure.notify_one(),
            }
        }
    }

    /// Charges `bytes` at once if they fit, whatever is left after them.
    pub fn try_reserve(self: &Arc<Self>, bytes: usize) -> Option<Charge> {
        let n = units(bytes);
        let permit = self.units.try_acquire_many(u32::try_from(n).ok()?).ok()?;
        permit.forget();
        Some(self.charge(n))
    }

    /// Charges `bytes` held only to log or decode: refused unless a quarter of the budget
    /// stays free for needed charges.
    pub fn try_reserve_optional(self: &Arc<Self>, bytes: usize) -> Option<Charge> {
        let n = units(bytes);
        let floor = self.limit_units / 4;
        if self.units.available_permits() < n.checked_add(floor)? {
            return None;
        }
        self.try_reserve(bytes)
    }

    /// An empty charge, to grow later.
    pub fn none(self: &Arc<Self>) -> Charge {
        Charge {
            budget: Arc::clone(self),
            units: 0,
        }
    }

    fn charge(self: &Arc<Self>, units: usize) -> Charge {
        Charge {
            budget: Arc::clone(self),
            units,
        }
    }
}

/// Bytes charged to the budget, given back when dropped.
#[derive(Debug)]
pub struct Charge {
    budget: Arc<Budget>,
    units: usize,
}

impl Charge {
    /// Bytes charged (a multiple of [`UNIT`]).
    pub fn bytes(&self) -> usize {
        self.units * UNIT
    }

    /// Grows the charge to cover `bytes` in all, as an optional charge; `false` (and the
    /// charge unchanged) if the budget cannot take it.
    pub fn try_grow_optional(&mut self, bytes: usize) -> bool {
        let want = units(bytes);
        if want <= self.units {
            return true;
        }
        match self.budget.try_reserve_optional((want - self.units) * UNIT) {
            Some(more) => {
                self.absorb(more);
                true
            }
            None => false,
        }
    }

    /// Adds another charge of the same budget to this one.
    pub fn absorb(&mut self, mut other: Charge) {
        self.units += std::mem::take(&mut other.units);
    }

    /// Gives back everything above `bytes`.
    pub fn shrink_to(&mut self, bytes: usize) {
        let keep = if bytes == 0 { 0 } else { units(bytes) };
        if keep < self.units {
            self.budget.units.add_permits(self.units - keep);
            self.units = keep;
        }
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        if self.units > 0 {
            self.budget.units.add_permits(self.units);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    #[test]
    fn charges_are_given_back_when_dropped() {
        let budget = Budget::new(4096);
        let a = budget.try_reserve(1000).unwrap();
        assert_eq!(a.bytes(), 1024);
        assert_eq!(budget.in_use(), 1024);
        let empty = budget.try_reserve(0).unwrap();
        assert_eq!(empty.bytes(), UNIT, "an empty frame still costs a unit");
        drop((a, empty));
        assert_eq!(budget.in_use(), 0);
    }

    #[test]
    fn optional_charges_leave_a_quarter_free() {
        let budget = Budget::new(4096);
        let held = budget.try_reserve_optional(3072).unwrap();
        assert!(budget.try_reserve_optional(UNIT).is_none());
        // A needed charge may still take the last quarter.
        let needed = budget.try_reserve(1024).unwrap();
        assert_eq!(budget.in_use(), 4096);
        drop((held, needed));
        let mut grow = budget.none();
        assert!(grow.try_grow_optional(3000));
        assert!(!grow.try_grow_optional(4000));
        assert_eq!(grow.bytes(), 3008);
        grow.shrink_to(100);
        assert_eq!(budget.in_use(), 128);
    }

    #[test]
    fn a_needed_charge_waits_for_room_and_signals_pressure() {
        runtime().block_on(async {
            let budget = Budget::new(1024);
            let held = budget.reserve(1024).await.unwrap();
            assert!(budget.reserve(2048).await.is_none(), "more than the budget");
            let waiting = {
                let budget = Arc::clone(&budget);
                tokio::spawn(async move { budget.reserve(512).await.map(|c| c.bytes()) })
            };
            // Nothing frees memory: the budget asks for an eviction.
            tokio::time::timeout(Duration::from_secs(5), budget.pressure())
                .await
                .expect("pressure is signalled");
            drop(held);
            assert_eq!(waiting.await.unwrap(), Some(512));
            assert_eq!(budget.waits(), 1);
        });
    }
}
