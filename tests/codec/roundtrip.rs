//! Property test over every message and every valid version: random messages valid for the
//! version survive encode → decode, `encoded_len` is exact, the segmented encode
//! (`wire::Segments`) is the plain one, and JSON → message → JSON is stable.
//!
//! Messages are made by `kafka_codec::random` from entropy bytes that `proptest` draws, so a
//! failure shrinks: shorter entropy and smaller bytes give a message with fewer elements and
//! more defaults, and the report shows the smallest message that still fails.

use arbitrary::Unstructured;
use bytes::Bytes;
use kafka_codec::json::{JsonOptions, JsonWriter};
use kafka_codec::random::{Random, RandomOptions};
use kafka_codec::wire::Segments;
use kafka_codec::MessageCodec;
use kafka_codec::RandomMessageVisitor;
use proptest::prelude::*;
use proptest::strategy::{NewTree, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use rand::rngs::SmallRng;
use rand::{RngCore, SeedableRng};

const CASES_PER_VERSION: u32 = 40;
/// Entropy per message. Measured over every cell with 64 KiB available, a message takes 52
/// bytes at the median, 852 at the 99th percentile and 10 KiB at most; past the end of its
/// entropy a message takes defaults (empty arrays, zeros).
const ENTROPY: usize = 16 * 1024;

/// `len` random bytes for `kafka_codec::random`, made in one go: a strategy per byte would
/// cost three times the property itself. A failing draw shrinks first by cutting its tail
/// (a binary search for the shortest prefix that still fails; a message past its entropy
/// takes defaults), then by zeroing one byte at a time (zero picks the first choice and the
/// smallest value).
#[derive(Debug)]
struct Entropy(usize);

impl Strategy for Entropy {
    type Tree = EntropyTree;
    type Value = Vec<u8>;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        // The runner's generator is ChaCha, slow for this much in a debug build: it seeds a
        // fast one instead.
        let mut bytes = vec![0; self.0];
        SmallRng::seed_from_u64(runner.rng().next_u64()).fill_bytes(&mut bytes);
        Ok(EntropyTree {
            len: bytes.len(),
            bytes,
            shortest_failing: self.0,
            shortest_unknown: 0,
            next_zero: 0,
            zeroed: None,
        })
    }
}

#[derive(Debug)]
struct EntropyTree {
    bytes: Vec<u8>,
    /// The current draw is `bytes[..len]`.
    len: usize,
    /// Cutting: every length below `shortest_unknown` passed; `shortest_failing` failed.
    shortest_failing: usize,
    shortest_unknown: usize,
    /// Zeroing: the next byte to try, and the last byte zeroed with its old value.
    next_zero: usize,
    zeroed: Option<(usize, u8)>,
}

impl ValueTree for EntropyTree {
    type Value = Vec<u8>;

    fn current(&self) -> Vec<u8> {
        self.bytes[..self.len].to_vec()
    }

    // Called when the current draw failed: try a simpler one.
    fn simplify(&mut self) -> bool {
        self.zeroed = None;
        self.shortest_failing = self.len;
        let middle = (self.shortest_unknown + self.shortest_failing) / 2;
        if middle < self.shortest_failing {
            self.len = middle;
            return true;
        }
        let Some(at) = (self.next_zero..self.len).find(|&at| self.bytes[at] != 0) else {
            return false;
        };
        self.zeroed = Some((at, self.bytes[at]));
        self.bytes[at] = 0;
        self.next_zero = at + 1;
        true
    }

    // Called when the simpler draw passed: go back to the last failing one.
    fn complicate(&mut self) -> bool {
        if let Some((at, byte)) = self.zeroed.take() {
            self.bytes[at] = byte;
            return true;
        }
        if self.len < self.shortest_failing {
            self.shortest_unknown = self.len + 1;
            self.len = self.shortest_failing;
            return true;
        }
        false
    }
}

struct RoundTrip {
    seed: u64,
    cells: usize,
    cases: u32,
    failures: Vec<String>,
}

/// The property for one message type at one version, from one draw of entropy.
fn check<M: MessageCodec + Random>(
    entropy: &[u8],
    version: i16,
    options: &RandomOptions,
) -> Result<(), String> {
    let mut u = Unstructured::new(entropy);
    let message = M::random(&mut u, version, options).map_err(|e| format!("random: {e}"))?;

    let encoded = message
        .encode_to_vec(version)
        .map_err(|e| format!("encode: {e}"))?;
    let len = message
        .encoded_len(version)
        .map_err(|e| format!("len: {e}"))?;
    if len != encoded.len() {
        return Err(format!("encoded_len {len} but wrote {}", encoded.len()));
    }
    // Segmented: the segments in order are the plain encode, whether every non-empty
    // `bytes`/`records` value is shared (threshold 1) or the default threshold decides.
    let mut all_shared = Segments::new().with_share_threshold(1);
    message
        .encode(&mut all_shared, version)
        .map_err(|e| format!("encode into segments: {e}"))?;
    let segmented = message
        .encode_segments(version)
        .map_err(|e| format!("encode_segments: {e}"))?;
    for segments in [all_shared, segmented] {
        if segments.len() != encoded.len() || segments.into_bytes() != encoded {
            return Err("segmented encode differs from the plain one".into());
        }
    }

    let mut input = Bytes::from(encoded.clone());
    let decoded = M::decode(&mut input, version).map_err(|e| format!("decode: {e}"))?;
    if !input.is_empty() {
        return Err(format!("{} bytes left after decode", input.len()));
    }
    if decoded != message {
        return Err(format!(
            "decode differs:\n  wrote {message:?}\n  read  {decoded:?}"
        ));
    }

    let json = message
        .to_json(version)
        .map_err(|e| format!("to_json: {e}"))?;
    let from_json =
        M::from_json(&json, version).map_err(|e| format!("from_json: {e} in {json}"))?;
    let again = from_json
        .to_json(version)
        .map_err(|e| format!("to_json again: {e}"))?;
    if again != json {
        // Kafka's JSON form leaves unknown tagged fields out, so the first round may lose one:
        // a tagged struct that differs from its default only by unknown tagged fields is
        // written, reads back as the default and is not written again (the fuzz oracle's
        // `json_round_trip` allows the same). From the second round on, JSON is stable.
        let stable = options.unknown_tagged_fields
            && M::from_json(&again, version)
                .ok()
                .and_then(|m| m.to_json(version).ok())
                .is_some_and(|third| third == again);
        if !stable {
            return Err(format!("JSON not stable:\n  {json}\n  {again}"));
        }
    }
    // Unknown tagged fields are not part of Kafka's JSON form; everything else is.
    if !options.unknown_tagged_fields && from_json != message {
        return Err(format!("JSON lost data:\n  {message:?}\n  {from_json:?}"));
    }
    // What the CLI's decode relies on to check the round trip without reading its JSON
    // back: the message with its unknown tagged fields cleared is what the JSON reads as.
    let mut cleared = message.clone();
    cleared.clear_unknown_tagged_fields();
    if cleared != from_json {
        return Err(format!(
            "clearing unknown tagged fields is not the JSON round trip:\n  {cleared:?}\n  {from_json:?}"
        ));
    }
    // The streamed text is exactly serde_json's text of the tree, pretty and compact.
    for pretty in [true, false] {
        let mut text = Vec::new();
        let mut writer = if pretty {
            JsonWriter::pretty(&mut text)
        } else {
            JsonWriter::compact(&mut text)
        };
        message
            .write_json_with(version, &JsonOptions::default(), &mut writer)
            .map_err(|e| format!("write_json_with: {e}"))?;
        writer.finish().map_err(|e| e.to_string())?;
        let expected = if pretty {
            serde_json::to_vec_pretty(&json)
        } else {
            serde_json::to_vec(&json)
        }
        .map_err(|e| e.to_string())?;
        if text != expected {
            return Err(format!(
                "streamed JSON (pretty {pretty}) differs from the tree's:\n  {}\n  {}",
                String::from_utf8_lossy(&text),
                String::from_utf8_lossy(&expected)
            ));
        }
        // Reading the text token by token gives what reading the tree gives.
        let from_text = M::from_json_slice(&text, version, &JsonOptions::default())
            .map_err(|e| format!("from_json_slice: {e}"))?;
        if from_text != from_json {
            return Err(format!(
                "JSON text reads differently from its tree:\n  {from_text:?}\n  {from_json:?}"
            ));
        }
    }
    Ok(())
}

impl RandomMessageVisitor for RoundTrip {
    fn visit<M: MessageCodec + Random>(&mut self) {
        for version in M::VALID_VERSIONS.min..=M::VALID_VERSIONS.max {
            self.cells += 1;
            // Every cell has its own stream, fixed by the seed and the cell's place.
            let mut seed = [0u8; 32];
            seed[..8].copy_from_slice(&self.seed.to_le_bytes());
            seed[8..16].copy_from_slice(&(self.cells as u64).to_le_bytes());
            let config = Config {
                cases: CASES_PER_VERSION,
                failure_persistence: None,
                ..Config::default()
            };
            let mut runner =
                TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
            let draws = (Entropy(ENTROPY), any::<bool>());
            let result = runner.run(&draws, |(entropy, unknown_tagged_fields)| {
                let options = RandomOptions {
                    unknown_tagged_fields,
                };
                check::<M>(&entropy, version, &options).map_err(TestCaseError::fail)
            });
            self.cases += CASES_PER_VERSION;
            match result {
                Ok(()) => {}
                Err(TestError::Fail(reason, (entropy, unknown_tagged_fields))) => {
                    self.failures.push(format!(
                        "{} v{version}: {reason}\n  smallest failing draw: {} bytes of entropy \
                         {entropy:02x?}, unknown tagged fields {unknown_tagged_fields}",
                        M::NAME,
                        entropy.len()
                    ))
                }
                Err(other) => self
                    .failures
                    .push(format!("{} v{version}: {other}", M::NAME)),
            }
        }
    }
}

#[test]
fn every_message_every_version_round_trips() {
    let seed = std::env::var("KAFKA_CODEC_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_u64);
    let mut visitor = RoundTrip {
        seed,
        cells: 0,
        cases: 0,
        failures: Vec::new(),
    };
    kafka_codec::visit_random_messages(&mut visitor);
    assert!(
        visitor.cells > 400,
        "only {} (message, version) cells",
        visitor.cells
    );
    assert!(
        visitor.failures.is_empty(),
        "seed {seed}: {} of {} cells failed:\n{}",
        visitor.failures.len(),
        visitor.cells,
        visitor.failures.join("\n")
    );
    eprintln!("{} cells, {} cases", visitor.cells, visitor.cases);
}
