//! Binding a server's listening socket from the `HOST:PORT` a user typed.

use crate::error::SetupError;
use std::net::{SocketAddr, TcpListener};

/// Listens on `address` (port 0: a free one) for the address given to `flag`, which the
/// errors name; the address it got. The listener is non-blocking, for a tokio runtime to
/// take over.
pub fn listen_as(flag: &str, address: &str) -> Result<(TcpListener, SocketAddr), SetupError> {
    let Some((host, port)) = address.rsplit_once(':') else {
        return Err(SetupError::Usage(format!(
            "{flag} {address:?} needs a port: HOST:PORT (port 0 takes any free port)"
        )));
    };
    if port.parse::<u16>().is_err() {
        return Err(SetupError::Usage(format!(
            "{flag} {address:?}: {port:?} is not a port (0 to 65535)"
        )));
    }
    if host.is_empty() {
        return Err(SetupError::Usage(format!(
            "{flag} {address:?} needs a host, such as 127.0.0.1:{port} or 0.0.0.0:{port}"
        )));
    }
    let failed = |e: std::io::Error| SetupError::Os(format!("cannot listen on {address}: {e}"));
    let listener = TcpListener::bind(address).map_err(failed)?;
    let local = listener.local_addr().map_err(failed)?;
    listener.set_nonblocking(true).map_err(failed)?;
    Ok((listener, local))
}
