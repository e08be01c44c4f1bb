//! Zero-copy views (feature `views`): for each struct a view type borrowing the frame's bytes,
//! its layout table for the runtime in `kafka_codec::wire::view`, one accessor per field and
//! `to_owned`.
//!
//! The checks and skips are the runtime's, driven by the table, so a struct costs here only
//! its table (a line per field), its accessors and its conversion (see the runtime's docs).

use super::code::Code;
use super::{decode_cfg, default_is_null, field_ident, is_primitive_array, snake_case, Context};
use crate::model::{DefaultValue, Field, FieldType, MessageKind, Primitive, Struct, Versions};
use crate::SchemaSet;

/// The view type of struct `name`.
fn view_name(name: &str) -> String {
    format!("{name}View")
}

/// The static holding struct `name`'s layout.
fn spec_name(name: &str) -> String {
    format!("{}_VIEW", snake_case(name).to_uppercase())
}

/// The `cfg` of a kind's views: the feature, and the owned decoding they fall back on for
/// errors and convert to.
pub(crate) fn view_cfg(kind: MessageKind) -> Option<String> {
    match kind {
        MessageKind::Data | MessageKind::Metadata => None,
        _ => Some(match decode_cfg(kind) {
            Some(decode) => format!("all(feature = \"views\", {decode})"),
            None => "feature = \"views\"".into(),
        }),
    }
}

fn versions(v: Versions) -> String {
    if v.is_empty() {
        "Versions::NONE".into()
    } else {
        format!("Versions({}, {})", v.min, v.max)
    }
}

fn kind(ty: &FieldType) -> String {
    match ty {
        FieldType::Primitive(Primitive::Bool) => "Kind::Bool".into(),
        FieldType::Primitive(Primitive::String) => "Kind::String".into(),
        FieldType::Primitive(Primitive::Bytes | Primitive::Records) => "Kind::Bytes".into(),
        FieldType::Primitive(p) => format!("Kind::Fixed({})", p.fixed_width().expect("fixed")),
        FieldType::Struct(name) => format!("Kind::Struct(&{})", spec_name(name)),
        FieldType::Array(element) => kind(element),
    }
}

/// The type an accessor returns for one value of `ty`.
fn value_type(ty: &FieldType) -> String {
    match ty {
        FieldType::Primitive(Primitive::String) => "&'a str".into(),
        FieldType::Primitive(Primitive::Bytes | Primitive::Records) => "&'a [u8]".into(),
        FieldType::Primitive(_) => super::value_type(ty),
        FieldType::Struct(name) => format!("{}<'a>", view_name(name)),
        FieldType::Array(element) => format!("ViewIter<'a, {}>", value_type(element)),
    }
}

/// `unwrap_or(..)` giving the field's default where the version lacks it.
fn or_default(field: &Field) -> String {
    let value = match (&field.ty, &field.default) {
        _ if default_is_null(field) => return "unwrap_or(None)".into(),
        (FieldType::Array(_), _) if !field.is_optional() => {
            return "unwrap_or_else(ViewIter::empty)".into()
        }
        (FieldType::Array(_), _) => return wrap(field, "ViewIter::empty()", true),
        (FieldType::Struct(name), _) => {
            let absent = format!("{}(ViewCursor::absent(self.0.version()))", view_name(name));
            return wrap(field, &absent, true);
        }
        (FieldType::Primitive(Primitive::String), DefaultValue::String(s)) => format!("{s:?}"),
        (FieldType::Primitive(Primitive::String), _) => "\"\"".into(),
        (FieldType::Primitive(Primitive::Bytes | Primitive::Records), _) => "&[]".into(),
        (FieldType::Primitive(Primitive::Uuid), DefaultValue::Uuid(bytes)) if *bytes != [0; 16] => {
            let bytes: Vec<String> = bytes.iter().map(u8::to_string).collect();
            return wrap(field, &format!("Uuid([{}])", bytes.join(", ")), false);
        }
        (FieldType::Primitive(Primitive::Uuid), _) => "Uuid::ZERO".into(),
        _ => super::field_default(field),
    };
    if field.is_optional() && !value.starts_with("Some(") {
        format!("unwrap_or(Some({value}))")
    } else {
        format!("unwrap_or({value})")
    }
}

/// `unwrap_or_else(|| value)` (a call is made only when needed).
fn wrap(field: &Field, value: &str, call: bool) -> String {
    let value = if field.is_optional() {
        format!("Some({value})")
    } else {
        value.to_string()
    };
    if call {
        format!("unwrap_or_else(|| {value})")
    } else {
        format!("unwrap_or({value})")
    }
}

fn field_doc(field: &Field) -> String {
    let mut doc = format!(" `{}`, versions {}", field.name, field.versions);
    if !field.nullable_versions.is_empty() {
        doc += &format!(", nullable {}", field.nullable_versions);
    }
    if let Some(tag) = field.tag {
        doc += &format!(", tag {tag} in versions {}", field.tagged_versions);
    }
    doc += "; its default where the version lacks it.";
    if is_primitive_array(&field.ty) || matches!(field.ty, FieldType::Array(_)) {
        doc += " Read element by element as the iterator goes.";
    }
    doc
}

pub(crate) fn emit_view(code: &mut Code, cx: &Context<'_>, s: &Struct, is_root: bool) {
    let Some(cfg) = view_cfg(cx.message.kind) else {
        return;
    };
    let (name, view, spec) = (&s.name, view_name(&s.name), spec_name(&s.name));
    let flexible = versions(cx.message.flexible_versions);

    code.blank();
    code.line(format!("#[cfg({cfg})]"));
    code.line("#[doc(hidden)]");
    code.open_line(format!(
        "pub static {spec}: StructSpec = StructSpec::new(\"{name}\", {flexible}, size_of::<{name}>(), <{name} as DecodeFields>::min_wire_size, &["
    ));
    for field in &s.fields {
        let mut line = format!(
            "FieldSpec::new(\"{}\", {}, {})",
            field.name,
            kind(&field.ty),
            versions(cx.positional(field))
        );
        if matches!(field.ty, FieldType::Array(_)) {
            line += ".array()";
        }
        let nullable = field.nullable_versions.intersect(&field.versions);
        if !nullable.is_empty() {
            line += &format!(".nullable({})", versions(nullable));
        }
        if let Some(tag) = field.tag {
            line += &format!(".tagged({tag}, {})", versions(field.tagged_versions));
        }
        if let Some(flexible) = field.flexible_versions {
            line += &format!(".flexible({})", versions(flexible));
        }
        code.line(format!("{line},"));
    }
    code.close_line("]);");

    code.blank();
    if is_root {
        code.doc(&format!(
            " A zero-copy view of a `{name}`: its bytes, checked once when the view was made; each\n \
             accessor reads its field on demand and cannot fail. `to_owned` builds the `{name}`."
        ));
    } else {
        code.doc(&format!(
            " A zero-copy view of the `{name}` struct of `{}` (see the message's view).",
            cx.message.name
        ));
    }
    code.line(format!("#[cfg({cfg})]"));
    code.line("#[derive(Clone, Copy)]");
    code.line(format!("pub struct {view}<'a>(ViewCursor<'a>);"));
    code.blank();
    code.line(format!("#[cfg({cfg})]"));
    code.line(format!("view_struct!({view}, {name}, {spec});"));
    code.blank();
    code.line(format!("#[cfg({cfg})]"));
    code.open(format!("impl<'a> {view}<'a>"));
    for (index, field) in s.fields.iter().enumerate() {
        let ty = value_type(&field.ty);
        let (ty, get) = if field.is_optional() {
            (format!("Option<{ty}>"), "get_optional")
        } else {
            (ty, "get")
        };
        code.doc(&field_doc(field));
        code.line("#[inline]");
        code.block(
            format!("pub fn {}(&self) -> {ty}", field_ident(field)),
            |code| {
                code.line(format!(
                    "self.0.{get}(&{spec}, {index}).{}",
                    or_default(field)
                ));
            },
        );
        code.blank();
    }
    code.doc(" The raw bytes of the tagged field `tag`, known or not, if the struct has it.");
    code.line("#[inline]");
    code.block(
        "pub fn raw_tagged_field(&self, tag: u32) -> Option<&'a [u8]>",
        |code| code.line(format!("self.0.raw_tagged(&{spec}, tag)")),
    );
    code.blank();
    code.doc(&format!(
        " The owned `{name}`: equal to what the owned decoder reads from the same bytes.\n \
         Strings and bytes share the input's buffer; arrays are collected."
    ));
    // `#[inline]`, like every accessor: compiled only in a crate that calls it, not once per
    // struct in every dependent's build of the library.
    code.line("#[inline]");
    code.block(format!("pub fn to_owned(self) -> {name}"), |code| {
        if !s.fields.is_empty() {
            code.line("let buf = self.0.buf();");
        }
        code.open(name);
        for field in &s.fields {
            let ident = field_ident(field);
            code.line(format!("{ident}: self.{ident}().into_owned(buf),"));
        }
        code.line(format!(
            "unknown_tagged_fields: self.0.unknown_tagged(&{spec}),"
        ));
        code.close();
    });
    code.close();
}

/// `request_view_spec(key)` / `response_view_spec(key)`: the layout of an API's body and its
/// valid versions, for the frame views, which learn the API from a header or the caller.
pub(crate) fn emit_spec_lookup(code: &mut Code, set: &SchemaSet, kind: MessageKind, krate: &str) {
    let (function, label) = match kind {
        MessageKind::Request => ("request_view_spec", "request"),
        _ => ("response_view_spec", "response"),
    };
    let cfg = view_cfg(kind).expect("requests and responses have views");
    code.doc(&format!(
        " The view layout of the {label} body of API `key` and its valid versions, if compiled."
    ));
    code.line(format!("#[cfg({cfg})]"));
    code.line("#[doc(hidden)]");
    code.open(format!(
        "pub fn {function}(key: i16) -> Option<(&'static {krate}::wire::view::StructSpec, {krate}::VersionRange)>"
    ));
    code.line(format!("use {krate}::Message;"));
    code.open("match key");
    for message in set.live().filter(|m| m.kind == kind) {
        let (Some(key), Some(api)) = (message.api_key, super::api_name(message)) else {
            continue;
        };
        if let Some(cfg) = super::api_cfg(api) {
            code.line(format!("#[cfg({cfg})]"));
        }
        let module = super::module_name(&message.name);
        code.line(format!(
            "{key} => Some((&{module}::{}, {module}::{}::VALID_VERSIONS)),",
            spec_name(&message.name),
            message.name
        ));
    }
    code.line("_ => None,");
    code.close();
    code.close();
}
