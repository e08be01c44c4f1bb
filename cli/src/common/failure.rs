//! How a run fails and exits. A module of its own, below the other modules of `common` that
//! return it, so that their imports point one way (they import it from here, `common`
//! re-exports it).

use std::process::ExitCode;

/// Exit status of a run whose input was malformed or unreadable, or whose conversation with
/// a server failed.
pub const EXIT_BAD_INPUT: u8 = 1;
/// Exit status of a run whose command line was wrong.
pub const EXIT_USAGE: u8 = 2;

/// Why a run did not succeed.
#[derive(Debug)]
pub enum Failure {
    /// The command line is wrong: one line on stderr, exit 2.
    Usage(String),
    /// The input is malformed or unreadable: one line on stderr, exit 1.
    Input(String),
    /// A server could not be reached, or answered with an error or something unreadable:
    /// one line on stderr, exit 1.
    Peer(String),
    /// Standard output went away (a closed pipe): exit 1 without a message.
    Quiet,
}

impl Failure {
    /// Reports the failure on stderr and gives the exit status.
    pub fn exit(self) -> ExitCode {
        match self {
            Failure::Usage(message) => {
                eprintln!("kafka-codec: {message}");
                ExitCode::from(EXIT_USAGE)
            }
            Failure::Input(message) | Failure::Peer(message) => {
                eprintln!("kafka-codec: {message}");
                ExitCode::from(EXIT_BAD_INPUT)
            }
            Failure::Quiet => ExitCode::from(EXIT_BAD_INPUT),
        }
    }
}

/// The server crate's setup errors, as a run reports them: a bad flag is a usage error, an
/// unreadable file bad input, a refusal of the operating system a failed conversation.
impl From<kafka_codec_server::SetupError> for Failure {
    fn from(error: kafka_codec_server::SetupError) -> Self {
        use kafka_codec_server::SetupError;
        match error {
            SetupError::Usage(message) => Failure::Usage(message),
            SetupError::Input(message) => Failure::Input(message),
            SetupError::Os(message) => Failure::Peer(message),
        }
    }
}
