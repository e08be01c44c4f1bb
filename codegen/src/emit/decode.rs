//! `decode_fields`: reading one struct.
//!
//! Each field is read into a local (or takes its default where the version lacks it), and the
//! struct is built once at the end. Nested structs and arrays go through the struct's own
//! `DecodeFields` methods and the decoder's, so each array reader is compiled once per element
//! type rather than once per field.

use super::code::Code;
use super::runs::{pieces, run_scrutinee, run_takes_tags, Piece, Run};
use super::{
    binding, field_default, field_ident, field_inits, if_else, primitive_suffix, tagged_fields,
    Cond, Context,
};
use crate::model::{Field, FieldType, Primitive, Struct, Versions};

/// A reader of one primitive value, as an expression.
fn read_primitive(p: Primitive, compact: &str) -> String {
    match p {
        Primitive::String => format!("d.read_string({compact})"),
        Primitive::Bytes | Primitive::Records => format!("d.read_bytes({compact})"),
        p => format!("d.read_{}()", primitive_suffix(p)),
    }
}

/// The function that makes a fixed-width value from its big-endian bytes.
pub(crate) fn from_be_bytes(p: Primitive) -> String {
    match p {
        Primitive::Bool => "wire::bool_from_byte".into(),
        Primitive::Uuid => "Uuid".into(),
        p => format!(
            "{}::from_be_bytes",
            super::value_type(&FieldType::Primitive(p))
        ),
    }
}

/// `Result<T, DecodeError>` reading a field that is not null.
fn read_non_null(field: &Field, compact: &str) -> String {
    match &field.ty {
        FieldType::Primitive(p) => read_primitive(*p, compact),
        FieldType::Struct(name) => format!("{name}::decode_nested(d, version)"),
        FieldType::Array(element) => match element.as_ref() {
            FieldType::Struct(name) => format!("{name}::decode_array(d, {compact}, version)"),
            FieldType::Primitive(Primitive::String) => format!("d.read_string_array({compact})"),
            FieldType::Primitive(_) if super::is_primitive_array(&field.ty) => {
                format!("d.read_primitive_array({compact})")
            }
            FieldType::Primitive(p) => match p.fixed_width() {
                Some(_) => format!("d.read_fixed_array({compact}, {})", from_be_bytes(*p)),
                // bytes and records: the shortest is a length prefix.
                None => format!(
                    "d.read_array({compact}, if {compact} {{ 1 }} else {{ 4 }}, |d| {})",
                    read_primitive(*p, compact)
                ),
            },
            FieldType::Array(_) => unreachable!("arrays of arrays are refused by validation"),
        },
    }
}

/// `Result<Option<T>, DecodeError>` reading a field where null is allowed.
fn read_nullable(field: &Field, compact: &str) -> String {
    match &field.ty {
        FieldType::Primitive(Primitive::String) => format!("d.read_nullable_string({compact})"),
        FieldType::Primitive(_) => format!("d.read_nullable_bytes({compact})"),
        FieldType::Struct(name) => format!("{name}::decode_nullable(d, version)"),
        FieldType::Array(element) => match element.as_ref() {
            FieldType::Struct(name) => {
                format!("{name}::decode_nullable_array(d, {compact}, version)")
            }
            FieldType::Primitive(Primitive::String) => {
                format!("d.read_nullable_string_array({compact})")
            }
            FieldType::Primitive(_) if super::is_primitive_array(&field.ty) => {
                format!("d.read_nullable_primitive_array({compact})")
            }
            FieldType::Primitive(p) => match p.fixed_width() {
                Some(_) => format!(
                    "d.read_nullable_fixed_array({compact}, {})",
                    from_be_bytes(*p)
                ),
                None => format!(
                    "d.read_nullable_array({compact}, if {compact} {{ 1 }} else {{ 4 }}, |d| {})",
                    read_primitive(*p, compact)
                ),
            },
            FieldType::Array(_) => unreachable!("arrays of arrays are refused by validation"),
        },
    }
}

/// The field's value within `scope` versions, with errors naming the field: an expression
/// that may span lines.
fn read_field(cx: &Context<'_>, field: &Field, scope: Versions) -> String {
    let name = &field.name;
    let compact = cx.compact(field);
    let non_null = read_non_null(field, &compact);
    if !field.is_optional() {
        return format!("{non_null}.at(\"{name}\")?");
    }
    let nullable = format!("{}.at(\"{name}\")?", read_nullable(field, &compact));
    let some = format!("{non_null}.map(Some).at(\"{name}\")?");
    cx.when_within(field.nullable_versions, scope)
        .choose(&nullable, &some)
}

/// The local variable that holds a field while its struct is decoded: the field's own name,
/// unless that would shadow one of the decoder's own bindings.
fn local_ident(field: &Field) -> String {
    let ident = field_ident(field);
    match ident.as_str() {
        "d" | "version" | "flexible" | "tag" | "run" | "unknown_tagged_fields" => {
            format!("{ident}_value")
        }
        _ => ident,
    }
}

/// The unknown tagged fields: read after the known ones in flexible versions.
fn read_tagged_section(cx: &Context<'_>, s: &Struct) -> String {
    if cx.is_never_flexible() {
        return "TaggedFields::new()".into();
    }
    let read = tagged_section(cx, s, TaggedSection::Keep, &local_ident);
    cx.when(cx.message.flexible_versions)
        .choose(&read, "TaggedFields::new()")
}

/// What a tagged section's reader does with the fields it does not know.
#[derive(Clone, Copy)]
pub(crate) enum TaggedSection {
    /// Keeps them (`read_tagged_fields`, the decoder).
    Keep,
    /// Checks and skips them (`skip_tagged_fields`, the transcoder).
    Skip,
}

/// The expression reading a struct's tagged section (in a flexible version), each known tag
/// decoded into the local `local` names, ending in `?`.
pub(crate) fn tagged_section(
    cx: &Context<'_>,
    s: &Struct,
    unknown: TaggedSection,
    local: &dyn Fn(&Field) -> String,
) -> String {
    let (read_all, read_unknown) = match unknown {
        TaggedSection::Keep => ("read_tagged_fields", "read_unknown_tagged_fields"),
        TaggedSection::Skip => ("skip_tagged_fields", "skip_unknown_tagged_fields"),
    };
    let tagged = tagged_fields(s);
    if tagged.is_empty() {
        return format!("d.{read_unknown}()?");
    }
    let mut arms = String::new();
    for field in tagged {
        let tag = field.tag.expect("tagged");
        let read = read_field(cx, field, field.tagged_versions);
        let known = format!("{} = {read};\nOk(true)", local(field));
        let refused = format!("Err(d.error(DecodeErrorKind::TagNotValidForVersion({tag})))");
        let body = cx.when(field.tagged_versions).choose(&known, &refused);
        arms += &format!("{tag} => {{\n{}}}\n", super::indented(&body));
    }
    arms += "_ => Ok(false),\n";
    format!(
        "d.{read_all}(|d, tag| match tag {{\n{}}})?",
        super::indented(&arms)
    )
}

/// The field's value read on its own (or its default where the version lacks it).
fn field_value(cx: &Context<'_>, field: &Field) -> String {
    let range = cx.positional(field);
    match cx.when(range) {
        Cond::Always => read_field(cx, field, range),
        Cond::Never => field_default(field),
        Cond::Expr(e, _) => if_else(&e, &read_field(cx, field, range), &field_default(field)),
    }
}

/// The fields of a run, bound from one array of the input where the versions allow it and
/// the input holds it; otherwise read one by one, which also finds and names a short field.
///
/// With `tags` (the expression reading the struct's tagged section, which follows the run),
/// the array also takes the section's count when it is the zero byte of no fields, and the
/// run binds `unknown_tagged_fields` too; a section that holds fields goes the usual way.
fn decode_run(body: &mut Code, cx: &Context<'_>, s: &Struct, run: &Run, tags: Option<&str>) {
    let fields = &s.fields[run.fields.clone()];
    let len = run.len;
    let scrutinee = run_scrutinee(body, cx, run, "d", tags.is_some());
    let versions = cx.when(run.versions);
    let mut locals: Vec<String> = fields.iter().map(local_ident).collect();
    if tags.is_some() {
        locals.push("unknown_tagged_fields".into());
    }
    let pattern = locals.join(", ");
    // One local a line when they would not fit on one.
    let pattern = if pattern.len() <= 72 {
        pattern
    } else {
        let lines: String = locals.iter().map(|local| format!("{local},\n")).collect();
        format!("\n{}", super::indented(&lines))
    };
    body.open(format!("let ({pattern}) = match {scrutinee}"));
    body.open_line("Some(run) => (");
    for (index, field) in run.fields.clone().zip(fields) {
        match run.slot(index) {
            Some((offset, Primitive::Uuid)) => body.line(format!(
                "u128::from_ne_bytes(wire::read_at::<{offset}, 16, {len}>(run)),"
            )),
            Some((offset, p)) => {
                let width = p.fixed_width().expect("fixed width");
                body.line(format!(
                    "{}(wire::read_at::<{offset}, {width}, {len}>(run)),",
                    from_be_bytes(p)
                ));
            }
            None => body.line(format!("{},", uuid_carried(field, field_default(field)))),
        }
    }
    if tags.is_some() {
        body.line("TaggedFields::new(),");
    }
    body.close_line("),");
    match (versions, tags) {
        // Every version has this layout and nothing else can refuse the array: the input is
        // short, and one shared cold function names the field as reading field by field would.
        (Cond::Always, None) => {
            let widths: Vec<String> = run
                .present
                .iter()
                .map(|&(index, _, p)| {
                    let width = p.fixed_width().expect("fixed width");
                    format!("(\"{}\", {width})", s.fields[index].name)
                })
                .collect();
            let list = widths.join(", ");
            if list.len() <= 60 {
                body.line(format!("None => return Err(d.short_run_error(&[{list}])),"));
            } else {
                body.open_line("None => {");
                body.open_line("return Err(d.short_run_error(&[");
                for width in &widths {
                    body.line(format!("{width},"));
                }
                body.close_line("]));");
                body.close_line("}");
            }
        }
        // Other versions, a short input, a tagged section with fields: field by field.
        _ => {
            body.open_line("None => (");
            for field in fields {
                body.line(format!("{},", uuid_carried(field, field_value(cx, field))));
            }
            if let Some(tags) = tags {
                body.line(format!("{tags},"));
            }
            body.close_line("),");
        }
    }
    body.close_with(";");
    for field in fields.iter().filter(|field| is_uuid(field)) {
        let local = local_ident(field);
        body.line(format!("let {local} = Uuid({local}.to_ne_bytes());"));
    }
}

/// Whether a field is a `uuid` (never nullable: Kafka has no nullable uuid).
fn is_uuid(field: &Field) -> bool {
    matches!(field.ty, FieldType::Primitive(Primitive::Uuid))
}

/// A run's value of `field` as the match over the run yields it: a uuid travels as a `u128`
/// and becomes a `Uuid` after the match. Carried as its 16 bytes, LLVM split the merged
/// value at odd offsets and stored it to the stack in overlapping pieces, which reloading
/// stalled on (store forwarding), twice per DescribeQuorum replica: a fifth of that decode's
/// time, for a value two registers hold.
fn uuid_carried(field: &Field, value: String) -> String {
    if is_uuid(field) {
        format!("u128::from_ne_bytes(({value}).0)")
    } else {
        value
    }
}

pub(crate) fn emit_decode(code: &mut Code, cx: &Context<'_>, s: &Struct) {
    let mut body = Code::new();
    let tags = read_tagged_section(cx, s);
    let pieces = pieces(cx, s);
    let run_takes_tags = run_takes_tags(cx, s, &pieces);
    let last = pieces.len().saturating_sub(1);
    for (at, piece) in pieces.into_iter().enumerate() {
        let field = match piece {
            Piece::Field(field) => field,
            Piece::Run(run) => {
                let takes_tags = run_takes_tags && at == last;
                decode_run(&mut body, cx, s, &run, takes_tags.then_some(tags.as_str()));
                continue;
            }
        };
        let mutability = if field.tag.is_some() && !cx.is_never_flexible() {
            "mut "
        } else {
            ""
        };
        body.line(format!(
            "let {mutability}{} = {};",
            local_ident(field),
            field_value(cx, field)
        ));
    }
    if !run_takes_tags {
        body.line(format!("let unknown_tagged_fields = {tags};"));
    }
    body.open("Ok(Self");
    field_inits(&mut body, s, local_ident);
    body.line("unknown_tagged_fields,");
    body.close_with(")");

    let body = super::with_flexible_binding(cx, body.finish());
    let decoder = binding(&body, "d");
    let version = binding(&body, "version");
    code.line("#[inline]");
    code.block(
        format!(
            "fn decode_fields({decoder}: &mut Decoder<'_>, {version}: i16) -> Result<Self, DecodeError>"
        ),
        |code| code.line(body),
    );
}
