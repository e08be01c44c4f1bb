//! `encode_fields` and `fields_len`: writing one struct, and its exact size.
//!
//! As with decoding, nested structs and arrays go through shared functions (the struct's own
//! `EncodeFields` methods and `wire`'s), never through a closure per field.

use super::code::Code;
use super::runs::{pieces, Piece, Run};
use super::{
    binding, differs_from_default, field_ident, receiver, tagged_fields, with_flexible_binding,
    Cond, Context,
};
use crate::model::{Field, FieldType, Primitive, Struct, Versions};

/// A statement writing a fixed-width value `place` (`self.x`), which cannot fail.
fn put_fixed(p: Primitive, place: &str) -> String {
    match p {
        Primitive::Bool => format!("wire::put_bool(buf, {place});"),
        Primitive::Int8 => format!("buf.put_i8({place});"),
        Primitive::Int16 => format!("buf.put_i16({place});"),
        Primitive::Uint16 => format!("buf.put_u16({place});"),
        Primitive::Int32 => format!("buf.put_i32({place});"),
        Primitive::Uint32 => format!("buf.put_u32({place});"),
        Primitive::Int64 => format!("buf.put_i64({place});"),
        Primitive::Float64 => format!("buf.put_f64({place});"),
        Primitive::Uuid => format!("wire::put_uuid(buf, &{place});"),
        _ => unreachable!("not fixed-width"),
    }
}

/// `Result<(), EncodeError>` writing a value that is not null; `value` is a reference.
fn write_value(ty: &FieldType, value: &str, compact: &str) -> String {
    match ty {
        FieldType::Primitive(Primitive::String) => {
            format!("wire::put_string(buf, {value}, {compact})")
        }
        FieldType::Primitive(Primitive::Bytes | Primitive::Records) => {
            format!("wire::put_shared_bytes(buf, {value}, {compact})")
        }
        FieldType::Primitive(p) => unreachable!("{p:?} is written by put_fixed"),
        FieldType::Struct(_) => format!("{}.encode_fields(buf, version)", receiver(value)),
        FieldType::Array(element) => match element.as_ref() {
            FieldType::Struct(name) => {
                format!("{name}::encode_array({value}, buf, {compact}, version)")
            }
            FieldType::Primitive(Primitive::String) => {
                format!("wire::put_string_array(buf, {value}, {compact})")
            }
            FieldType::Primitive(_) if super::is_primitive_array(ty) => {
                format!("wire::put_primitive_array(buf, {value}, {compact})")
            }
            FieldType::Primitive(p) if p.fixed_width().is_some() => {
                format!("wire::put_fixed_array(buf, {value}, {compact})")
            }
            FieldType::Primitive(_) => format!(
                "wire::put_array(buf, {value}, {compact}, |buf, element| wire::put_shared_bytes(buf, element, {compact}))"
            ),
            FieldType::Array(_) => unreachable!("arrays of arrays are refused by validation"),
        },
    }
}

/// `Result<(), EncodeError>` writing an optional field where null is allowed.
fn write_nullable(field: &Field, compact: &str) -> String {
    let ident = field_ident(field);
    match &field.ty {
        FieldType::Primitive(Primitive::String) => {
            format!("wire::put_nullable_string(buf, self.{ident}.as_deref(), {compact})")
        }
        FieldType::Primitive(_) => {
            format!("wire::put_nullable_shared_bytes(buf, self.{ident}.as_ref(), {compact})")
        }
        FieldType::Struct(name) => {
            format!("{name}::encode_nullable(self.{ident}.as_ref(), buf, version)")
        }
        FieldType::Array(element) => match element.as_ref() {
            FieldType::Struct(name) => format!(
                "{name}::encode_nullable_array(self.{ident}.as_deref(), buf, {compact}, version)"
            ),
            FieldType::Primitive(Primitive::String) => format!(
                "wire::put_nullable_string_array(buf, self.{ident}.as_deref(), {compact})"
            ),
            FieldType::Primitive(_) if super::is_primitive_array(&field.ty) => format!(
                "wire::put_nullable_primitive_array(buf, self.{ident}.as_ref(), {compact})"
            ),
            FieldType::Primitive(p) if p.fixed_width().is_some() => format!(
                "wire::put_nullable_fixed_array(buf, self.{ident}.as_deref(), {compact})"
            ),
            FieldType::Primitive(_) => format!(
                "wire::put_nullable_array(buf, self.{ident}.as_deref(), {compact}, |buf, element| wire::put_shared_bytes(buf, element, {compact}))"
            ),
            FieldType::Array(_) => unreachable!("arrays of arrays are refused by validation"),
        },
    }
}

/// How to borrow an `Option` field's inner value (`bytes`/`records` as `&Bytes`, which
/// `wire::Segments` can share).
fn borrow_option(field: &Field) -> String {
    let ident = field_ident(field);
    match &field.ty {
        FieldType::Struct(_) | FieldType::Primitive(Primitive::Bytes | Primitive::Records) => {
            format!("self.{ident}.as_ref()")
        }
        ty if super::is_primitive_array(ty) => format!("self.{ident}.as_ref()"),
        _ => format!("self.{ident}.as_deref()"),
    }
}

/// Statements writing the field within `scope` versions; errors name the field.
fn write_field(cx: &Context<'_>, field: &Field, scope: Versions) -> String {
    let name = &field.name;
    let ident = field_ident(field);
    if let Some(p) = field.ty.primitive().filter(|p| p.fixed_width().is_some()) {
        return put_fixed(p, &format!("self.{ident}"));
    }
    let compact = cx.compact(field);
    if !field.is_optional() {
        let write = write_value(&field.ty, &format!("&self.{ident}"), &compact);
        return format!("{write}.at(\"{name}\")?;");
    }
    let nullable = format!("{}.at(\"{name}\")?;", write_nullable(field, &compact));
    // Where the version does not allow null, the value must be there.
    let value = format!("wire::non_null({}).at(\"{name}\")?", borrow_option(field));
    let non_null = format!(
        "{}.at(\"{name}\")?;",
        write_value(&field.ty, &value, &compact)
    );
    match cx.when_within(field.nullable_versions, scope) {
        Cond::Always => nullable,
        Cond::Never => non_null,
        Cond::Expr(e, _) => super::if_else(&e, &nullable, &non_null),
    }
}

/// `usize`: bytes of a value that is not null; `value` is a reference.
fn value_len(ty: &FieldType, value: &str, compact: &str) -> String {
    match ty {
        FieldType::Primitive(Primitive::String) => format!("wire::string_len({value}, {compact})"),
        FieldType::Primitive(Primitive::Bytes | Primitive::Records) => {
            format!("wire::bytes_len({value}, {compact})")
        }
        FieldType::Primitive(p) => p.fixed_width().expect("fixed width").to_string(),
        FieldType::Struct(_) => format!("{}.fields_len(version)", receiver(value)),
        FieldType::Array(element) => match element.as_ref() {
            FieldType::Struct(name) => format!("{name}::array_len({value}, {compact}, version)"),
            FieldType::Primitive(Primitive::String) => {
                format!("wire::string_array_len({value}, {compact})")
            }
            FieldType::Primitive(_) if super::is_primitive_array(ty) => {
                format!("wire::primitive_array_len({value}, {compact})")
            }
            FieldType::Primitive(p) if p.fixed_width().is_some() => {
                format!("wire::fixed_array_len({value}, {compact})")
            }
            FieldType::Primitive(_) => format!(
                "wire::array_len({value}, {compact}, |element| wire::bytes_len(element, {compact}))"
            ),
            FieldType::Array(_) => unreachable!("arrays of arrays are refused by validation"),
        },
    }
}

/// `usize`: bytes the field takes within `scope` versions.
fn field_len(cx: &Context<'_>, field: &Field, scope: Versions) -> String {
    let ident = field_ident(field);
    let compact = cx.compact(field);
    if !field.is_optional() {
        return value_len(&field.ty, &format!("&self.{ident}"), &compact);
    }
    let borrowed = borrow_option(field);
    match &field.ty {
        FieldType::Primitive(Primitive::String) => {
            format!("wire::nullable_string_len({borrowed}, {compact})")
        }
        FieldType::Primitive(_) => {
            format!("wire::nullable_bytes_len(self.{ident}.as_deref(), {compact})")
        }
        FieldType::Array(element) => match element.as_ref() {
            FieldType::Struct(name) => {
                format!("{name}::nullable_array_len({borrowed}, {compact}, version)")
            }
            FieldType::Primitive(Primitive::String) => {
                format!("wire::nullable_string_array_len({borrowed}, {compact})")
            }
            FieldType::Primitive(_) if super::is_primitive_array(&field.ty) => {
                format!("wire::nullable_primitive_array_len({borrowed}, {compact})")
            }
            FieldType::Primitive(p) if p.fixed_width().is_some() => {
                format!("wire::nullable_fixed_array_len({borrowed}, {compact})")
            }
            FieldType::Primitive(_) => format!(
                "{borrowed}.map_or(wire::array_prefix_len(0, {compact}), |value| {})",
                value_len(&field.ty, "value", &compact)
            ),
            FieldType::Array(_) => unreachable!("arrays of arrays are refused by validation"),
        },
        // A nullable struct carries a one-byte marker; a non-nullable one does not.
        FieldType::Struct(_) => {
            let with_marker = format!(
                "match &self.{ident} {{ Some(value) => 1 + value.fields_len(version), None => 1 }}"
            );
            let without = format!(
                "match &self.{ident} {{ Some(value) => value.fields_len(version), None => 0 }}"
            );
            match cx.when_within(field.nullable_versions, scope) {
                Cond::Always => with_marker,
                Cond::Never => without,
                Cond::Expr(e, _) => format!("if {e} {{ {with_marker} }} else {{ {without} }}"),
            }
        }
    }
}

/// A statement refusing a field that holds a value where the version cannot carry it.
fn refuse_absent(field: &Field, test: &str) -> String {
    format!(
        "if {test} {{\n    return Err(EncodeError::new(EncodeErrorKind::FieldNotInVersion).at(\"{}\"));\n}}",
        field.name
    )
}

/// The test for writing a tagged field: the version tags it and it differs from its default.
fn tagged_test(cx: &Context<'_>, field: &Field) -> Option<String> {
    cx.when(field.tagged_versions)
        .and(&differs_from_default(field))
}

/// The big-endian bytes of fixed-width `place` (`self.x`), as an array.
fn be_bytes(p: Primitive, place: &str) -> String {
    match p {
        Primitive::Bool => format!("[u8::from({place})]"),
        Primitive::Uuid => format!("{place}.0"),
        _ => format!("{place}.to_be_bytes()"),
    }
}

/// A run's fields, built into one array on the stack and written with one capacity check
/// where the versions allow; field by field in the other versions.
fn encode_run(body: &mut Code, cx: &Context<'_>, s: &Struct, run: &Run) {
    let len = run.len;
    let mut fast = Code::new();
    // A field the versions leave out must hold its default (as field by field).
    for index in run.fields.clone() {
        let field = &s.fields[index];
        if run.slot(index).is_none() && !field.ignorable {
            fast.line(refuse_absent(field, &differs_from_default(field)));
        }
    }
    fast.line(format!("let mut run = [0; {len}];"));
    for &(index, offset, p) in &run.present {
        let field = &s.fields[index];
        let width = p.fixed_width().expect("fixed width");
        let bytes = be_bytes(p, &format!("self.{}", field_ident(field)));
        fast.line(format!(
            "wire::write_at::<{offset}, {width}, {len}>(&mut run, {bytes});"
        ));
    }
    fast.line("buf.put_slice(&run);");
    match cx.when(run.versions) {
        Cond::Always => body.append(fast),
        Cond::Never => unreachable!("a run's versions include the newest"),
        Cond::Expr(e, _) => {
            body.open(format!("if {e}"));
            body.append(fast);
            body.reopen("else");
            for field in &s.fields[run.fields.clone()] {
                encode_field(body, cx, field);
            }
            body.close();
        }
    }
}

/// Statements writing one field where its versions have it, and refusing a value where they
/// cannot carry it.
fn encode_field(body: &mut Code, cx: &Context<'_>, field: &Field) {
    let range = cx.positional(field);
    let write = write_field(cx, field, range);
    // Outside the positional versions: a plain field is absent there; a tagged one is
    // absent only where it is not tagged either. An ignorable field is dropped there.
    let absent = if field.ignorable {
        None
    } else {
        let absent_here = if field.tag.is_none() {
            Cond::Always
        } else {
            cx.when(field.versions).not()
        };
        absent_here
            .and(&differs_from_default(field))
            .map(|test| refuse_absent(field, &test))
    };
    match (cx.when(range), absent) {
        (Cond::Always, _) => body.line(write),
        (Cond::Never, absent) => {
            if let Some(absent) = absent {
                body.line(absent);
            }
        }
        (Cond::Expr(e, _), None) => body.block(format!("if {e}"), |code| code.line(write)),
        (Cond::Expr(e, _), Some(absent)) => {
            body.open(format!("if {e}"));
            body.line(write);
            body.close_with(&format!(" else {absent}"));
        }
    }
}

pub(crate) fn emit_encode(code: &mut Code, cx: &Context<'_>, s: &Struct) {
    let mut body = Code::new();
    for piece in pieces(cx, s) {
        match piece {
            Piece::Field(field) => encode_field(&mut body, cx, field),
            Piece::Run(run) => encode_run(&mut body, cx, s, &run),
        }
    }
    emit_tagged_section(&mut body, cx, s);
    body.line("Ok(())");

    let body = with_flexible_binding(cx, body.finish());
    let version = binding(&body, "version");
    code.block(
        format!(
            "fn encode_fields(&self, buf: &mut impl BufMut, {version}: i16) -> Result<(), EncodeError>"
        ),
        |code| code.line(body),
    );
}

fn emit_tagged_section(body: &mut Code, cx: &Context<'_>, s: &Struct) {
    let refuse = "wire::refuse_tagged_fields(&self.unknown_tagged_fields)?;";
    if cx.is_never_flexible() {
        body.line(refuse);
        return;
    }
    let known_tags = s.known_tags;
    let tagged = tagged_fields(s);
    let mut section = Code::new();
    if tagged.is_empty() {
        section.line(format!(
            "wire::put_tagged_fields(buf, &self.unknown_tagged_fields, {known_tags})?;"
        ));
    } else {
        section.line("let mut tagged = self.unknown_tagged_fields.len();");
        for field in &tagged {
            if let Some(test) = tagged_test(cx, field) {
                section.line(format!("if {test} {{ tagged += 1; }}"));
            }
        }
        section.line("wire::put_length_varint(buf, tagged)?;");
        for field in &tagged {
            let Some(test) = tagged_test(cx, field) else {
                continue;
            };
            let tag = field.tag.expect("tagged");
            let len = field_len(cx, field, field.tagged_versions);
            let write = write_field(cx, field, field.tagged_versions);
            section.block(format!("if {test}"), |code| {
                code.line(format!("wire::put_unsigned_varint(buf, {tag});"));
                code.line(format!("wire::put_length_varint(buf, {len})?;"));
                code.line(write);
            });
        }
        section.line(format!(
            "wire::put_raw_tagged_fields(buf, &self.unknown_tagged_fields, {known_tags})?;"
        ));
    }
    let section = section.finish();
    match cx.when(cx.message.flexible_versions) {
        Cond::Always => body.line(section),
        Cond::Never => body.line(refuse),
        Cond::Expr(..) => {
            body.open("if flexible");
            body.line(section);
            body.reopen("else");
            body.line(refuse);
            body.close();
        }
    }
}

pub(crate) fn emit_len(code: &mut Code, cx: &Context<'_>, s: &Struct) {
    // The fields every version has are summed up front; the rest are added where present.
    let mut always = Vec::new();
    let mut sometimes = Code::new();
    for field in &s.fields {
        let range = cx.positional(field);
        let len = field_len(cx, field, range);
        match cx.when(range) {
            Cond::Always => always.push(len),
            Cond::Never => {}
            Cond::Expr(e, _) => sometimes.line(format!("if {e} {{\n    len += {len};\n}}")),
        }
    }
    if !cx.is_never_flexible() {
        let tagged = tagged_fields(s);
        let mut section = Code::new();
        if tagged.is_empty() {
            section.line("len += wire::tagged_fields_len(&self.unknown_tagged_fields);");
        } else {
            section.line("let mut tagged = self.unknown_tagged_fields.len();");
            section.line(
                "let mut tagged_len = wire::raw_tagged_fields_len(&self.unknown_tagged_fields);",
            );
            for field in tagged {
                let Some(test) = tagged_test(cx, field) else {
                    continue;
                };
                let tag = field.tag.expect("tagged");
                let len = field_len(cx, field, field.tagged_versions);
                section.block(format!("if {test}"), |code| {
                    code.line("tagged += 1;");
                    code.line(format!(
                        "tagged_len += wire::tagged_field_len({tag}, {len});"
                    ));
                });
            }
            section.line("len += wire::unsigned_varint_len(tagged as u32) + tagged_len;");
        }
        match cx.when(cx.message.flexible_versions) {
            Cond::Always => sometimes.append(section),
            Cond::Never => {}
            Cond::Expr(..) => sometimes.block("if flexible", |code| code.append(section)),
        }
    }
    // Fixed-width fields add up to one number, written first.
    let fixed: usize = always
        .iter()
        .filter_map(|term| term.parse::<usize>().ok())
        .sum();
    always.retain(|term| term.parse::<usize>().is_err());
    if fixed > 0 {
        always.insert(0, fixed.to_string());
    }
    let sum = match always.len() {
        0 => "0".to_string(),
        1 => always.remove(0),
        // A conditional term needs parentheses inside a sum.
        _ => always
            .iter()
            .map(|term| match term.starts_with("if ") {
                true => format!("({term})"),
                false => term.clone(),
            })
            .collect::<Vec<_>>()
            .join("\n    + "),
    };
    let mut body = Code::new();
    if sometimes.is_empty() {
        body.line(sum);
    } else {
        body.line(format!("let mut len = {sum};"));
        body.append(sometimes);
        body.line("len");
    }
    let body = with_flexible_binding(cx, body.finish());
    let version = binding(&body, "version");
    code.line("#[inline]");
    code.block(
        format!("fn fields_len(&self, {version}: i16) -> usize"),
        |code| code.line(body),
    );
}
