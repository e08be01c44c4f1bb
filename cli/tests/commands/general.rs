//! Runs the built `kafka-codec` binary on the sample frames in `examples/frames/` and on
//! malformed input, checking output, exit status and the one-line error contract.

use crate::support::{assert_malformed, assert_usage_error, json, ok, run, stderr};
use kafka_codec::serde_json::{self, Value};
use kafka_codec_hexdump::encode as hex;
use std::path::PathBuf;

fn sample_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/frames")
        .join(name)
}

/// The bytes of a sample file (hex text in any form `--hex` reads).
fn sample_bytes(name: &str) -> Vec<u8> {
    let text = std::fs::read(sample_path(name)).unwrap();
    kafka_codec_hexdump::decode(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

const RESPONSE_V2: [&str; 4] = ["--api-key", "55", "--api-version", "2"];

fn decode_response_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["decode", "response"];
    args.extend(RESPONSE_V2);
    args.extend(extra);
    args
}

#[test]
fn samples_match_the_documented_sizes() {
    assert_eq!(sample_bytes("api-versions-request-v3.hex").len(), 19);
    assert_eq!(sample_bytes("describe-quorum-request-v2.hex").len(), 40);
    assert_eq!(sample_bytes("describe-quorum-response-v2.hex").len(), 133);
}

#[test]
fn api_versions_request_decodes_and_round_trips() {
    let file = sample_path("api-versions-request-v3.hex");
    let out = ok(&["decode", "request", "--hex", file.to_str().unwrap()], b"");
    let value = json(&out);
    assert_eq!(value["header"]["requestApiKey"], 18);
    assert_eq!(value["header"]["requestApiVersion"], 3);
    assert_eq!(value["header"]["correlationId"], 1);
    assert_eq!(value["header"]["clientId"], "cli");
    assert_eq!(value["body"]["clientSoftwareName"], "a");
    assert_eq!(value["body"]["clientSoftwareVersion"], "1");

    let bytes = ok(&["encode", "request", "-"], &out);
    assert_eq!(bytes, sample_bytes("api-versions-request-v3.hex"));
}

#[test]
fn describe_quorum_request_decodes_and_round_trips() {
    let frame = sample_bytes("describe-quorum-request-v2.hex");
    // Raw bytes on stdin this time.
    let out = ok(&["decode", "request", "-"], &frame);
    let value = json(&out);
    assert_eq!(value["header"]["requestApiKey"], 55);
    assert_eq!(value["header"]["requestApiVersion"], 2);
    assert_eq!(value["header"]["correlationId"], 7);
    assert_eq!(value["header"]["clientId"], "c");
    let topic = &value["body"]["topics"][0];
    assert_eq!(topic["topicName"], "__cluster_metadata");
    assert_eq!(topic["partitions"][0]["partitionIndex"], 0);

    let text = ok(&["encode", "request", "--hex", "-"], &out);
    assert_eq!(
        String::from_utf8(text).unwrap(),
        format!("{}\n", hex(&frame))
    );
}

#[test]
fn describe_quorum_response_decodes_and_round_trips() {
    let file = sample_path("describe-quorum-response-v2.hex");
    let out = ok(
        &decode_response_args(&["--hex", file.to_str().unwrap()]),
        b"",
    );
    let value = json(&out);
    assert_eq!(value["apiKey"], 55);
    assert_eq!(value["apiVersion"], 2);
    assert_eq!(value["header"]["correlationId"], 7);
    let body = &value["body"];
    assert_eq!(body["errorCode"], 0);
    assert_eq!(body["errorMessage"], Value::Null);
    let partition = &body["topics"][0]["partitions"][0];
    assert_eq!(partition["leaderId"], 1);
    assert_eq!(partition["leaderEpoch"], 5);
    assert_eq!(partition["highWatermark"], 10);
    let voter = &partition["currentVoters"][0];
    assert_eq!(voter["replicaId"], 1);
    assert_eq!(voter["replicaDirectoryId"], "AQIDBAUGBwgJCgsMDQ4PEA");
    assert_eq!(voter["lastFetchTimestamp"], 1_700_000_000_000_i64);
    assert_eq!(partition["observers"], serde_json::json!([]));
    let listener = &body["nodes"][0]["listeners"][0];
    assert_eq!(listener["name"], "CONTROLLER");
    assert_eq!(listener["host"], "localhost");
    assert_eq!(listener["port"], 9093);

    // The API can also be named; the JSON carries key and version, so encode needs neither.
    let by_name = ok(
        &[
            "decode",
            "response",
            "--api-key=describequorum",
            "--api-version=2",
            "--hex",
        ]
        .into_iter()
        .chain([file.to_str().unwrap()])
        .collect::<Vec<_>>(),
        b"",
    );
    assert_eq!(by_name, out);
    let bytes = ok(&["encode", "response", "-"], &out);
    assert_eq!(bytes, sample_bytes("describe-quorum-response-v2.hex"));
}

#[test]
fn hex_input_in_every_form_decodes_alike() {
    let expected = ok(
        &["decode", "request", "-"],
        &sample_bytes("describe-quorum-request-v2.hex"),
    );
    // `xxd` and `tshark -x` output of the same frame, as the tools wrote it.
    for name in [
        "describe-quorum-request-v2.xxd",
        "describe-quorum-request-v2.tshark",
    ] {
        let file = sample_path(name);
        let out = ok(&["decode", "request", "--hex", file.to_str().unwrap()], b"");
        assert_eq!(out, expected, "{name}");
    }
    let frame = sample_bytes("describe-quorum-request-v2.hex");
    let prefixed: String = frame.iter().map(|b| format!("0x{b:02x}, ")).collect();
    assert_eq!(
        ok(&["decode", "request", "--hex", "-"], prefixed.as_bytes()),
        expected
    );
    // A dump with a line missing is malformed, not silently shorter.
    let xxd = std::fs::read_to_string(sample_path("describe-quorum-request-v2.xxd")).unwrap();
    let without_second: String = xxd
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, line)| format!("{line}\n"))
        .collect();
    let output = run(
        &["decode", "request", "--hex", "-"],
        without_second.as_bytes(),
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("line 2"), "{}", stderr(&output));
}

#[test]
fn size_prefixed_frames_round_trip() {
    let frame = sample_bytes("describe-quorum-request-v2.hex");
    let mut prefixed = (frame.len() as u32).to_be_bytes().to_vec();
    prefixed.extend_from_slice(&frame);
    assert_eq!(
        &prefixed[..4],
        [0, 0, 0, 0x28],
        "size from wire-encoding example 2"
    );

    let out = ok(&["decode", "request", "--size-prefixed", "-"], &prefixed);
    assert_eq!(out, ok(&["decode", "request", "-"], &frame));
    assert_eq!(
        ok(&["encode", "request", "--size-prefixed", "-"], &out),
        prefixed
    );
    assert_eq!(ok(&["encode", "request", "-"], &out), frame);

    let response = sample_bytes("describe-quorum-response-v2.hex");
    let mut prefixed = (response.len() as u32).to_be_bytes().to_vec();
    prefixed.extend_from_slice(&response);
    let out = ok(&decode_response_args(&["--size-prefixed", "-"]), &prefixed);
    assert_eq!(
        ok(&["encode", "response", "--size-prefixed", "-"], &out),
        prefixed
    );

    // A prefix that disagrees with the input, either way, is malformed; offsets count the
    // prefix.
    let strict = decode_response_args(&["--size-prefixed", "-"]);
    assert_malformed(&strict, &prefixed[..prefixed.len() - 1], "byte offset 136");
    let mut long = prefixed.clone();
    long.push(0);
    assert_malformed(&strict, &long, "byte offset 137");
    // Unless lenient: then the byte after the frame is left out, and the tool says so.
    let output = run(
        &decode_response_args(&["--size-prefixed", "--lenient", "-"]),
        &long,
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(output.stdout, out);
    assert_eq!(
        stderr(&output),
        "kafka-codec: warning: 1 bytes after the frame, from byte offset 137, are not in the \
         JSON; encode will not write them\n"
    );
    // A prefix that is not a size at all.
    assert_malformed(
        &["decode", "request", "--size-prefixed", "-"],
        &[0xff, 0xff, 0xff, 0xff],
        "invalid frame size -1",
    );
}

#[test]
fn trailing_bytes_are_rejected_unless_lenient() {
    let mut frame = sample_bytes("api-versions-request-v3.hex");
    frame.extend_from_slice(&[0xaa, 0xbb]);
    assert_malformed(&["decode", "request", "-"], &frame, "byte offset 19");

    let output = run(&["decode", "request", "--lenient", "-"], &frame);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(json(&output.stdout)["body"]["clientSoftwareName"], "a");
    // The JSON cannot hold the extra bytes, and the tool says so.
    let warning = stderr(&output);
    assert!(
        warning.starts_with("kafka-codec: warning: 2 trailing bytes from byte offset 19"),
        "{warning}"
    );
    assert_eq!(ok(&["encode", "request", "-"], &output.stdout), frame[..19]);
}

#[test]
fn unknown_tagged_fields_decode_with_a_warning() {
    // Example 1 with one unknown tagged field (tag 5, one byte) in the body.
    let mut frame = sample_bytes("api-versions-request-v3.hex");
    frame.pop();
    frame.extend_from_slice(&[0x01, 0x05, 0x01, 0xff]);
    let output = run(&["decode", "request", "-"], &frame);
    assert!(output.status.success(), "{}", stderr(&output));
    let warning = stderr(&output);
    assert!(
        warning.contains("warning") && warning.contains("byte offset 18"),
        "{warning}"
    );
}

#[test]
fn every_truncation_of_every_sample_is_malformed() {
    for name in [
        "api-versions-request-v3.hex",
        "describe-quorum-request-v2.hex",
    ] {
        let frame = sample_bytes(name);
        for len in 0..frame.len() {
            assert_malformed(&["decode", "request", "-"], &frame[..len], "offset");
        }
    }
    let frame = sample_bytes("describe-quorum-response-v2.hex");
    for len in 0..frame.len() {
        assert_malformed(&decode_response_args(&["-"]), &frame[..len], "offset");
    }
}

#[test]
fn truncation_names_the_field_and_offset() {
    // Cut example 2 in the middle of the topic name.
    let frame = sample_bytes("describe-quorum-request-v2.hex");
    let line = assert_malformed(
        &["decode", "request", "-"],
        &frame[..20],
        "Topics[0].TopicName",
    );
    assert!(line.contains("DescribeQuorumRequest v2"), "{line}");
    assert!(line.contains("byte offset 13"), "{line}");
    // The same through --hex: offsets are in decoded bytes, not text characters.
    let line = assert_malformed(
        &["decode", "request", "--hex", "-"],
        hex(&frame[..20]).as_bytes(),
        "Topics[0].TopicName",
    );
    assert!(line.contains("byte offset 13"), "{line}");
}

#[test]
fn unknown_api_key_is_malformed() {
    // A request header naming API key 999 (0x03e7).
    let frame = [0x03, 0xe7, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0xff];
    assert_malformed(&["decode", "request", "-"], &frame, "unknown API key 999");
    // For responses the key is an argument, so an unknown one is a usage error.
    assert_usage_error(&[
        "decode",
        "response",
        "--api-key",
        "999",
        "--api-version",
        "0",
        "-",
    ]);
}

#[test]
fn huge_element_counts_are_malformed() {
    // MetadataRequest v0 (classic encoding): header v1 with a null client id, then a topics
    // array claiming 0x7fffffff elements.
    let frame = [
        0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff,
    ];
    let line = assert_malformed(&["decode", "request", "-"], &frame, "Topics");
    assert!(
        line.contains("2147483647") && line.contains("byte offset 10"),
        "{line}"
    );

    // The flexible form: DescribeQuorumRequest v2 whose compact topics count is the varint
    // ff ff ff ff 07 (0x7fffffff, i.e. 0x7ffffffe elements).
    let mut frame = sample_bytes("describe-quorum-request-v2.hex")[..12].to_vec();
    frame.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x07, 0x00]);
    assert_malformed(
        &["decode", "request", "-"],
        &frame,
        "Topics (byte offset 12)",
    );
}

#[test]
fn bad_hex_and_bad_json_are_one_line_errors() {
    let output = run(&["decode", "request", "--hex", "-"], b"0012 00zz");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stderr(&output).lines().count(), 1);
    assert!(
        stderr(&output).contains("line 1, column 8"),
        "{}",
        stderr(&output)
    );

    for input in [&b"{"[..], b"[]", br#"{"header": {"requestApiKey": 55}}"#] {
        let output = run(&["encode", "request", "-"], input);
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
        assert!(output.stdout.is_empty());
    }
    // A JSON error names the field path.
    let out = ok(
        &["decode", "request", "-"],
        &sample_bytes("describe-quorum-request-v2.hex"),
    );
    let mut value = json(&out);
    value["body"]["topics"][0]["partitions"][0]["partitionIndex"] = "zero".into();
    let output = run(&["encode", "request", "-"], value.to_string().as_bytes());
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("at body.topics[0].partitions[0].partitionIndex"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_misspelled_key_is_answered_with_the_key_meant() {
    let out = ok(
        &["decode", "request", "-"],
        &sample_bytes("describe-quorum-request-v2.hex"),
    );
    let mut value = json(&out);
    let partition = value["body"]["topics"][0]["partitions"][0]
        .as_object_mut()
        .unwrap();
    let index = partition.remove("partitionIndex").unwrap();
    partition.insert("partitionIdx".into(), index);
    let output = run(&["encode", "request", "-"], value.to_string().as_bytes());
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output).trim_end(),
        "kafka-codec: unknown field \"partitionIdx\" in DescribeQuorumRequest v2 at \
         body.topics[0].partitions[0]; did you mean \"partitionIndex\"?",
    );
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &[][..],
        &["frobnicate"],
        &["decode"],
        &["decode", "request"],
        &["decode", "reply", "-"],
        &["decode", "request", "-", "extra"],
        &["decode", "request", "--bogus", "-"],
        &["decode", "request", "--api-key", "55", "-"],
        &["decode", "response", "-"],
        &["decode", "response", "--api-key", "55", "-"],
        &[
            "decode",
            "response",
            "--api-key",
            "55",
            "--api-version",
            "99",
            "-",
        ],
        &["decode", "response", "--api-key", "55", "--api-version"],
        &["encode", "request", "--records", "-"],
        &["encode", "reply", "-"],
        &["apis", "--hex"],
        &[
            "decode",
            "response",
            "--api-key",
            "55",
            "--api-key",
            "55",
            "--api-version",
            "2",
            "-",
        ],
        &[
            "decode",
            "response",
            "--api-key",
            "DescribeQuorum",
            "--api-version",
            "two",
            "-",
        ],
    ] {
        assert_usage_error(args);
    }
}

#[test]
fn help_and_apis() {
    let help = String::from_utf8(ok(&["--help"], b"")).unwrap();
    assert!(
        help.contains("Usage:") && help.contains("--size-prefixed"),
        "{help}"
    );
    assert!(help.contains("Exit status"), "{help}");
    assert_eq!(ok(&["help"], b""), help.as_bytes());
    // Every subcommand has its own help, naming its own options and no others.
    let help_of = |args: &[&str]| String::from_utf8(ok(args, b"")).unwrap();
    let decode_response = help_of(&["decode", "response", "--help"]);
    for option in [
        "--api-key",
        "--api-version",
        "--hex",
        "--size-prefixed",
        "--lenient",
    ] {
        assert!(decode_response.contains(option), "{decode_response}");
    }
    assert!(decode_response.contains("xxd"), "{decode_response}");
    let decode_request = help_of(&["decode", "request", "--help"]);
    assert!(decode_request.contains("--lenient") && !decode_request.contains("--api-key"));
    let encode_request = help_of(&["encode", "request", "--help"]);
    assert!(encode_request.contains("--size-prefixed") && encode_request.contains("--lenient"));
    assert!(
        !encode_request.contains("--records"),
        "encode reads either form"
    );
    assert!(help_of(&["decode", "--help"]).contains("response"));
    assert!(help_of(&["apis", "--help"]).contains("FLEXIBLE"));
    let version = help_of(&["--version"]);
    let releases: Vec<&str> = kafka_codec::ApiKey::ApiVersions
        .releases()
        .iter()
        .map(|r| r.release)
        .collect();
    assert_eq!(releases.last(), Some(&kafka_codec::KAFKA_VERSION));
    assert_eq!(
        version,
        format!(
            "kafka-codec {} (Kafka {} schemas)\n",
            env!("CARGO_PKG_VERSION"),
            releases.join(" and ")
        )
    );

    let table = String::from_utf8(ok(&["apis"], b"")).unwrap();
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let mut expected = vec!["KEY", "NAME", "VERSIONS"];
    expected.extend(releases.iter().copied());
    expected.extend(["REMOVED", "IN", "FLEXIBLE", "LISTENERS", "UNSTABLE"]);
    assert_eq!(header, expected);
    let columns = expected.len();
    let at = |name: &str| expected.iter().position(|c| *c == name).unwrap();
    let rows: Vec<Vec<&str>> = lines
        .by_ref()
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    // Under the table: what UNSTABLE means, and the provisional DescribeQuorum v3.
    let notes: Vec<&str> = lines.collect();
    assert!(
        notes
            .iter()
            .any(|l| l.starts_with("* DescribeQuorum v3 is provisional")),
        "{table}"
    );
    assert!(rows.len() > 80, "only {} APIs", rows.len());
    assert!(rows.iter().all(|row| row.len() == columns), "{table}");
    let keys: Vec<i16> = rows.iter().map(|row| row[0].parse().unwrap()).collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "keys not ascending");
    // One row per API the library knows, with its versions.
    assert_eq!(rows.len(), kafka_codec::ApiKey::ALL.len());
    for api in kafka_codec::ApiKey::ALL {
        let row = rows.iter().find(|row| row[1] == api.name()).unwrap();
        assert_eq!(row[0], api.key().to_string());
        assert_eq!(row[2], api.valid_versions().to_string());
        // Each release's versions, and what the newest no longer speaks.
        for (release, column) in api.releases().iter().zip(3..) {
            let cell = match release.versions {
                Some(range) if release.latest_unstable => format!("{range}*"),
                Some(range) => range.to_string(),
                None => "-".into(),
            };
            assert_eq!(row[column], cell, "{api} in {}", release.release);
        }
        let removed = api.removed_versions().map_or("-".into(), |r| r.to_string());
        assert_eq!(row[at("REMOVED")], removed, "{api}");
    }
    let find = |name: &str| rows.iter().find(|row| row[1] == name).unwrap().clone();
    assert_eq!(find("ApiVersions")[..2], ["18", "ApiVersions"]);
    assert_eq!(find("ApiVersions")[at("FLEXIBLE")], "3+");
    assert_eq!(
        find("DescribeQuorum")[at("FLEXIBLE")],
        "0+",
        "flexible in every version"
    );
    assert_eq!(find("DescribeQuorum")[at("LISTENERS")], "broker,controller");
    assert_eq!(
        find("DescribeQuorum")[at("UNSTABLE")],
        "v3*",
        "in development, and ours"
    );
    assert_eq!(find("Metadata")[at("UNSTABLE")], "-");
    assert_eq!(find("SaslHandshake")[at("FLEXIBLE")], "-");
    // Kafka 4.0 removed Produce v0-v2 and the ZooKeeper-era LeaderAndIsr (KIP-896): the
    // releases say so, and every version is still read.
    assert_eq!(find("Produce")[at("REMOVED")..=at("IN")], ["0-2", "4.0"]);
    assert_eq!(
        find("LeaderAndIsr")[at("REMOVED")..=at("IN")],
        ["0-7", "4.0"]
    );
    assert_eq!(find("LeaderAndIsr")[at(kafka_codec::KAFKA_VERSION)], "-");
    assert_eq!(find("Metadata")[at("REMOVED")..=at("IN")], ["-", "-"]);
    // A draft that only Kafka 3.9.1 had: not removed, marked in its release's column.
    assert_eq!(find("ShareFetch")[at("3.9.1")], "0*");
    assert_eq!(find("ShareFetch")[at("REMOVED")], "-");
}

#[test]
fn memory_budget_refuses_a_frame_whose_arrays_do_not_fit() {
    // DescribeQuorumRequest v2: one topic of one partition; the topic alone needs more than
    // 8 bytes of memory.
    let frame = sample_bytes("describe-quorum-request-v2.hex");
    ok(
        &["decode", "request", "--memory-budget", "100000", "-"],
        &frame,
    );
    let line = assert_malformed(
        &["decode", "request", "--memory-budget", "8", "-"],
        &frame,
        "memory budget",
    );
    assert!(line.contains("Topics"), "{line}");
}

// ---------------------------------------------------------------------------------------------
// Messages a user can act on: each says what happened and what to do (issue 19)

/// The stderr of a run that must fail with `code`.
fn failing(args: &[&str], stdin: &[u8], code: i32) -> String {
    let output = run(args, stdin);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(code), "{args:?}: {message}");
    message
}

#[test]
fn hex_text_or_json_given_as_bytes_says_which_command_or_flag_fits() {
    let request = sample_bytes("api-versions-request-v3.hex");
    let message = failing(&["decode", "request", "-"], hex(&request).as_bytes(), 1);
    assert!(
        message.contains("looks like hex text: add --hex"),
        "{message}"
    );
    let json = ok(&["decode", "request", "-"], &request);
    let message = failing(&["decode", "request", "-"], &json, 1);
    assert!(
        message.contains("the input is JSON: `kafka-codec encode"),
        "{message}"
    );
}

#[test]
fn a_request_or_response_json_given_to_the_other_encode_says_which_fits() {
    let request = ok(
        &["decode", "request", "-"],
        &sample_bytes("api-versions-request-v3.hex"),
    );
    let message = failing(&["encode", "response", "-"], &request, 1);
    assert!(
        message.contains("use `kafka-codec encode request`"),
        "{message}"
    );
    let response = ok(
        &decode_response_args(&["-"]),
        &sample_bytes("describe-quorum-response-v2.hex"),
    );
    let message = failing(&["encode", "request", "-"], &response, 1);
    assert!(
        message.contains("use `kafka-codec encode response`"),
        "{message}"
    );
}

#[test]
fn api_names_take_their_article() {
    let response = ok(
        &[
            "decode",
            "response",
            "--api-key",
            "ApiVersions",
            "--api-version",
            "3",
            "-",
        ],
        &kafka_codec::ResponseFrame::new(
            kafka_codec::messages::ApiVersionsResponse::default(),
            3,
            1,
        )
        .encode_to_bytes()
        .unwrap(),
    );
    let dir = std::env::temp_dir().join(format!("kafka-codec-article-{}", std::process::id()));
    std::fs::write(&dir, &response).unwrap();
    let message = failing(
        &["quorum", "describe", "--response", dir.to_str().unwrap()],
        b"",
        1,
    );
    std::fs::remove_file(&dir).unwrap();
    assert!(
        message.contains("an ApiVersions response, not DescribeQuorum"),
        "{message}"
    );
}

#[test]
fn listen_and_upstream_addresses_are_checked_at_start() {
    for args in [
        &[
            "tap",
            "--listen",
            "127.0.0.1:99999",
            "--upstream",
            "127.0.0.1:9092",
        ][..],
        &[
            "tap",
            "--listen",
            "127.0.0.1",
            "--upstream",
            "127.0.0.1:9092",
        ],
        &["tap", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1"],
        &["quorum", "serve", "--listen", "127.0.0.1:99999"],
    ] {
        let message = failing(args, b"", 2);
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(
            message.contains("not a port") || message.contains("needs a port"),
            "{message}"
        );
    }
}

/// A server that accepts connections and answers each with `answer` (or never, if empty).
fn fake_peer(answer: &'static [u8]) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                use std::io::{Read, Write};
                let mut buf = [0u8; 1024];
                let _ = stream.read(&mut buf);
                if !answer.is_empty() {
                    let _ = stream.write_all(answer);
                }
                std::thread::sleep(std::time::Duration::from_secs(30));
            });
        }
    });
    address
}

#[test]
fn a_peer_that_is_not_kafka_or_is_silent_is_named_for_what_it_is() {
    let http = fake_peer(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    let message = failing(
        &["quorum", "describe", "--bootstrap-controller", &http],
        b"",
        1,
    );
    assert!(message.contains("answered with HTTP"), "{message}");
    let tls = fake_peer(&[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46]);
    let message = failing(
        &["quorum", "describe", "--bootstrap-controller", &tls],
        b"",
        1,
    );
    assert!(
        message.contains("answered with TLS") && message.contains("add --tls"),
        "{message}"
    );
    let silent = fake_peer(b"");
    let start = std::time::Instant::now();
    let message = failing(
        &[
            "quorum",
            "describe",
            "--bootstrap-controller",
            &silent,
            "--timeout",
            "1",
        ],
        b"",
        1,
    );
    assert!(
        message.contains("no answer within 1 s (--timeout)"),
        "{message}"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn an_unreachable_upstream_is_said_at_start() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = closed.local_addr().unwrap().to_string();
    drop(closed);
    let mut child = std::process::Command::new(crate::support::BIN)
        .args([
            "tap",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &address,
            "--no-log",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::BufRead;
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let _listening = lines.next().unwrap().unwrap();
    let warning = lines.next().unwrap().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        warning.contains("cannot be reached now") && warning.contains(&address),
        "{warning}"
    );
}
