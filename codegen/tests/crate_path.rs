//! Generated code reaches `kafka-codec` only through the configured crate path, so it compiles
//! in any crate that depends on kafka-codec (under whatever name), not only inside it.

use std::path::PathBuf;

/// A request/response pair with a nested struct, a nullable struct, bytes, a uuid and a
/// tagged field: every kind of path the emitter writes.
const REQUEST: &str = r#"{"name":"PingRequest","type":"request","apiKey":1000,
  "validVersions":"0-1","flexibleVersions":"1+","fields":[
    {"name":"Id","type":"uuid","versions":"0+"},
    {"name":"Payload","type":"bytes","versions":"0+","nullableVersions":"0+"},
    {"name":"Hops","type":"[]Hop","versions":"0+"},
    {"name":"Origin","type":"Hop","versions":"1+","nullableVersions":"1+","default":"null"},
    {"name":"Note","type":"string","versions":"1+","taggedVersions":"1+","tag":0,
     "nullableVersions":"1+","default":"null"}],
  "commonStructs":[{"name":"Hop","versions":"0+","fields":[
    {"name":"Host","type":"string","versions":"0+"}]}]}"#;
const RESPONSE: &str = r#"{"name":"PingResponse","type":"response","apiKey":1000,
  "validVersions":"0-1","flexibleVersions":"1+","fields":[
    {"name":"ErrorCode","type":"int16","versions":"0+"}]}"#;

fn schema_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("kafka-codec-codegen-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("PingRequest.json"), REQUEST).unwrap();
    std::fs::write(dir.join("PingResponse.json"), RESPONSE).unwrap();
    std::fs::write(
        dir.join("error-codes.tsv"),
        "code\tname\tretriable\n0\tNONE\tfalse\n",
    )
    .unwrap();
    dir
}

/// Every generated file, concatenated.
fn generate(name: &str, configure: impl FnOnce(&mut kafka_codec_codegen::Generator)) -> String {
    let dir = schema_dir(name);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let mut generator = kafka_codec_codegen::Generator::new(&dir);
    configure(&mut generator);
    generator.generate_to(&out).unwrap();
    let mut files = vec![
        "messages.rs".to_string(),
        "api.rs".into(),
        "error_codes.rs".into(),
    ];
    for entry in std::fs::read_dir(out.join("messages")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        files.push(format!("messages/{name}"));
    }
    assert!(files.contains(&"messages/ping_request.rs".to_string()));
    let code = files
        .iter()
        .map(|file| std::fs::read_to_string(out.join(file)).unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::remove_dir_all(&dir).unwrap();
    code
}

#[test]
fn every_path_goes_through_the_crate_path() {
    let code = generate("custom", |g| {
        g.crate_path("::my_deps::codec");
    });
    // Whatever the code names outside itself starts with the configured path: no `crate::`,
    // no direct `::bytes`, `::serde_json` or `::arbitrary` that the including crate may lack.
    for forbidden in [
        "crate::",
        "kafka_codec",
        " ::bytes",
        " ::serde_json",
        " ::arbitrary",
        " bytes::",
        " serde_json::",
        "(bytes::",
        "(serde_json::",
    ] {
        assert!(
            !code.contains(forbidden),
            "generated code names {forbidden}"
        );
    }
    for used in [
        "use ::my_deps::codec::codegen::*;",
        "use ::my_deps::codec::messages;",
        "impl ::my_deps::codec::Response",
        "::my_deps::codec::Listener",
    ] {
        assert!(code.contains(used), "generated code lacks {used}");
    }
}

#[test]
fn the_default_path_is_the_crate_name() {
    let code = generate("default", |_| {});
    assert!(!code.contains("crate::"));
    assert!(code.contains("use ::kafka_codec::codegen::*;"));
}

/// Each API's module is gated by the API's feature; the codec halves by direction.
#[test]
fn features_gate_apis_and_directions() {
    let code = generate("features", |_| {});
    assert!(code.contains("#[cfg(feature = \"ping\")]\npub mod ping_request {"));
    assert!(code.contains("#[cfg(feature = \"client\")]\nimpl EncodeFields for PingRequest {"));
    assert!(code.contains("#[cfg(feature = \"broker\")]\nimpl DecodeFields for PingRequest {"));
    assert!(code.contains("#[cfg(feature = \"client\")]\nimpl DecodeFields for PingResponse {"));
    assert!(code.contains("#[cfg(feature = \"json\")]\nimpl JsonFields for Hop {"));
}

#[test]
fn a_crate_path_must_be_a_path() {
    let dir = schema_dir("bad");
    for bad in [
        "not a path",
        "",
        "::",
        "a::",
        "a::crate",
        "::self",
        "a-b",
        "fn",
        "a::1b",
    ] {
        let err = kafka_codec_codegen::Generator::new(&dir)
            .crate_path(bad)
            .generate_to(&dir)
            .unwrap_err();
        assert!(
            err.to_string().contains("not a Rust path"),
            "{bad:?}: {err}"
        );
    }
    for good in [
        "kafka_codec",
        "::kafka_codec",
        "crate::deps::codec",
        "self::k",
        "super::k",
    ] {
        let out = dir.join("good");
        kafka_codec_codegen::Generator::new(&dir)
            .crate_path(good)
            .generate_to(&out)
            .unwrap_or_else(|e| panic!("{good:?}: {e}"));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
