//! Every file the generator writes for Kafka's schemas is Rust that `syn` can parse.
//!
//! The generator writes code as text, so nothing but this test catches a malformed line
//! before the library's own build does, where the error points into `OUT_DIR`.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn every_emitted_file_parses() {
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    let out = std::env::temp_dir().join(format!("kafka-codec-emitted-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let set = kafka_codec_codegen::Generator::new(&schemas)
        .generate_to(&out)
        .unwrap();
    let mut files = Vec::new();
    rust_files(&out, &mut files);
    // messages.rs, api.rs, error_codes.rs, density_rows.rs and one file per schema.
    assert_eq!(files.len(), 4 + set.live().count(), "{files:?}");
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        // density_rows.rs is one expression, for `include!` in expression position.
        let parsed = if file.ends_with("density_rows.rs") {
            syn::parse_str::<syn::Expr>(&text).map(drop)
        } else {
            syn::parse_file(&text).map(drop)
        };
        if let Err(error) = parsed {
            let start = error.span().start();
            let line = text.lines().nth(start.line.saturating_sub(1)).unwrap_or("");
            failures.push(format!(
                "{}:{}:{}: {error}\n    {line}",
                file.strip_prefix(&out).unwrap().display(),
                start.line,
                start.column + 1
            ));
        }
    }
    std::fs::remove_dir_all(&out).unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
