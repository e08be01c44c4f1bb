//! Every file the generator writes for Kafka's schemas is Rust that `syn` can parse, and its
//! public types follow the semver policy (`docs/semver.md`).
//!
//! The generator writes code as text, so nothing but this test catches a malformed line
//! before the library's own build does, where the error points into `OUT_DIR`.

use std::path::{Path, PathBuf};

// `Ident::unraw`: a field `r#type` has the setter `with_type`.
use syn::ext::IdentExt as _;

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

/// The generated files of Kafka's schemas, by path relative to the output directory. `test`
/// names the directory, so that tests running at once do not share it.
fn emitted(test: &str) -> Vec<(PathBuf, String)> {
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
    let out = std::env::temp_dir().join(format!("kafka-codec-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    kafka_codec_codegen::Generator::new(&schemas)
        .generate_to(&out)
        .unwrap();
    let mut files = Vec::new();
    rust_files(&out, &mut files);
    let texts = files
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).unwrap();
            (file.strip_prefix(&out).unwrap().to_path_buf(), text)
        })
        .collect();
    std::fs::remove_dir_all(&out).unwrap();
    texts
}

fn is_non_exhaustive(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|attr| attr.path().is_ident("non_exhaustive"))
}

/// The policy that makes a Kafka schema bump a minor release (`docs/semver.md`): every public
/// struct and enum the generator writes is `#[non_exhaustive]`, so a field or variant Kafka
/// adds breaks no dependent, and every field of a struct has its `with_<field>` setter, the
/// only way a dependent can set it when building a message.
#[test]
fn every_generated_type_is_non_exhaustive_and_every_field_has_a_setter() {
    let mut failures = Vec::new();
    let (mut structs, mut enums, mut setters, mut views) = (0, 0, 0, 0);
    for (path, text) in emitted("semver-policy") {
        // density_rows.rs is an expression (only a test includes it) and declares no type.
        if path.ends_with("density_rows.rs") {
            continue;
        }
        let file = syn::parse_file(&text).unwrap();
        // Inherent methods by type: the setters.
        let mut methods: std::collections::HashMap<String, Vec<String>> = Default::default();
        for item in &file.items {
            if let syn::Item::Impl(block) = item {
                if let (None, syn::Type::Path(ty)) = (&block.trait_, &*block.self_ty) {
                    let name = ty.path.segments.last().unwrap().ident.to_string();
                    for item in &block.items {
                        if let syn::ImplItem::Fn(method) = item {
                            let public = matches!(method.vis, syn::Visibility::Public(_));
                            if public {
                                let method = method.sig.ident.to_string();
                                methods.entry(name.clone()).or_default().push(method);
                            }
                        }
                    }
                }
            }
        }
        for item in &file.items {
            match item {
                // A view (`FooView<'a>`) holds one private field, its cursor: no dependent can
                // build or destructure it, so Kafka adding a field breaks nobody; it has
                // accessors, not setters.
                syn::Item::Struct(s)
                    if s.ident.to_string().ends_with("View")
                        && s.fields
                            .iter()
                            .all(|f| matches!(f.vis, syn::Visibility::Inherited)) =>
                {
                    views += 1;
                }
                // A view's fields (`FooFields<'a>`, what `fields()` reads): read from the wire,
                // never built by a dependent, so `#[non_exhaustive]` suffices; no setters.
                syn::Item::Struct(s)
                    if s.ident.to_string().ends_with("Fields")
                        && s.generics.lifetimes().next().is_some() =>
                {
                    let exhaustive = !is_non_exhaustive(&s.attrs);
                    failures.extend(
                        exhaustive.then(|| format!("{}: struct {}", path.display(), s.ident)),
                    );
                }
                syn::Item::Struct(s) if matches!(s.vis, syn::Visibility::Public(_)) => {
                    structs += 1;
                    let name = s.ident.to_string();
                    if !is_non_exhaustive(&s.attrs) {
                        failures.push(format!("{}: struct {name}", path.display()));
                    }
                    for field in &s.fields {
                        let field = field.ident.as_ref().unwrap().unraw().to_string();
                        let setter = format!("with_{field}");
                        if methods.get(&name).is_some_and(|m| m.contains(&setter)) {
                            setters += 1;
                        } else {
                            failures.push(format!("{}: {name}::{setter}", path.display()));
                        }
                    }
                }
                syn::Item::Enum(e) if matches!(e.vis, syn::Visibility::Public(_)) => {
                    enums += 1;
                    if !is_non_exhaustive(&e.attrs) {
                        failures.push(format!("{}: enum {}", path.display(), e.ident));
                    }
                }
                _ => {}
            }
        }
    }
    assert!(failures.is_empty(), "missing:\n{}", failures.join("\n"));
    // ApiKey, Request and Response; one struct per schema at least; a setter per field.
    assert_eq!(enums, 3);
    assert!(
        structs > 400 && setters > 2000,
        "{structs} structs, {setters} setters"
    );
    // A view beside every struct of every request, response and header.
    assert!(views > 400, "{views} views");
}
