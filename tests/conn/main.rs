//! Connections: the sans-IO client and server conversations, and the tokio codecs over them
//! (with the `tokio` feature, which the crate's own dev-dependency turns on for tests).

mod conn_tokio;
mod conversations;
