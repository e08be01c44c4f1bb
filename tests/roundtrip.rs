//! Property test over every message and every valid version: random messages valid for the
//! version survive encode → decode, `encoded_len` is exact, and JSON → message → JSON is stable.

use arbitrary::Unstructured;
use bytes::Bytes;
use kafka_codec::random::{Random, RandomOptions};
use kafka_codec::{Message, RandomMessageVisitor};
use rand::{rngs::SmallRng, RngCore, SeedableRng};

const CASES_PER_VERSION: usize = 40;

struct RoundTrip {
    rng: SmallRng,
    cells: usize,
    cases: usize,
    failures: Vec<String>,
}

impl RoundTrip {
    fn check<M: Message + Random>(
        &mut self,
        version: i16,
        options: &RandomOptions,
    ) -> Result<(), String> {
        let mut entropy = vec![0u8; 64 * 1024];
        self.rng.fill_bytes(&mut entropy);
        let mut u = Unstructured::new(&entropy);
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
            return Err(format!("JSON not stable:\n  {json}\n  {again}"));
        }
        // Unknown tagged fields are not part of Kafka's JSON form; everything else is.
        if !options.unknown_tagged_fields && from_json != message {
            return Err(format!("JSON lost data:\n  {message:?}\n  {from_json:?}"));
        }
        Ok(())
    }
}

impl RandomMessageVisitor for RoundTrip {
    fn visit<M: Message + Random>(&mut self) {
        for version in M::VALID_VERSIONS.min..=M::VALID_VERSIONS.max {
            self.cells += 1;
            for case in 0..CASES_PER_VERSION {
                let options = RandomOptions {
                    unknown_tagged_fields: case % 2 == 1,
                };
                self.cases += 1;
                if let Err(problem) = self.check::<M>(version, &options) {
                    self.failures
                        .push(format!("{} v{version} case {case}: {problem}", M::NAME));
                    break;
                }
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
        rng: SmallRng::seed_from_u64(seed),
        cells: 0,
        cases: 0,
        failures: Vec::new(),
    };
    kafka_codec::api::visit_random_messages(&mut visitor);
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
