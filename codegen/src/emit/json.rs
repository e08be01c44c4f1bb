//! `write_json_fields` and `from_json_token`: Kafka's JSON form of one struct (feature
//! `json`). Writing goes token by token to a `JsonSink` and reading takes tokens from a
//! `JsonSource`, so text streams both ways and the `Value` form is the same code.

use super::code::Code;
use super::{
    binding, differs_from_default, field_default, field_ident, field_inits, json_key,
    primitive_suffix, receiver, Cond, Context,
};
use crate::model::{Field, FieldType, Primitive, Struct};

/// A statement writing the JSON of a value that is not null to the sink `out` (a fallible
/// one ends in `.at(..)?;`). `value` is a reference to it.
fn write_value(ty: &FieldType, value: &str, name: &str) -> String {
    match ty {
        FieldType::Primitive(p) => match p {
            Primitive::Float64 => {
                // The value itself: `self.x` for `&self.x`, `*value` for `value`.
                let copied = match value.strip_prefix('&') {
                    Some(place) => place.to_string(),
                    None => format!("*{value}"),
                };
                format!("json::write_f64(out, {copied}).at(\"{name}\")?;")
            }
            Primitive::Records => {
                format!("json::write_records(out, {value}, options).at(\"{name}\")?;")
            }
            _ => format!("json::write_{}(out, {value});", primitive_suffix(*p)),
        },
        FieldType::Struct(_) => format!(
            "{}.write_json_fields(version, options, out).at(\"{name}\")?;",
            receiver(value)
        ),
        FieldType::Array(element) => match element.as_ref() {
            FieldType::Struct(name_) => format!(
                "{name_}::write_json_array({value}, version, options, out).at(\"{name}\")?;"
            ),
            FieldType::Primitive(Primitive::Float64) => {
                format!("json::write_f64_array(out, {value}).at(\"{name}\")?;")
            }
            FieldType::Primitive(p) if super::is_primitive_array(ty) => format!(
                "json::write_primitive_array(out, {value}, json::write_{});",
                primitive_suffix(*p)
            ),
            FieldType::Primitive(p) => format!(
                "json::write_array(out, {value}, json::write_{});",
                primitive_suffix(*p)
            ),
            FieldType::Array(_) => unreachable!("arrays of arrays are refused by validation"),
        },
    }
}

/// The statements writing the field's key and JSON.
fn write_field(field: &Field) -> String {
    write_field_at(field, &format!("self.{}", field_ident(field)))
}

/// The statements writing the field's key and the JSON of its value at `place` (`self.x`, a
/// local) to the sink `out`.
pub(crate) fn write_field_at(field: &Field, place: &str) -> String {
    let key = json_key(field);
    let value = if field.is_optional() {
        let inner = write_value(&field.ty, "value", &field.name);
        format!(
            "match &{place} {{\n    Some(value) => {{\n        {inner}\n    }}\n    None => out.null(),\n}}"
        )
    } else {
        write_value(&field.ty, &format!("&{place}"), &field.name)
    };
    format!("out.key(\"{key}\");\n{value}")
}

pub(crate) fn emit_to_json(code: &mut Code, cx: &Context<'_>, s: &Struct) {
    let mut body = Code::new();
    body.line("out.begin_object();");
    for field in &s.fields {
        let name = &field.name;
        let insert = write_field(field);
        // Kafka shows a tagged field only when it differs from its default: always show a
        // present field, unless it is tagged at this version and holds its default.
        let show = if field.tag.is_some() {
            let differs = differs_from_default(field);
            match cx.when_within(field.tagged_versions, field.versions) {
                Cond::Never => None,
                Cond::Always => Some(differs),
                Cond::Expr(_, untagged) => Some(format!("({untagged} || {differs})")),
            }
        } else {
            None
        };
        let present = cx.when(field.versions);
        if field.ignorable {
            match show {
                Some(show) => {
                    if let Some(test) = present.and(&show) {
                        body.block(format!("if {test}"), |code| code.line(&insert));
                    }
                }
                None => present.guard(&mut body, &insert),
            }
            continue;
        }
        let insert = match show {
            Some(show) => format!("if {show} {{\n{}}}", super::indented(&insert)),
            None => insert,
        };
        let differs = differs_from_default(field);
        let refuse = format!(
            "if {differs} {{\n    return Err(EncodeError::new(EncodeErrorKind::FieldNotInVersion).at(\"{name}\"));\n}}"
        );
        match present {
            Cond::Always => body.line(insert),
            Cond::Never => body.line(refuse),
            Cond::Expr(e, _) => {
                body.open(format!("if {e}"));
                body.line(insert);
                body.close_with(&format!(" else {refuse}"));
            }
        }
    }
    body.line("out.end_object();");
    body.line("Ok(())");
    let body = body.finish();
    let version = binding(&body, "version");
    let options = binding(&body, "options");
    code.line("#[inline]");
    code.block(
        format!("fn write_json_fields(&self, {version}: i16, {options}: &JsonOptions<'_>, out: &mut dyn JsonSink) -> Result<(), EncodeError>"),
        |code| code.line(body),
    );
}

/// `Result<T, JsonError>` reading a value that is not null from the `JsonSource` named
/// `source`: one helper per field kind, so the generated code names no container type.
fn value_from_json(ty: &FieldType) -> String {
    match ty {
        FieldType::Primitive(Primitive::Records) => "json::records_of(source, options)".into(),
        FieldType::Primitive(p) => {
            format!("json::value_of(source, json::as_{})", primitive_suffix(*p))
        }
        FieldType::Struct(name) => format!("{name}::read_json_fields(source, version, options)"),
        FieldType::Array(element) => match element.as_ref() {
            FieldType::Struct(name) => format!("{name}::read_json_array(source, version, options)"),
            FieldType::Primitive(p) if super::is_primitive_array(ty) => format!(
                "json::array_of(source, json::as_{}).map(PrimitiveArray::from)",
                primitive_suffix(*p)
            ),
            FieldType::Primitive(p) => {
                format!("json::array_of(source, json::as_{})", primitive_suffix(*p))
            }
            FieldType::Array(_) => unreachable!("arrays of arrays are refused by validation"),
        },
    }
}

/// `Result<Option<T>, JsonError>` reading a field where null may appear.
fn nullable_from_json(ty: &FieldType) -> String {
    match ty {
        FieldType::Primitive(Primitive::Records) => {
            "json::nullable_records_of(source, options)".into()
        }
        FieldType::Primitive(p) => {
            format!(
                "json::nullable_of(source, json::as_{})",
                primitive_suffix(*p)
            )
        }
        FieldType::Struct(name) => {
            format!("{name}::read_nullable_json_fields(source, version, options)")
        }
        FieldType::Array(element) => match element.as_ref() {
            FieldType::Struct(name) => {
                format!("{name}::read_nullable_json_array(source, version, options)")
            }
            FieldType::Primitive(p) if super::is_primitive_array(ty) => format!(
                "json::nullable_array_of(source, json::as_{}).map(|array| array.map(PrimitiveArray::from))",
                primitive_suffix(*p)
            ),
            FieldType::Primitive(p) => format!(
                "json::nullable_array_of(source, json::as_{})",
                primitive_suffix(*p)
            ),
            FieldType::Array(_) => unreachable!("arrays of arrays are refused by validation"),
        },
    }
}

/// The local that holds a field while the struct is read: the field's name, unless that is
/// one of the reader's own bindings.
fn local_ident(field: &Field) -> String {
    let ident = field_ident(field);
    match ident.as_str() {
        "json" | "key" | "source" | "version" | "options" => format!("{ident}_value"),
        _ => ident,
    }
}

/// `JSON_KEYS`: the struct's keys in every version, in schema order, so that a key the
/// struct does not have is answered with the closest of them ("did you mean").
pub(crate) fn emit_json_keys(code: &mut Code, s: &Struct) {
    let keys: Vec<String> = s
        .fields
        .iter()
        .map(|field| format!("\"{}\"", json_key(field)))
        .collect();
    code.line(format!(
        "const JSON_KEYS: &'static [&'static str] = &[{}];",
        keys.join(", ")
    ));
}

/// `from_json_token`: the struct from an object token. Each key's value is read where it
/// comes in the input, into a slot per field; then a missing field is refused or defaulted.
pub(crate) fn emit_from_json(code: &mut Code, cx: &Context<'_>, s: &Struct) {
    let mut body = Code::new();
    // Kafka's JSON reader refuses to read a struct at a version the struct does not exist in.
    // Only a field the version lacks can lead here (its key is read at any version), so a
    // nested struct in such a field is refused, as Kafka refuses it.
    let absent = match cx.when(s.versions) {
        Cond::Always => None,
        Cond::Expr(_, absent) => Some(absent),
        // Never valid: still a run-time test, so the rest is not unreachable code.
        Cond::Never => Some(format!(
            "!({}..={}).contains(&version)",
            s.versions.min, s.versions.max
        )),
    };
    if let Some(absent) = absent {
        body.block(format!("if {absent}"), |code| {
            code.line(format!(
                "return Err(JsonError::new(JsonErrorKind::UnsupportedVersion {{ version, valid: \"{}\".into() }}));",
                s.versions
            ));
        });
    }
    if s.fields.is_empty() {
        body.line(
            "json::fields_of(json, &mut |key, source| json::unknown_key(key, Self::JSON_KEYS, source, options))?;",
        );
        body.line("Ok(Self::default())");
    } else {
        for field in &s.fields {
            body.line(format!("let mut {} = None;", local_ident(field)));
        }
        // Every field's key is read at any version: a key of a field the version lacks
        // follows Kafka's rules when the message is written; any other key is refused
        // unless the reader is lenient.
        // No closure or generic call per field: each arm is straight-line code, so the
        // reader costs the compiler little more than the fields' own readers.
        body.open("json::fields_of(json, &mut |key, source|");
        body.open("match key");
        for field in &s.fields {
            let key = json_key(field);
            let local = local_ident(field);
            let read = if field.is_optional() {
                nullable_from_json(&field.ty)
            } else {
                value_from_json(&field.ty)
            };
            body.open(format!("\"{key}\" =>"));
            body.line(format!(
                "json::first({local}.is_none(), \"{key}\", options)?;"
            ));
            body.line(format!("{local} = Some({read}.at(\"{key}\")?);"));
            body.close();
        }
        body.line("_ => json::unknown_key(key, Self::JSON_KEYS, source, options)?,");
        body.close();
        body.line("Ok(())");
        body.close_with(")?;");
        for field in &s.fields {
            let key = json_key(field);
            let local = local_ident(field);
            // Error paths name the key the user typed.
            let missing =
                format!("return Err(JsonError::new(JsonErrorKind::MissingField).at(\"{key}\"))");
            // Kafka requires the key exactly where the field is present and not tagged;
            // elsewhere a missing key leaves the default.
            body.open(format!("let {local} = match {local}"));
            body.line("Some(value) => value,");
            match cx.when(cx.positional(field)) {
                Cond::Always => body.line(format!("None => {missing},")),
                Cond::Never => body.line(format!("None => {},", field_default(field))),
                Cond::Expr(e, _) => {
                    body.line(format!("None if {e} => {missing},"));
                    body.line(format!("None => {},", field_default(field)));
                }
            }
            body.close_with(";");
        }
        body.open("Ok(Self");
        field_inits(&mut body, s, local_ident);
        body.line("unknown_tagged_fields: Default::default(),");
        body.close_with(")");
    }
    let body = body.finish();
    let version = binding(&body, "version");
    if !s.fields.is_empty() {
        // One `match` shape for every field, whether a missing key is refused or defaulted.
        code.line("#[allow(clippy::manual_unwrap_or, clippy::manual_unwrap_or_default)]");
    }
    code.line("#[inline]");
    code.block(
        format!("fn from_json_token(json: Json<'_>, {version}: i16, options: &JsonOptions<'_>) -> Result<Self, JsonError>"),
        |code| code.line(body),
    );
}

/// `clear_unknown_tagged_fields`: the struct as its JSON form gives it back (which shows no
/// unknown tagged fields), here and in every nested struct.
pub(crate) fn emit_clear_unknown(code: &mut Code, s: &Struct) {
    code.line("#[inline]");
    code.block("fn clear_unknown_tagged_fields(&mut self)", |code| {
        // `Default` whatever container holds them.
        code.line("self.unknown_tagged_fields = Default::default();");
        for field in &s.fields {
            let ident = field_ident(field);
            let clear = |place: &str| match &field.ty {
                FieldType::Struct(_) => Some(format!("{place}.clear_unknown_tagged_fields();")),
                FieldType::Array(element) if matches!(element.as_ref(), FieldType::Struct(_)) => {
                    Some(format!(
                        "{place}.iter_mut().for_each(JsonFields::clear_unknown_tagged_fields);"
                    ))
                }
                _ => None,
            };
            if field.is_optional() {
                if let Some(clear) = clear("value") {
                    code.block(format!("if let Some(value) = &mut self.{ident}"), |code| {
                        code.line(clear)
                    });
                }
            } else if let Some(clear) = clear(&format!("self.{ident}")) {
                code.line(clear);
            }
        }
    });
}
