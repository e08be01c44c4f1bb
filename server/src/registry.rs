//! The connections a server command holds, so that it can close some of them: at
//! `--max-connections`, and when memory is short, the connection that has gone longest without
//! a complete request is closed first. An honest client sends requests; a peer that connects
//! and sends nothing, or trickles bytes that never make a request, is the one that goes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;
use tokio::sync::Notify;

/// Why a connection was told to close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eviction {
    /// A new connection came while `--max-connections` were open.
    ConnectionCap,
    /// Memory was short (a needed charge waited on `--memory-budget`).
    MemoryBudget,
}

impl Eviction {
    fn from_code(code: u8) -> Option<Eviction> {
        match code {
            1 => Some(Eviction::ConnectionCap),
            2 => Some(Eviction::MemoryBudget),
            _ => None,
        }
    }

    fn code(self) -> u8 {
        match self {
            Eviction::ConnectionCap => 1,
            Eviction::MemoryBudget => 2,
        }
    }

    /// What the log says.
    pub fn describe(self, max_connections: usize) -> String {
        match self {
            Eviction::ConnectionCap => format!(
                "closed by the tool: --max-connections ({max_connections}) were open and this \
                 one had gone longest without a complete request"
            ),
            Eviction::MemoryBudget => "closed by the tool: --memory-budget was spent and this \
                                       one had gone longest without a complete request"
                .to_owned(),
        }
    }
}

/// What the registry and the connection's task share.
#[derive(Debug)]
struct Shared {
    /// Milliseconds since the registry started at the last complete request (at accept
    /// until the first).
    last_request: AtomicU64,
    /// Milliseconds since the registry started at the last byte either way.
    last_activity: AtomicU64,
    /// Bytes the connection holds on the budget, as far as it reports them.
    held: AtomicUsize,
    /// 0 while open; an [`Eviction`] code once told to close.
    evicted: AtomicU8,
    close: Notify,
}

/// The open connections of one server command.
#[derive(Debug)]
pub struct Registry {
    max: usize,
    /// Where "now" comes from: the monotonic clock, or the one a caller gives (the
    /// in-memory cluster's, paused in its tests, so an idle timeout passes in simulated time).
    clock: fn() -> Instant,
    started: Instant,
    members: Mutex<HashMap<u64, Arc<Shared>>>,
}

impl Registry {
    pub fn new(max_connections: usize) -> Arc<Registry> {
        Registry::with_clock(max_connections, Instant::now)
    }

    /// A registry whose activity times (and so [`Member::last_activity`]) read `clock`.
    pub fn with_clock(max_connections: usize, clock: fn() -> Instant) -> Arc<Registry> {
        Arc::new(Registry {
            max: max_connections.max(1),
            clock,
            started: clock(),
            members: Mutex::new(HashMap::new()),
        })
    }

    pub fn max(&self) -> usize {
        self.max
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.members().len()
    }

    fn members(&self) -> MutexGuard<'_, HashMap<u64, Arc<Shared>>> {
        self.members.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn now_ms(&self) -> u64 {
        let elapsed = (self.clock)().saturating_duration_since(self.started);
        u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
    }

    /// Registers connection `id`; at the cap, first tells the connection that has gone
    /// longest without a complete request to close (whose id is returned).
    pub fn join(self: &Arc<Self>, id: u64) -> (Member, Option<u64>) {
        let now = self.now_ms();
        let shared = Arc::new(Shared {
            last_request: AtomicU64::new(now),
            last_activity: AtomicU64::new(now),
            held: AtomicUsize::new(0),
            evicted: AtomicU8::new(0),
            close: Notify::new(),
        });
        let mut members = self.members();
        let open = members
            .values()
            .filter(|m| m.evicted.load(Ordering::Relaxed) == 0)
            .count();
        let evicted = if open >= self.max {
            Self::evict(&members, Eviction::ConnectionCap, |_| true)
        } else {
            None
        };
        members.insert(id, Arc::clone(&shared));
        drop(members);
        let member = Member {
            registry: Arc::clone(self),
            id,
            shared,
        };
        (member, evicted)
    }

    /// Memory is short: tells the connection holding budget that has gone longest without a
    /// complete request to close. Its id, if there was one.
    pub fn evict_for_memory(&self) -> Option<u64> {
        let members = self.members();
        Self::evict(&members, Eviction::MemoryBudget, |m| {
            m.held.load(Ordering::Relaxed) > 0
        })
    }

    fn evict(
        members: &HashMap<u64, Arc<Shared>>,
        why: Eviction,
        eligible: impl Fn(&Shared) -> bool,
    ) -> Option<u64> {
        let (&id, victim) = members
            .iter()
            .filter(|(_, m)| m.evicted.load(Ordering::Relaxed) == 0 && eligible(m))
            .min_by_key(|(&id, m)| (m.last_request.load(Ordering::Relaxed), id))?;
        victim.evicted.store(why.code(), Ordering::Relaxed);
        victim.close.notify_one();
        Some(id)
    }
}

/// One connection's place in the registry; leaves it when dropped.
#[derive(Debug)]
pub struct Member {
    registry: Arc<Registry>,
    id: u64,
    shared: Arc<Shared>,
}

impl Member {
    /// A complete request arrived on this connection.
    pub fn completed_request(&self) {
        let now = self.registry.now_ms();
        self.shared.last_request.store(now, Ordering::Relaxed);
    }

    /// A byte passed, either way (for the idle timeout).
    pub fn touch(&self) {
        let now = self.registry.now_ms();
        self.shared.last_activity.store(now, Ordering::Relaxed);
    }

    /// When the last byte passed either way (or the connection was accepted), on the
    /// registry's clock.
    pub fn last_activity(&self) -> Instant {
        self.registry.started
            + std::time::Duration::from_millis(self.shared.last_activity.load(Ordering::Relaxed))
    }

    /// Reports the bytes this connection holds on the budget (for eviction under memory
    /// pressure).
    pub fn set_held(&self, bytes: usize) {
        self.shared.held.store(bytes, Ordering::Relaxed);
    }

    /// Resolves when the connection is told to close, with why.
    pub async fn evicted(&self) -> Eviction {
        loop {
            if let Some(why) = Eviction::from_code(self.shared.evicted.load(Ordering::Relaxed)) {
                return why;
            }
            self.shared.close.notified().await;
        }
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.registry.members().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn at_the_cap_the_longest_without_a_request_goes_first() {
        let registry = Registry::new(3);
        let (a, none) = registry.join(1);
        assert_eq!(none, None);
        std::thread::sleep(Duration::from_millis(5));
        let (b, _) = registry.join(2);
        std::thread::sleep(Duration::from_millis(5));
        let (c, _) = registry.join(3);
        std::thread::sleep(Duration::from_millis(5));
        // `a` is the oldest but has just sent a request: `b` has waited longest.
        a.completed_request();
        let (d, evicted) = registry.join(4);
        assert_eq!(evicted, Some(2));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(runtime.block_on(b.evicted()), Eviction::ConnectionCap);
        // An evicted connection that has not gone yet does not count against the cap twice.
        let (e, evicted) = registry.join(5);
        assert_eq!(evicted, Some(3));
        drop((b, c));
        assert_eq!(registry.len(), 3);
        drop((a, d, e));
        assert_eq!(registry.len(), 0);
    }

    #[test]
    fn memory_pressure_evicts_only_connections_holding_memory() {
        let registry = Registry::new(10);
        let (idle, _) = registry.join(1);
        let (holder, _) = registry.join(2);
        assert_eq!(registry.evict_for_memory(), None);
        holder.set_held(4096);
        assert_eq!(registry.evict_for_memory(), Some(2));
        assert_eq!(registry.evict_for_memory(), None, "already told to close");
        drop((idle, holder));
    }
}
