//! How setting up a server fails: the few things this crate can refuse before any peer
//! connects (a bad flag value, an unreadable certificate, an address it cannot bind). A
//! command maps each kind to its own exit status; a connection's failures never come here,
//! they end that connection only.

/// Why a server could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    /// A flag's value is wrong (an address without a port, a TLS option without its pair).
    #[error("{0}")]
    Usage(String),
    /// A file named by a flag is missing, unreadable or malformed (certificates, keys).
    #[error("{0}")]
    Input(String),
    /// The operating system refused (an address in use, a port it will not bind).
    #[error("{0}")]
    Os(String),
}
