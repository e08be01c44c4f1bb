//! Code generator for `kafka-codec`, in the manner of `prost-build`: reads Kafka's JSON
//! message schemas and emits the Rust codec for every message.
//!
//! The data flows one way: schema text → [`parse`] (JSON with comments, Kafka's coercions) →
//! [`model`] (typed, validated the way Kafka's own generator validates) → [`emit`] (Rust
//! source, one file per schema, written in the layout a person would use).
//!
//! A crate that depends on `kafka-codec` compiles this generator first, so it keeps that build
//! short: it has no dependencies (a small strict JSON reader of its own, [`json`], reads the
//! schemas), and the code is written as text, with no Rust parser or formatter in the build.
//!
//! ```no_run
//! // build.rs
//! kafka_codec_codegen::Generator::new("schemas")
//!     .generate_to(std::env::var("OUT_DIR").unwrap())
//!     .unwrap();
//! ```

pub mod emit;
pub mod error_table;
pub mod header_versions;
pub mod json;
pub mod model;
pub mod parse;
pub mod releases;
mod validate;

use std::path::{Path, PathBuf};

pub use model::{Message, SchemaSet};

/// Everything that can go wrong while generating.
#[derive(Debug)]
pub enum Error {
    /// A schema file could not be read, or an output file written.
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The crate path given to [`Generator::crate_path`] is not a Rust path.
    CratePath {
        /// The path as given.
        path: String,
        /// What is wrong with it.
        message: String,
    },
    /// A schema breaks a rule of the dialect.
    Schema {
        /// The schema file (or message name).
        file: String,
        /// What is wrong.
        message: String,
    },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::CratePath { path, message } => {
                write!(f, "crate path {path:?} is not a Rust path: {message}")
            }
            Error::Schema { file, message } => write!(f, "{file}: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
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

    /// The crate path, checked: `::name`, `name` or `crate`/`self`/`super`, then `::name`s.
    fn checked_crate_path(&self) -> Result<&str, Error> {
        let path = self.crate_path.as_str();
        let fail = |message: &str| Error::CratePath {
            path: path.into(),
            message: message.into(),
        };
        let segments = path.strip_prefix("::").unwrap_or(path);
        for (i, segment) in segments.split("::").enumerate() {
            let mut chars = segment.chars();
            let identifier = chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
                && segment != "_";
            if !identifier {
                return Err(fail(&format!("`{segment}` is not an identifier")));
            }
            let path_keyword = matches!(segment, "crate" | "self" | "super");
            if (path_keyword && (i > 0 || path.starts_with("::")))
                || (!path_keyword && emit::is_keyword(segment))
            {
                return Err(fail(&format!("`{segment}` cannot stand there")));
            }
        }
        Ok(path)
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
                .and_then(|message| emit::check_struct_names(&message).map(|()| message))
                .map_err(|message| Error::Schema {
                    file: file.clone(),
                    message,
                })?;
            messages.push(message);
        }
        let set = SchemaSet {
            messages,
            releases: self.load_releases()?,
        };
        validate::validate_set(&set)?;
        header_versions::check_set(&set)
            .map_err(|(file, message)| Error::Schema { file, message })?;
        set.releases
            .validate(&set)
            .map_err(|message| Error::Schema {
                file: releases::RELEASES_FILE.into(),
                message,
            })?;
        Ok(set)
    }

    /// Reads `releases.tsv` and `header-versions.tsv` from the schema directory, each if it
    /// is there.
    fn load_releases(&self) -> Result<releases::Releases, Error> {
        let read = |name: &str| -> Result<Option<String>, Error> {
            let path = self.schema_dir.join(name);
            match std::fs::read_to_string(&path) {
                Ok(text) => Ok(Some(text)),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(source) => Err(Error::Io { path, source }),
            }
        };
        let schema_error = |file: &str| {
            let file = file.to_owned();
            move |message| Error::Schema { file, message }
        };
        let mut out = releases::Releases::default();
        if let Some(text) = read(releases::RELEASES_FILE)? {
            (out.names, out.cells) =
                releases::parse_releases(&text).map_err(schema_error(releases::RELEASES_FILE))?;
        }
        if let Some(text) = read(releases::HEADERS_FILE)? {
            out.headers =
                releases::parse_headers(&text).map_err(schema_error(releases::HEADERS_FILE))?;
        }
        Ok(out)
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

    /// Writes the generated code into `out_dir` and returns the schemas read:
    /// `messages.rs` (a module per schema) with `messages/<module>.rs` (each schema's structs),
    /// `api.rs` (the API table and dispatch) and `error_codes.rs` (Kafka's error table).
    pub fn generate_to(&self, out_dir: impl AsRef<Path>) -> Result<SchemaSet, Error> {
        let out_dir = out_dir.as_ref();
        let set = self.load()?;
        let errors = self.load_error_table()?;
        let krate = self.checked_crate_path()?;
        let mut files = emit::emit_messages(&set, krate);
        files.push(("api.rs".into(), emit::emit_api(&set, krate)));
        // Not included by the library: `kafka-codec`'s memory-density test includes it.
        files.push(("density_rows.rs".into(), emit::emit_density_rows(&set)));
        files.push((
            "error_codes.rs".into(),
            emit::emit_error_codes(&errors, &set, krate),
        ));
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, source }
        };
        let messages_dir = out_dir.join("messages");
        std::fs::create_dir_all(&messages_dir).map_err(io(&messages_dir))?;
        // A schema removed since the last run leaves no file behind.
        for entry in std::fs::read_dir(&messages_dir).map_err(io(&messages_dir))? {
            let path = entry.map_err(io(&messages_dir))?.path();
            let name = path.strip_prefix(out_dir).expect("inside out_dir");
            if !files.iter().any(|(file, _)| Path::new(file) == name) {
                std::fs::remove_file(&path).map_err(io(&path))?;
            }
        }
        for (file, source) in &files {
            let path = out_dir.join(file);
            std::fs::write(&path, source).map_err(io(&path))?;
        }
        Ok(set)
    }
}
