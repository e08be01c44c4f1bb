//! `transcode_fields`: Kafka's JSON form of one struct written straight from its wire bytes
//! (feature `json`, where the struct decodes), with no decoded value in between.
//!
//! Regular fields are read with the decoder's own readers, in wire order, and each is written
//! as soon as it is read: the tokens `write_json_fields` writes for the value `decode_fields`
//! reads. Tagged fields are the exception. The wire puts them at the end of their struct, in
//! tag order; Kafka's JSON shows them in schema order, and only where they differ from their
//! default. So the known ones are decoded whole into locals (they are small) by the decoder's
//! own code, and written where the schema puts them.
//!
//! Where a tagged field comes before a regular field at some version (decided here, per
//! struct and version), the transcoder first walks the regular fields writing nothing, to
//! reach the tagged section, reads it, and goes back. A walk that writes nothing never reads
//! ahead itself, so bytes nested `n` structs deep are read at most `n + 1` times.

use super::code::Code;
use super::decode::{tagged_section, TaggedSection};
use super::json::write_field_at;
use super::{
    binding, differs_from_default_at, field_default, field_ident, field_type, indented, json_key,
    primitive_suffix, Cond, Context,
};
use crate::model::{Field, FieldType, Primitive, Struct, Versions};

/// The local that holds a tagged field's value: the field's name, unless that is one of the
/// transcoder's own bindings.
fn local_ident(field: &Field) -> String {
    let ident = field_ident(field);
    match ident.as_str() {
        "d" | "version" | "flexible" | "tag" | "out" | "options" | "start" | "end" | "tags_end"
        | "value" => format!("{ident}_value"),
        _ => ident,
    }
}

/// The statement reading a field's value (null allowed when `nullable`) from `d` and writing
/// its JSON to `out`; errors name the field.
fn read_and_write(field: &Field, compact: &str, nullable: bool) -> String {
    let at = format!(".at(\"{}\")?", field.name);
    match &field.ty {
        FieldType::Primitive(p) => match (p, nullable) {
            (Primitive::String, false) => format!("out.str(d.read_str({compact}){at});"),
            (Primitive::String, true) => {
                format!("out.nullable_str(d.read_nullable_str({compact}){at});")
            }
            (Primitive::Bytes, false) => format!("out.bytes(d.read_byte_slice({compact}){at});"),
            (Primitive::Bytes, true) => {
                format!("out.nullable_bytes(d.read_nullable_byte_slice({compact}){at});")
            }
            // A records hook takes the field's `Bytes`.
            (Primitive::Records, false) => format!("out.records(d.read_bytes({compact}){at}){at};"),
            (Primitive::Records, true) => {
                format!("out.nullable_records(d.read_nullable_bytes({compact}){at}){at};")
            }
            (Primitive::Float64, _) => format!("out.f64(d.read_f64(){at}){at};"),
            (p, _) => {
                let suffix = primitive_suffix(*p);
                format!("out.{suffix}(d.read_{suffix}(){at});")
            }
        },
        FieldType::Struct(name) if nullable => {
            format!("{name}::transcode_nullable(d, version, out){at};")
        }
        FieldType::Struct(name) => format!("{name}::transcode_nested(d, version, out){at};"),
        FieldType::Array(element) => {
            let null = if nullable { "nullable_" } else { "" };
            match element.as_ref() {
                FieldType::Struct(name) => {
                    format!("{name}::transcode_{null}array(d, {compact}, version, out){at};")
                }
                FieldType::Primitive(Primitive::String) => {
                    format!("out.{null}string_array(d, {compact}){at};")
                }
                FieldType::Primitive(Primitive::Bytes | Primitive::Records) => {
                    format!("out.{null}bytes_array(d, {compact}){at};")
                }
                FieldType::Primitive(p) => {
                    let width = p
                        .fixed_width()
                        .expect("the other primitives are fixed-width");
                    let bytes = format!("d.read_{null}array_bytes({compact}, {width}){at}");
                    if *p == Primitive::Float64 {
                        format!("out.{null}f64_array({bytes}){at};")
                    } else {
                        format!(
                            "out.{null}fixed_array({bytes}, json::write_{});",
                            primitive_suffix(*p)
                        )
                    }
                }
                FieldType::Array(_) => unreachable!("arrays of arrays are refused by validation"),
            }
        }
    }
}

/// The statements transcoding a field where it is on the wire outside the tagged section
/// (`None` if it never is): its key (unless `keyless`, for a walk that writes nothing), then
/// its value read and written.
fn regular_field(cx: &Context<'_>, field: &Field, keyless: bool) -> Option<String> {
    let range = cx.positional(field);
    let compact = cx.compact(field);
    let value = if field.is_optional() {
        cx.when_within(field.nullable_versions, range).choose(
            &read_and_write(field, &compact, true),
            &read_and_write(field, &compact, false),
        )
    } else {
        read_and_write(field, &compact, false)
    };
    let statements = if keyless {
        value
    } else {
        format!("out.key(\"{}\");\n{value}", json_key(field))
    };
    match cx.when(range) {
        Cond::Always => Some(statements),
        Cond::Never => None,
        Cond::Expr(e, _) => Some(format!("if {e} {{\n{}}}", indented(&statements))),
    }
}

/// The test under which a tagged field's decoded value is shown: tagged at this version (the
/// schema requires tagged versions within the field's versions) and not its default.
fn tagged_shown(cx: &Context<'_>, field: &Field) -> Option<String> {
    let differs = differs_from_default_at(field, &local_ident(field));
    cx.when(field.tagged_versions).and(&differs)
}

/// The tagged fields with a version where they can be read.
fn known_tagged<'s>(cx: &Context<'_>, s: &'s Struct) -> Vec<&'s Field> {
    super::tagged_fields(s)
        .into_iter()
        .filter(|field| !matches!(cx.when(field.tagged_versions), Cond::Never))
        .collect()
}

/// The versions at which a tagged field comes before a regular field on the wire, in schema
/// order: there the tagged section must be read before the regular fields are written.
pub(crate) fn read_ahead_versions(cx: &Context<'_>, s: &Struct) -> Vec<i16> {
    let scope = cx.message.valid_versions.intersect(&s.versions);
    (scope.min..=scope.max)
        .filter(|&version| {
            let mut tagged_before = false;
            for field in &s.fields {
                if field.tag.is_some() && field.tagged_versions.contains(version) {
                    tagged_before = true;
                } else if tagged_before && cx.positional(field).contains(version) {
                    return true;
                }
            }
            false
        })
        .collect()
}

/// The test for a set of versions, ascending.
fn versions_cond(cx: &Context<'_>, versions: &[i16]) -> Cond {
    match (versions.first(), versions.last()) {
        (Some(&min), Some(&max)) if usize::try_from(max - min + 1) == Ok(versions.len()) => {
            cx.when(Versions { min, max })
        }
        (Some(_), Some(_)) => {
            let list: Vec<String> = versions.iter().map(i16::to_string).collect();
            let list = list.join(" | ");
            Cond::Expr(
                format!("matches!(version, {list})"),
                format!("!matches!(version, {list})"),
            )
        }
        _ => Cond::Never,
    }
}

/// `if let Some((out, options)) = out.parts() { writes }`: decoded values go through the
/// JSON writer's own code, and only when something is written.
fn with_sink(code: &mut Code, writes: Code) {
    let writes = writes.finish();
    let options = binding(&writes, "options");
    code.block(
        format!("if let Some((out, {options})) = out.parts()"),
        |code| code.line(writes),
    );
}

pub(crate) fn emit_transcode(code: &mut Code, cx: &Context<'_>, s: &Struct) {
    let mut body = Code::new();
    let tagged = known_tagged(cx, s);
    for field in &tagged {
        body.line(format!(
            "let mut {}: {} = {};",
            local_ident(field),
            field_type(field),
            field_default(field)
        ));
    }
    let regular: Vec<Option<String>> = s
        .fields
        .iter()
        .map(|field| regular_field(cx, field, false))
        .collect();
    let section = (!cx.is_never_flexible()).then(|| {
        format!(
            "{};",
            tagged_section(cx, s, TaggedSection::Skip, &local_ident)
        )
    });
    let read_section = |code: &mut Code| {
        if let Some(section) = &section {
            cx.when(cx.message.flexible_versions).guard(code, section);
        }
    };
    let end_writes = || {
        let mut writes = Code::new();
        for field in &tagged {
            if let Some(shown) = tagged_shown(cx, field) {
                writes.block(format!("if {shown}"), |code| {
                    code.line(write_field_at(field, &local_ident(field)))
                });
            }
        }
        writes
    };

    let ahead = read_ahead_versions(cx, s);
    let reads_ahead = !ahead.is_empty();
    if reads_ahead {
        let test = versions_cond(cx, &ahead)
            .and("out.writes()")
            .expect("some version reads ahead");
        body.line("// A tagged field comes before a regular one here: walk to the tagged section");
        body.line("// writing nothing, read it, and come back.");
        body.open(format!("let tags_end = if {test}"));
        body.line("let start = d.clone();");
        body.open("");
        body.line("let out = &mut JsonOut::checking();");
        for field in &s.fields {
            if let Some(statement) = regular_field(cx, field, true) {
                body.line(statement);
            }
        }
        body.close();
        if let Some(section) = &section {
            body.line(section);
        }
        body.line("Some(std::mem::replace(d, start))");
        body.reopen("else");
        body.line("None");
        body.close_with(";");
    }

    body.line("out.begin_object();");
    for (field, statement) in s.fields.iter().zip(&regular) {
        if let Some(statement) = statement {
            body.line(statement);
        }
        let read_ahead_here =
            field.tag.is_some() && ahead.iter().any(|&v| field.tagged_versions.contains(v));
        if let (true, Some(shown)) = (read_ahead_here, tagged_shown(cx, field)) {
            body.block(format!("if tags_end.is_some() && {shown}"), |code| {
                let mut writes = Code::new();
                writes.line(write_field_at(field, &local_ident(field)));
                with_sink(code, writes);
            });
        }
    }
    let writes = end_writes();
    if reads_ahead {
        body.open("if let Some(end) = tags_end");
        body.line("*d = end;");
        body.reopen("else");
        read_section(&mut body);
        if !writes.is_empty() {
            with_sink(&mut body, writes);
        }
        body.close();
    } else {
        read_section(&mut body);
        if !writes.is_empty() {
            with_sink(&mut body, writes);
        }
    }
    body.line("out.end_object();");
    body.line("Ok(())");

    let body = super::with_flexible_binding(cx, body.finish());
    let decoder = binding(&body, "d");
    let version = binding(&body, "version");
    code.line("#[inline]");
    code.block(
        format!(
            "fn transcode_fields({decoder}: &mut Decoder<'_>, {version}: i16, out: &mut JsonOut<'_>) -> Result<(), TranscodeError>"
        ),
        |code| code.line(body),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reading ahead costs a second walk of a struct's bytes, so it must stay where Kafka's
    /// schemas need it: the six structs with a tagged field before a regular one (Kafka 3.9's
    /// UpdateMetadata v8 tags its `Type` ahead of the partition states).
    #[test]
    fn only_six_structs_read_their_tagged_section_ahead() {
        let schemas = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
        let set = crate::Generator::new(schemas).load().unwrap();
        let mut found = Vec::new();
        for message in set.live() {
            let cx = Context { message };
            for s in std::iter::once(&message.root).chain(&message.structs) {
                let versions = read_ahead_versions(&cx, s);
                if let (Some(min), Some(max)) = (versions.first(), versions.last()) {
                    found.push(format!("{}.{} {min}-{max}", message.name, s.name));
                }
            }
        }
        assert_eq!(
            found,
            [
                "CreateTopicsResponse.CreatableTopicResult 5-7",
                "FetchRequest.FetchRequest 12-18",
                "FetchResponse.PartitionData 12-18",
                "FetchSnapshotRequest.FetchSnapshotRequest 0-1",
                "FetchSnapshotResponse.PartitionSnapshot 0-1",
                "UpdateMetadataRequest.UpdateMetadataRequest 8-8",
            ]
        );
    }

    #[test]
    fn versions_that_are_not_a_range_are_listed() {
        let schemas = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
        let set = crate::Generator::new(schemas).load().unwrap();
        let cx = Context {
            message: set.find("FetchRequest").unwrap(),
        };
        assert_eq!(
            versions_cond(&cx, &[12, 13, 14]).to_bool(),
            "(12..=14).contains(&version)"
        );
        assert_eq!(
            versions_cond(&cx, &[3, 5]).to_bool(),
            "matches!(version, 3 | 5)"
        );
        assert!(matches!(versions_cond(&cx, &[]), Cond::Never));
    }
}
