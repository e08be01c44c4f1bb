//! `kafka-codec`: decode raw Kafka request and response frames to JSON, encode them back, and
//! list the APIs this build knows. Argument parsing is hand-written on purpose: the grammar is
//! small and the library should not pull in a CLI framework.

mod hex;

use bytes::{Bytes, BytesMut};
use kafka_codec::frame::split_frame;
use kafka_codec::{
    ApiKey, DecodeError, DecodeErrorKind, DecodeOptions, Listener, RequestFrame, ResponseFrame,
    TrailingBytes,
};
use serde_json::Value;
use std::io::{self, Read, Write};
use std::process::ExitCode;

const HELP: &str = "\
kafka-codec: decode and encode raw Apache Kafka frames as JSON

Usage:
  kafka-codec decode request  [--hex] [--size-prefixed] [--lenient] FILE|-
  kafka-codec decode response --api-key K --api-version V [--hex] [--size-prefixed] [--lenient] FILE|-
  kafka-codec encode request|response [--hex] [--size-prefixed] FILE|-
  kafka-codec apis
  kafka-codec --help | --version

decode reads one frame (header, then body) and prints it as pretty JSON:
  request   {\"header\": ..., \"body\": ...}
  response  {\"apiKey\": K, \"apiVersion\": V, \"header\": ..., \"body\": ...}
A response frame does not say which API it answers, so decode response needs
--api-key and --api-version.
encode reads that JSON and writes the frame's bytes: `decode ... | encode ...` gives back
the input exactly. decode warns on stderr when a frame holds something the JSON cannot
keep (unknown tagged fields, non-canonical encodings, ignored trailing bytes).
apis lists every API key: its versions, first flexible version (request/response when they
differ), the listeners that serve it, and its latest version if that one is unstable.

Options:
  --hex              bytes are hex text: decode reads hex (whitespace is ignored and `#`
                     starts a comment to the end of the line); encode writes lowercase hex
  --size-prefixed    the frame starts with its 4-byte big-endian size (decode expects it,
                     encode writes it)
  --lenient          decode: ignore bytes after the body, as Kafka brokers do, and
                     with --size-prefixed after the frame (default: reject them)
  --api-key K        decode response: the API, by key number or name (see `apis`)
  --api-version V    decode response: the version of the request it answers
  FILE|-             read from FILE, or from standard input for `-`

Exit status: 0 on success; 1 on malformed input, with one line on stderr giving the
problem, the field path and the byte offset (counted from the start of the frame bytes,
size prefix included); 2 on a usage error.
";

fn main() -> ExitCode {
    let args: Vec<String> = match std::env::args_os()
        .skip(1)
        .map(|a| a.into_string())
        .collect()
    {
        Ok(args) => args,
        Err(arg) => return fail(Failure::Usage(format!("argument {arg:?} is not UTF-8"))),
    };
    match parse_args(args).map_err(Failure::Usage).and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => fail(failure),
    }
}

/// Why a run did not succeed.
#[derive(Debug)]
enum Failure {
    /// The command line is wrong (exit 2).
    Usage(String),
    /// The input is malformed or unreadable (exit 1).
    Input(String),
    /// Standard output went away (a closed pipe): exit 1 without a message.
    Quiet,
}

fn fail(failure: Failure) -> ExitCode {
    match failure {
        Failure::Usage(message) => {
            eprintln!("kafka-codec: {message} (try 'kafka-codec --help')");
            ExitCode::from(2)
        }
        Failure::Input(message) => {
            eprintln!("kafka-codec: {message}");
            ExitCode::from(1)
        }
        Failure::Quiet => ExitCode::from(1),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Request,
    Response,
}

/// Where the bytes come from and how they are laid out.
#[derive(Debug)]
struct Io {
    input: String,
    hex: bool,
    size_prefixed: bool,
}

#[derive(Debug)]
enum Command {
    Help,
    Version,
    Apis,
    Decode {
        io: Io,
        lenient: bool,
        /// Only for responses, whose frames do not name their API.
        response_api: Option<(ApiKey, i16)>,
    },
    Encode {
        io: Io,
        kind: Kind,
    },
}

fn parse_args(args: Vec<String>) -> Result<Command, String> {
    let mut words = Vec::new();
    let (mut hex, mut size_prefixed, mut lenient) = (false, false, false);
    let (mut api_key, mut api_version): (Option<String>, Option<String>) = (None, None);
    let mut options_done = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if options_done || arg == "-" || !arg.starts_with('-') {
            words.push(arg);
            continue;
        }
        let (name, inline_value) = match arg.split_once('=') {
            Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
            None => (arg.clone(), None),
        };
        let flag = match name.as_str() {
            "--" => {
                options_done = true;
                continue;
            }
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "--hex" => &mut hex,
            "--size-prefixed" => &mut size_prefixed,
            "--lenient" => &mut lenient,
            "--api-key" | "--api-version" => {
                let value = match inline_value {
                    Some(value) => value,
                    None => args.next().ok_or_else(|| format!("{name} needs a value"))?,
                };
                let slot = if name == "--api-key" {
                    &mut api_key
                } else {
                    &mut api_version
                };
                if slot.replace(value).is_some() {
                    return Err(format!("{name} given twice"));
                }
                continue;
            }
            _ => return Err(format!("unknown option '{arg}'")),
        };
        if inline_value.is_some() {
            return Err(format!("{name} takes no value"));
        }
        *flag = true;
    }

    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let (verb, kind, input) = match words[..] {
        [] => return Err("no command given".into()),
        ["help"] => return Ok(Command::Help),
        ["apis"] => {
            if hex || size_prefixed || lenient || api_key.is_some() || api_version.is_some() {
                return Err("apis takes no options".into());
            }
            return Ok(Command::Apis);
        }
        [verb @ ("decode" | "encode"), kind, input] => {
            let kind = match kind {
                "request" => Kind::Request,
                "response" => Kind::Response,
                _ => {
                    return Err(format!(
                        "{verb} what? expected 'request' or 'response', got '{kind}'"
                    ))
                }
            };
            (verb, kind, input)
        }
        [verb @ ("decode" | "encode")] => {
            return Err(format!("{verb} needs 'request' or 'response' and FILE|-"))
        }
        [verb @ ("decode" | "encode"), _] => {
            return Err(format!("{verb} needs FILE, or - for stdin"))
        }
        ["decode" | "encode", _, _, extra, ..] => {
            return Err(format!("unexpected argument '{extra}'"))
        }
        [other, ..] => return Err(format!("unknown command '{other}'")),
    };
    let io = Io {
        input: input.to_owned(),
        hex,
        size_prefixed,
    };

    if verb == "encode" {
        if lenient {
            return Err("--lenient applies to decode only".into());
        }
        if api_key.is_some() || api_version.is_some() {
            return Err(
                "encode takes the API key and version from the JSON, not from options".into(),
            );
        }
        return Ok(Command::Encode { io, kind });
    }
    let response_api = match (kind, api_key, api_version) {
        (Kind::Request, None, None) => None,
        (Kind::Request, _, _) => {
            return Err(
                "a request names its own API: --api-key and --api-version are for responses".into(),
            )
        }
        (Kind::Response, Some(key), Some(version)) => Some(parse_api(&key, &version)?),
        (Kind::Response, _, _) => {
            return Err("decode response needs --api-key and --api-version".into())
        }
    };
    Ok(Command::Decode {
        io,
        lenient,
        response_api,
    })
}

/// An API by number or (case-insensitive) name, and a version it supports.
fn parse_api(key: &str, version: &str) -> Result<(ApiKey, i16), String> {
    let api = match key.parse::<i16>() {
        Ok(number) => ApiKey::from_key(number),
        Err(_) => ApiKey::ALL
            .iter()
            .copied()
            .find(|api| api.name().eq_ignore_ascii_case(key)),
    }
    .ok_or_else(|| format!("unknown API key '{key}' ('kafka-codec apis' lists them)"))?;
    let version = version
        .parse::<i16>()
        .map_err(|_| format!("--api-version '{version}' is not a number"))?;
    if !api.valid_versions().contains(version) {
        return Err(format!(
            "{} (key {}) has no version {version} (valid: {})",
            api.name(),
            api.key(),
            api.valid_versions()
        ));
    }
    Ok((api, version))
}

fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::Help => write_stdout(HELP.as_bytes()),
        Command::Version => write_stdout(
            format!(
                "kafka-codec {} (Kafka {} schemas)\n",
                env!("CARGO_PKG_VERSION"),
                kafka_codec::KAFKA_VERSION
            )
            .as_bytes(),
        ),
        Command::Apis => write_stdout(apis_table().as_bytes()),
        Command::Decode {
            io,
            lenient,
            response_api,
        } => decode(&io, lenient, response_api),
        Command::Encode { io, kind } => encode(&io, kind),
    }
}

fn read_input(path: &str) -> Result<Vec<u8>, Failure> {
    let mut data = Vec::new();
    let result = if path == "-" {
        io::stdin().lock().read_to_end(&mut data).map(drop)
    } else {
        std::fs::read(path).map(|bytes| data = bytes)
    };
    result.map_err(|e| {
        let name = if path == "-" { "standard input" } else { path };
        Failure::Input(format!("cannot read {name}: {e}"))
    })?;
    Ok(data)
}

fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| {
            if e.kind() == io::ErrorKind::BrokenPipe {
                Failure::Quiet
            } else {
                Failure::Input(format!("cannot write output: {e}"))
            }
        })
}

fn decode(io: &Io, lenient: bool, response_api: Option<(ApiKey, i16)>) -> Result<(), Failure> {
    let data = read_input(&io.input)?;
    let data = if io.hex {
        hex::decode(&data).map_err(Failure::Input)?
    } else {
        data
    };
    let options = DecodeOptions {
        trailing_bytes: if lenient {
            TrailingBytes::Allow
        } else {
            TrailingBytes::Reject
        },
        ..DecodeOptions::default()
    };
    // Error offsets count from the start of the input, so add the prefix back in.
    let (frame, base) = if io.size_prefixed {
        (unprefix(data, &options)?, 4)
    } else {
        (Bytes::from(data), 0)
    };
    let bad = |e: DecodeError| Failure::Input(e.shifted(base).to_string());
    let unshowable =
        |e: kafka_codec::EncodeError| Failure::Input(format!("cannot show as JSON: {e}"));

    // Decode, and re-encode the JSON exactly as `encode` will, to tell the user when the
    // round trip cannot give back these bytes.
    let (json, again) = match response_api {
        None => {
            let decoded = RequestFrame::decode_with(frame.clone(), &options).map_err(bad)?;
            let json = decoded.to_json().map_err(unshowable)?;
            let again = RequestFrame::from_json(&json)
                .map_err(|e| e.to_string())
                .and_then(|f| f.encode_to_bytes().map_err(|e| e.to_string()));
            (json, again)
        }
        Some((api, version)) => {
            let decoded =
                ResponseFrame::decode_with(frame.clone(), api, version, &options).map_err(bad)?;
            let json = decoded.to_json().map_err(unshowable)?;
            let again = ResponseFrame::from_json(&json)
                .map_err(|e| e.to_string())
                .and_then(|f| f.encode_to_bytes().map_err(|e| e.to_string()));
            (json, again)
        }
    };
    let mut text = serde_json::to_string_pretty(&json).expect("a JSON value always serializes");
    text.push('\n');
    write_stdout(text.as_bytes())?;
    if let Some(warning) = round_trip_warning(&frame, again, base) {
        eprintln!("kafka-codec: warning: {warning}");
    }
    Ok(())
}

/// Checks the 4-byte size prefix against the input and returns the frame after it.
fn unprefix(data: Vec<u8>, options: &DecodeOptions) -> Result<Bytes, Failure> {
    let len = data.len();
    let mut buf = BytesMut::from(&data[..]);
    let bad = |e: DecodeError| Failure::Input(e.to_string());
    match split_frame(&mut buf, &options.limits).map_err(bad)? {
        None => {
            let (needed, remaining, offset) = if len < 4 {
                (4 - len, len, 0)
            } else {
                let size = u32::from_be_bytes([data[0], data[1], data[2], data[3]]) as usize;
                (size - (len - 4), len - 4, len)
            };
            let kind = DecodeErrorKind::UnexpectedEof { needed, remaining };
            Err(bad(DecodeError::new(kind, offset)))
        }
        Some(frame) => {
            if !buf.is_empty() && options.trailing_bytes == TrailingBytes::Reject {
                let kind = DecodeErrorKind::TrailingBytes(buf.len());
                return Err(bad(DecodeError::new(kind, len - buf.len())));
            }
            Ok(frame)
        }
    }
}

/// Why `encode` would not give back `input`, if it would not.
fn round_trip_warning(input: &[u8], again: Result<Bytes, String>, base: usize) -> Option<String> {
    let again = match again {
        Ok(again) if again == input => return None,
        Ok(again) => again,
        Err(e) => return Some(format!("this JSON does not encode again: {e}")),
    };
    if input.starts_with(&again) {
        return Some(format!(
            "{} trailing bytes from byte offset {} are not in the JSON; encode will not write them",
            input.len() - again.len(),
            base + again.len()
        ));
    }
    let first_difference = input
        .iter()
        .zip(again.iter())
        .position(|(a, b)| a != b)
        .unwrap_or(input.len().min(again.len()));
    Some(format!(
        "encode will not give back these bytes (they differ from byte offset {}): the frame \
         holds unknown tagged fields or non-canonical encodings the JSON does not keep",
        base + first_difference
    ))
}

fn encode(io: &Io, kind: Kind) -> Result<(), Failure> {
    let data = read_input(&io.input)?;
    let json: Value =
        serde_json::from_slice(&data).map_err(|e| Failure::Input(format!("invalid JSON: {e}")))?;
    let mut out = Vec::new();
    let encoded = match kind {
        Kind::Request => {
            let frame =
                RequestFrame::from_json(&json).map_err(|e| Failure::Input(e.to_string()))?;
            if io.size_prefixed {
                frame.encode_size_prefixed(&mut out)
            } else {
                frame.encode(&mut out)
            }
        }
        Kind::Response => {
            let frame =
                ResponseFrame::from_json(&json).map_err(|e| Failure::Input(e.to_string()))?;
            if io.size_prefixed {
                frame.encode_size_prefixed(&mut out)
            } else {
                frame.encode(&mut out)
            }
        }
    };
    encoded.map_err(|e| Failure::Input(format!("cannot encode: {e}")))?;
    if io.hex {
        let mut text = hex::encode(&out);
        text.push('\n');
        write_stdout(text.as_bytes())
    } else {
        write_stdout(&out)
    }
}

/// One row per API, columns aligned with spaces (the last column is not padded).
fn apis_table() -> String {
    let version_from = |v: Option<i16>| v.map_or_else(|| "-".to_owned(), |v| format!("{v}+"));
    let mut apis = ApiKey::ALL.to_vec();
    apis.sort_by_key(|api| api.key());
    let mut rows = vec![[
        "KEY".to_owned(),
        "NAME".to_owned(),
        "VERSIONS".to_owned(),
        "FLEXIBLE".to_owned(),
        "LISTENERS".to_owned(),
        "UNSTABLE".to_owned(),
    ]];
    for api in apis {
        let (request, response) = (
            api.request_first_flexible_version(),
            api.response_first_flexible_version(),
        );
        let flexible = if request == response {
            version_from(request)
        } else {
            format!("{}/{}", version_from(request), version_from(response))
        };
        let listeners: Vec<&str> = api
            .listeners()
            .iter()
            .map(|listener| match listener {
                Listener::ZkBroker => "zkBroker",
                Listener::Broker => "broker",
                Listener::Controller => "controller",
            })
            .collect();
        let unstable = if api.latest_version_unstable() {
            format!("v{}", api.valid_versions().max)
        } else {
            "-".to_owned()
        };
        rows.push([
            api.key().to_string(),
            api.name().to_owned(),
            api.valid_versions().to_string(),
            flexible,
            listeners.join(","),
            unstable,
        ]);
    }
    let mut widths = [0; 6];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, (cell, width)) in row.iter().zip(widths).enumerate() {
            if i == 0 {
                // Keys are numbers: right-align them.
                line.push_str(&format!("{cell:>width$}"));
            } else {
                line.push_str(&format!("  {cell:<width$}"));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn parses_commands_and_options() {
        let Ok(Command::Decode {
            io,
            lenient,
            response_api,
        }) = parse_args(args(
            "decode response --api-key=DescribeQuorum --api-version 2 --hex -",
        ))
        else {
            panic!("not a decode");
        };
        assert!(io.hex && !io.size_prefixed && !lenient);
        assert_eq!(io.input, "-");
        assert_eq!(response_api, Some((ApiKey::DescribeQuorum, 2)));
        assert!(matches!(
            parse_args(args("encode request --size-prefixed -- -x")),
            Ok(Command::Encode { io: Io { ref input, size_prefixed: true, .. }, kind: Kind::Request }) if input == "-x"
        ));
        assert!(matches!(parse_args(args("apis")), Ok(Command::Apis)));
        assert!(matches!(
            parse_args(args("decode request --help")),
            Ok(Command::Help)
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
            "decode response --api-key 55 --api-version 99 x",
            "encode request --lenient x",
            "decode request --hex=yes x",
            "decode request --bogus x",
            "apis --hex",
        ] {
            assert!(parse_args(args(line)).is_err(), "accepted: {line}");
        }
    }

    #[test]
    fn size_prefix_must_match_the_input() {
        let strict = DecodeOptions::default();
        assert_eq!(
            &unprefix(vec![0, 0, 0, 2, 7, 8], &strict).unwrap()[..],
            [7, 8]
        );
        let short = unprefix(vec![0, 0, 0, 3, 7, 8], &strict).unwrap_err();
        assert!(
            matches!(short, Failure::Input(ref m) if m.contains("byte offset 6")),
            "{short:?}"
        );
        let long = unprefix(vec![0, 0, 0, 1, 7, 8], &strict).unwrap_err();
        assert!(
            matches!(long, Failure::Input(ref m) if m.contains("byte offset 5")),
            "{long:?}"
        );
        let lenient = DecodeOptions {
            trailing_bytes: TrailingBytes::Allow,
            ..strict
        };
        assert_eq!(
            &unprefix(vec![0, 0, 0, 1, 7, 8], &lenient).unwrap()[..],
            [7]
        );
        assert!(unprefix(vec![0xff, 0xff, 0xff, 0xff], &strict).is_err());
    }
}
