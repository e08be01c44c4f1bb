//! The struct definition, its `Default`, and the trait impls that tie the pieces together.

use super::code::Code;
use super::{
    decode, decode_cfg, encode, encode_cfg, field_default, field_ident, field_type, json, random,
    size, transcode, transcode_cfg, view, Context,
};
use crate::model::{Field, MessageKind, Struct};

fn field_doc(field: &Field) -> String {
    let mut doc = format!(
        " `{}`: `{}`, versions {}",
        field.name, field.ty, field.versions
    );
    if !field.nullable_versions.is_empty() {
        doc += &format!(", nullable {}", field.nullable_versions);
    }
    if let Some(tag) = field.tag {
        doc += &format!(", tag {tag} in versions {}", field.tagged_versions);
    }
    if field.ignorable {
        doc += ", ignorable";
    }
    if field.map_key {
        doc += ", map key";
    }
    if let Some(entity) = field.entity_type.as_deref().filter(|e| *e != "unknown") {
        doc += &format!(", entity {entity}");
    }
    doc.push('.');
    doc
}

/// Writes `#[cfg(..)]` when there is a condition.
pub(crate) fn cfg_attribute(code: &mut Code, cfg: Option<&str>) {
    if let Some(cfg) = cfg {
        code.line(format!("#[cfg({cfg})]"));
    }
}

pub(crate) fn emit_struct(code: &mut Code, cx: &Context<'_>, s: &Struct, is_root: bool) {
    let name = &s.name;
    if is_root {
        code.doc(&format!(" The `{name}` message."));
    } else {
        code.doc(&format!(" The `{name}` struct of `{}`.", cx.message.name));
    }
    let derivable = super::derivable_default(&s.fields);
    if derivable {
        code.line("#[derive(Debug, Clone, PartialEq, Default)]");
    } else {
        code.line("#[derive(Debug, Clone, PartialEq)]");
    }
    // A Kafka release that adds a field is then a minor release of this crate: dependents
    // cannot write the struct as a literal or an exhaustive pattern, so a new field breaks
    // nobody. They build it with `Default` and the setters below (docs/semver.md).
    code.line("#[non_exhaustive]");
    code.block(format!("pub struct {name}"), |code| {
        for field in &s.fields {
            code.doc(&field_doc(field));
            code.line(format!(
                "pub {}: {},",
                field_ident(field),
                field_type(field)
            ));
        }
        code.doc(
            " Tagged fields this crate does not know, kept so they are written back unchanged.",
        );
        code.line("pub unknown_tagged_fields: TaggedFields,");
    });

    if !derivable {
        code.blank();
        code.block(format!("impl Default for {name}"), |code| {
            code.block("fn default() -> Self", |code| {
                code.block(name, |code| {
                    for field in &s.fields {
                        code.line(format!("{}: {},", field_ident(field), field_default(field)));
                    }
                    code.line("unknown_tagged_fields: TaggedFields::new(),");
                });
            });
        });
    }

    code.blank();
    emit_setters(code, s);

    if is_root {
        code.blank();
        emit_message_impl(code, cx);
    }

    let kind = cx.message.kind;
    code.blank();
    cfg_attribute(code, decode_cfg(kind));
    code.block(format!("impl DecodeFields for {name}"), |code| {
        decode::emit_decode(code, cx, s);
        code.blank();
        size::emit_min_wire_size(code, cx, s);
    });

    code.blank();
    cfg_attribute(code, encode_cfg(kind));
    code.block(format!("impl EncodeFields for {name}"), |code| {
        encode::emit_encode(code, cx, s);
        code.blank();
        encode::emit_len(code, cx, s);
    });

    code.blank();
    code.line("#[cfg(feature = \"json\")]");
    code.block(format!("impl JsonFields for {name}"), |code| {
        json::emit_json_keys(code, s);
        code.blank();
        json::emit_to_json(code, cx, s);
        code.blank();
        json::emit_from_json(code, cx, s);
        code.blank();
        json::emit_clear_unknown(code, s);
    });

    code.blank();
    code.line(format!("#[cfg({})]", transcode_cfg(kind)));
    code.block(format!("impl TranscodeFields for {name}"), |code| {
        transcode::emit_transcode(code, cx, s);
    });

    code.blank();
    code.line("#[cfg(feature = \"arbitrary\")]");
    code.block(format!("impl Random for {name}"), |code| {
        random::emit_random(code, cx, s);
    });

    view::emit_view(code, cx, s, is_root);
}

/// `with_<field>(self, value) -> Self` for every field: how a dependent builds a struct it
/// cannot write as a literal (it is `#[non_exhaustive]`).
///
/// The value is the field's type, not `impl Into<_>`: an integer literal would fall back to
/// `i32` and not convert into an `i16` field, and `"x".into()` would have no target type.
/// No `#[must_use]`: the setter takes `self` by value, so a discarded result leaves nothing
/// to use by mistake. `#[inline]`, like the codecs, so a setter is compiled only in a crate
/// that calls it rather than once per field in the library.
fn emit_setters(code: &mut Code, s: &Struct) {
    let setter = |code: &mut Code, ident: &str, ty: &str| {
        let bare = ident.strip_prefix("r#").unwrap_or(ident);
        code.doc(&format!(" Sets `{bare}` and returns `self`."));
        code.line("#[inline]");
        code.block(
            format!("pub fn with_{bare}(mut self, value: {ty}) -> Self"),
            |code| {
                code.line(format!("self.{ident} = value;"));
                code.line("self");
            },
        );
    };
    code.block(format!("impl {}", s.name), |code| {
        for field in &s.fields {
            setter(code, &field_ident(field), &field_type(field));
            code.blank();
        }
        setter(code, "unknown_tagged_fields", "TaggedFields");
    });
}

fn emit_message_impl(code: &mut Code, cx: &Context<'_>) {
    let message = cx.message;
    let kind = match message.kind {
        MessageKind::Request => "Request",
        MessageKind::Response => "Response",
        MessageKind::Header => "Header",
        MessageKind::Data | MessageKind::Metadata => "Data",
    };
    let api_key = match message.api_key {
        Some(key) if matches!(message.kind, MessageKind::Request | MessageKind::Response) => {
            format!("Some({key})")
        }
        _ => "None".into(),
    };
    let (min, max) = (message.valid_versions.min, message.valid_versions.max);
    let flexible = match message.first_flexible() {
        Some(v) => format!("Some({v})"),
        None => "None".into(),
    };
    code.block(format!("impl Message for {}", message.name), |code| {
        code.line(format!("const NAME: &'static str = \"{}\";", message.name));
        code.line(format!("const KIND: MessageKind = MessageKind::{kind};"));
        code.line(format!("const API_KEY: Option<i16> = {api_key};"));
        code.line(format!(
            "const VALID_VERSIONS: VersionRange = VersionRange::new({min}, {max});"
        ));
        code.line(format!(
            "const FIRST_FLEXIBLE_VERSION: Option<i16> = {flexible};"
        ));
    });
}
