//! What every subcommand shares: how a run fails and exits, where input comes from, how
//! output is written, how an API is named on the command line, a records field as JSON, and
//! what bytes that are not Kafka's are (recognised by the server crate, which the tap's and
//! the servers' connections share).

mod api;
mod failure;
mod input;
mod output;
mod records;

pub use api::{parse_api_key, ApiVersionArgs};
pub use failure::Failure;
pub use input::{read_input, BinaryInput, FrameInput};
pub use kafka_codec_server::other_protocol::OtherProtocol;
pub use output::{write_bytes, write_json_with, write_stdout, DiscardJson};
pub use records::{check_records, records_from_json, ExpandRecords};

use std::net::{SocketAddr, TcpListener};

/// A subcommand, ready to run once its arguments are parsed.
pub trait Run {
    /// Does the work, writing results to standard output.
    fn run(self) -> Result<(), Failure>;
}

/// What to do with an error from parsing the command line: `--help` and `--version` print
/// to stdout and succeed; anything else is a usage error of one line. `subcommands` are the
/// ones the command being used offers, for when none was given.
pub fn parse_failure(error: clap::Error, subcommands: &[String]) -> Result<(), Failure> {
    use clap::error::ErrorKind;
    let text = error.render().to_string();
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => write_stdout(text.as_bytes()),
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand | ErrorKind::MissingSubcommand => {
            Err(Failure::Usage(format!(
                "no command given; one of: {}",
                subcommands.join(", ")
            )))
        }
        _ => {
            // clap's first paragraph says what is wrong (a list of missing arguments runs
            // over several lines); the rest (usage, tips) is what `--help` shows in full.
            let mut lines = text.lines().take_while(|line| !line.trim().is_empty());
            let first = lines.next().unwrap_or_default();
            let mut problem = first.strip_prefix("error: ").unwrap_or(first).to_owned();
            let rest: Vec<&str> = lines.map(str::trim).collect();
            if !rest.is_empty() {
                problem = format!("{problem} {}", rest.join(", "));
            }
            Err(Failure::Usage(problem))
        }
    }
}

/// `name` after "a" or "an", as its first letter sounds (API names: "an ApiVersions",
/// "a Metadata").
pub fn with_article(name: &str) -> String {
    let vowel = name
        .chars()
        .next()
        .is_some_and(|c| "AEIOUaeiou".contains(c));
    format!("{} {name}", if vowel { "an" } else { "a" })
}

/// Listens on `address` (port 0: a free one) for a server command; the address it got. The
/// listener is non-blocking, for a tokio runtime to take over.
pub fn listen(address: &str) -> Result<(TcpListener, SocketAddr), Failure> {
    listen_as("--listen", address)
}

/// [`listen`] for the address given to `flag`, which the errors name.
pub fn listen_as(flag: &str, address: &str) -> Result<(TcpListener, SocketAddr), Failure> {
    Ok(kafka_codec_server::listen::listen_as(flag, address)?)
}

/// Writes one line to stderr for a long-running command (a request served, a scrape), and
/// carries on if stderr is gone: `eprintln!` panics when its pipe is closed, which would end
/// the connection being served rather than just the logging. The line is formatted first
/// and written at once: stderr is unbuffered, so writing it as formatted took one system
/// call per piece (about 30 for a line of `kafka-codec cluster`, seen with strace).
pub fn log_line(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut text = line.to_string();
    text.push('\n');
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// `--listen HOST:PORT` split for a server built on the cluster crate (which binds it), with
/// the errors `--listen` gives elsewhere; a bracketed IPv6 host loses its brackets.
pub fn host_and_port(address: &str) -> Result<(&str, u16), Failure> {
    let Some((host, port)) = address.rsplit_once(':') else {
        return Err(Failure::Usage(format!(
            "--listen {address:?} needs a port: HOST:PORT (port 0 takes any free port)"
        )));
    };
    let port = port.parse::<u16>().map_err(|_| {
        Failure::Usage(format!(
            "--listen {address:?}: {port:?} is not a port (0 to 65535)"
        ))
    })?;
    if host.is_empty() {
        return Err(Failure::Usage(format!(
            "--listen {address:?} needs a host, such as 127.0.0.1:{port}"
        )));
    }
    // A bracketed IPv6 literal binds without its brackets.
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    Ok((host, port))
}
