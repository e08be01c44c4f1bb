//! Generates the codec from `schemas/` into `OUT_DIR` (see `kafka-codec-codegen`).

fn main() {
    println!("cargo:rerun-if-changed=schemas");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    if let Err(error) = kafka_codec_codegen::Generator::new("schemas").generate_to(&out_dir) {
        panic!("generating the codec from schemas/ failed: {error}");
    }
}
