//! Code generator for `kafka-codec`, in the manner of `prost-build`: reads Kafka's JSON
//! message schemas and emits the Rust codec for every message.
//!
//! The data flows one way: schema text → [`parse`] (JSON with comments, Kafka's coercions) →
//! [`model`] (typed, validated the way Kafka's own generator validates) → [`emit`] (Rust
//! tokens, formatted with `prettyplease`).
//!
//! ```no_run
//! // build.rs
//! kafka_codec_codegen::Generator::new("schemas")
//!     .generate_to(std::env::var("OUT_DIR").unwrap())
//!     .unwrap();
//! ```

pub mod emit;
pub mod error_table;
pub mod model;
pub mod parse;
mod validate;

use std::path::{Path, PathBuf};

pub use model::{Message, SchemaSet};

/// Everything that can go wrong while generating.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A schema file could not be read.
    #[error("reading {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The crate path given to [`Generator::crate_path`] is not a Rust path.
    #[error("crate path {path:?} is not a Rust path: {message}")]
    CratePath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// A schema breaks a rule of the dialect.
    #[error("{file}: {message}")]
    Schema {
        /// The schema file (or message name).
        file: String,
        /// What is wrong.
        message: String,
    },
}

/// Builds the codec from a directory of schema files.
pub struct Generator {
    schema_dir: PathBuf,
    crate_path: String,
}

impl Generator {
    /// A generator for the `*.json` files in `schema_dir`.
    pub fn new(schema_dir: impl Into<PathBuf>) -> Self {
        Generator {
            schema_dir: schema_dir.into(),
            crate_path: "::kafka_codec".into(),
        }
    }

    /// The path by which generated code reaches the `kafka-codec` crate (default
    /// `::kafka_codec`), as `prost-build`'s `prost_path`: for a crate that renames its
    /// dependency, or re-exports it. Every item the generated code uses (the traits, `wire`,
    /// `json`, and `bytes`/`serde_json` through their re-exports) is reached through it, so
    /// the including crate needs no other dependency.
    pub fn crate_path(&mut self, path: impl Into<String>) -> &mut Self {
        self.crate_path = path.into();
        self
    }

    fn crate_tokens(&self) -> Result<proc_macro2::TokenStream, Error> {
        syn::parse_str::<syn::Path>(&self.crate_path)
            .map(|path| quote::quote!(#path))
            .map_err(|e| Error::CratePath {
                path: self.crate_path.clone(),
                message: e.to_string(),
            })
    }

    /// Reads and validates every schema.
    pub fn load(&self) -> Result<SchemaSet, Error> {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&self.schema_dir)
            .map_err(|source| Error::Io {
                path: self.schema_dir.clone(),
                source,
            })?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .collect();
        // Directory order differs between machines; sort so output is reproducible.
        paths.sort();
        let mut messages = Vec::new();
        for path in &paths {
            let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
                path: path.clone(),
                source,
            })?;
            let file = path.file_name().unwrap().to_string_lossy().into_owned();
            let raw = parse::parse_schema(&text).map_err(|message| Error::Schema {
                file: file.clone(),
                message,
            })?;
            let message = model::Message::from_raw(raw)
                .and_then(|message| validate::validate_message(&message).map(|()| message))
                .map_err(|message| Error::Schema {
                    file: file.clone(),
                    message,
                })?;
            messages.push(message);
        }
        let set = SchemaSet { messages };
        validate::validate_set(&set)?;
        Ok(set)
    }

    /// Reads Kafka's error table, `error-codes.tsv` in the schema directory.
    pub fn load_error_table(&self) -> Result<Vec<error_table::ErrorEntry>, Error> {
        let path = self.schema_dir.join(error_table::FILE_NAME);
        let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        error_table::parse(&text).map_err(|message| Error::Schema {
            file: error_table::FILE_NAME.into(),
            message,
        })
    }

    /// Writes `messages.rs` (every message), `api.rs` (the API table and dispatch) and
    /// `error_codes.rs` (Kafka's error table) into `out_dir`, formatted, and returns the
    /// schema files read.
    pub fn generate_to(&self, out_dir: impl AsRef<Path>) -> Result<SchemaSet, Error> {
        let set = self.load()?;
        let errors = self.load_error_table()?;
        let krate = self.crate_tokens()?;
        for (file, source) in [
            ("messages.rs", emit::emit_all(&set, &krate)),
            ("api.rs", emit::emit_api(&set, &krate)),
            (
                "error_codes.rs",
                emit::emit_error_codes(&errors, &set, &krate),
            ),
        ] {
            let path = out_dir.as_ref().join(file);
            std::fs::write(&path, source).map_err(|source| Error::Io { path, source })?;
        }
        Ok(set)
    }
}
