//! The server plumbing of kafka-codec's long-running servers (the CLI's `tap` and `quorum
//! serve`, and the in-memory cluster): what they share to stay up whatever their
//! peers do: one memory budget for the process ([`budget`]), a cap on connections with
//! eviction of the least useful ([`registry`]), an accept loop that backs off when the OS
//! refuses ([`accept`]), TLS ([`tls`]), connections that hold no buffer while idle
//! ([`stream`]), frames each read into a buffer of its own ([`frames`]), and the flags
//! that set all of it ([`limits`]); what they count
//! ([`metrics`]) and the HTTP endpoint that serves it to Prometheus ([`scrape`]); binding a
//! listener from a typed `HOST:PORT` ([`listen`]), naming another protocol's bytes where a
//! Kafka frame was expected ([`other_protocol`]), and how setting up fails ([`SetupError`]).
//!
//! Connections are tokio tasks, not threads: no thread is started after the command has
//! started, so a refused thread can only fail the start, never a connection.

pub mod accept;
pub mod budget;
pub mod error;
pub mod frames;
pub mod limits;
pub mod listen;
pub mod metrics;
pub mod other_protocol;
pub mod registry;
pub mod scrape;
pub mod stream;
pub mod tls;

pub use error::SetupError;
