//! `kafka-codec`: decode raw Kafka request and response frames to JSON, encode them back,
//! the same for the record batches of a `records` field, list the APIs this build knows, and
//! serve or describe a KRaft quorum.
//!
//! Layout: one module per subcommand in `commands/`, each with its own arguments and
//! `--help`; what they share (input, hex, output, exit status, naming an API) in `common/`.
//! A new subcommand is a new module and one line in [`Command`].

mod commands;
mod common;

use clap::{CommandFactory, Parser, Subcommand};
use common::{parse_failure, Failure, Run};
use std::ffi::OsString;
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "kafka-codec",
    version = version(),
    about = "Decode and encode raw Apache Kafka frames and record batches as JSON; run a Kafka \
             cluster in memory; serve and \
             describe a KRaft quorum",
    after_help = "\
Examples:
  kafka-codec decode request --hex frame.hex
  kafka-codec decode response --api-key DescribeQuorum --api-version 2 --size-prefixed frame.bin
  kafka-codec decode request --hex frame.hex | kafka-codec encode request --hex -
  kafka-codec records decode records.bin
  kafka-codec quorum serve --listen 127.0.0.1:9093
  kafka-codec quorum describe --bootstrap-controller 127.0.0.1:9093 --replication
  kafka-codec cluster --brokers 3 --listen 127.0.0.1:9092

Exit status: 0 on success; 1 on malformed input, with one line on stderr giving the
problem, the field path (for records: the batch's base offset and the record's index) and
the byte offset (counted from the start of the input bytes, size prefix included), or on a
failed conversation with a server; 2 on a usage error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    #[command(subcommand)]
    Decode(commands::decode::Decode),
    #[command(subcommand)]
    Encode(commands::encode::Encode),
    #[command(subcommand)]
    Records(commands::records::Records),
    Apis(commands::apis::Apis),
    #[command(subcommand)]
    Quorum(commands::quorum::Quorum),
    // Boxed: its many flags make it several times the size of the other commands.
    Tap(Box<commands::tap::Tap>),
    Cluster(commands::cluster::ClusterCommand),
}

impl Run for Command {
    fn run(self) -> Result<(), Failure> {
        match self {
            Command::Decode(command) => command.run(),
            Command::Encode(command) => command.run(),
            Command::Records(command) => command.run(),
            Command::Apis(command) => command.run(),
            Command::Quorum(command) => command.run(),
            Command::Cluster(command) => command.run(),
            Command::Tap(command) => command.run(),
        }
    }
}

/// `kafka-codec 0.1.0 (Kafka 3.9.1 and 4.4.0 schemas)`: the releases whose schemas the
/// library merges, the pinned one last.
fn version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| {
        let releases: Vec<&str> = kafka_codec::ApiKey::ApiVersions
            .releases()
            .iter()
            .map(|r| r.release)
            .collect();
        format!(
            "{} (Kafka {} schemas)",
            env!("CARGO_PKG_VERSION"),
            releases.join(" and ")
        )
    })
}

/// The subcommand the arguments name, as far as they name one (`kafka-codec decode
/// response`), and the subcommands it offers in turn: usage errors point at its `--help`.
fn command_path(args: &[OsString]) -> (String, Vec<String>) {
    let mut command = Cli::command();
    let mut path = vec![command.get_name().to_owned()];
    for arg in args.iter().skip(1) {
        let name = arg.to_str().unwrap_or_default();
        if let Some(sub) = command.find_subcommand(name).cloned() {
            path.push(sub.get_name().to_owned());
            command = sub;
        } else if !name.starts_with('-') {
            break;
        }
    }
    let subcommands = command
        .get_subcommands()
        .map(|sub| sub.get_name().to_owned())
        .filter(|name| name != "help")
        .collect();
    (path.join(" "), subcommands)
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    let (path, subcommands) = command_path(&args);
    let result = match Cli::try_parse_from(&args) {
        Ok(cli) => cli.command.run(),
        Err(error) => parse_failure(error, &subcommands),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(problem)) => {
            Failure::Usage(format!("{problem} (try '{path} --help')")).exit()
        }
        Err(failure) => failure.exit(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_codec::ApiKey;

    fn parse(line: &str) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("kafka-codec").chain(line.split_whitespace()))
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_commands_and_options() {
        let Ok(Cli {
            command:
                Command::Decode(commands::decode::Decode::Response {
                    api,
                    input,
                    strictness,
                }),
        }) = parse("decode response --api-key=DescribeQuorum --api-version 2 --hex -")
        else {
            panic!("not a decode response");
        };
        assert!(input.source.hex && !input.size_prefixed && !strictness.lenient);
        assert_eq!(input.source.file.as_os_str(), "-");
        assert_eq!(api.resolve().unwrap(), (ApiKey::DescribeQuorum, 2));
        let Ok(Cli {
            command: Command::Encode(commands::encode::Encode::Request(args)),
        }) = parse("encode request --size-prefixed -- -x")
        else {
            panic!("not an encode request");
        };
        assert!(args.size_prefixed && args.file.as_os_str() == "-x");
        let Ok(Cli {
            command: Command::Records(commands::records::Records::Decode(args)),
        }) = parse("records decode --max-decompressed-bytes 4096 --allow-truncated-tail --hex -")
        else {
            panic!("not a records decode");
        };
        assert!(args.input.hex && args.allow_truncated_tail);
        assert_eq!(args.max_decompressed_bytes, 4096);
        assert!(matches!(
            parse("apis"),
            Ok(Cli {
                command: Command::Apis(_)
            })
        ));
    }

    #[test]
    fn rejects_bad_usage() {
        for line in [
            "",
            "frobnicate",
            "decode",
            "decode request",
            "decode reply x",
            "decode request a b",
            "decode request --api-key 55 x",
            "decode response --api-key 55 x",
            "decode response --api-key 999 --api-version 0 x",
            "decode response --api-key 55 --api-version x x",
            "decode response --api-key 55 --api-key 55 --api-version 2 x",
            "encode request --records x",
            "decode request --allow-invalid-records x",
            "decode request --hex=yes x",
            "decode request --bogus x",
            "apis --hex",
        ] {
            assert!(parse(line).is_err(), "accepted: {line}");
        }
    }

    #[test]
    fn usage_errors_point_at_the_subcommand_help() {
        let path = |line: &str| {
            let args: Vec<OsString> = std::iter::once("kafka-codec")
                .chain(line.split_whitespace())
                .map(Into::into)
                .collect();
            command_path(&args)
        };
        assert_eq!(
            path("decode response --bogus -").0,
            "kafka-codec decode response"
        );
        assert_eq!(
            path("--hex decode"),
            (
                "kafka-codec decode".into(),
                vec!["request".into(), "response".into(), "pcap".into()]
            )
        );
        assert_eq!(path("frobnicate decode").0, "kafka-codec");
    }
}
