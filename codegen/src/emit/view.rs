//! Zero-copy views (feature `views`): for each struct a view type borrowing the frame's bytes,
//! one accessor per field, `to_owned`, and the straight-line code per version they run on
//! (`view_check`, `view_skip_to`, `view_read_owned`; see `kafka_codec::wire::view`).
//!
//! Generated code rather than a layout table that one interpreter walks: the table was 3.5–16×
//! slower than the owned decode (a dispatch per field, fixed-width runs stepped one by one);
//! here every version test and fixed offset folds at compile time, as in the owned decoder.
//! Everything is `#[inline]`, so a dependent compiles only the views it uses.

use super::code::Code;
use super::runs::{pieces, run_scrutinee, run_takes_tags, Piece, Run};
use super::{
    decode_cfg, default_is_null, field_default, field_ident, is_primitive_array, snake_case,
    tagged_fields, Cond, Context,
};
use crate::model::{DefaultValue, Field, FieldType, MessageKind, Primitive, Struct};
use crate::SchemaSet;

/// The view type of struct `name`.
fn view_name(name: &str) -> String {
    format!("{name}View")
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

/// The type an accessor returns for one value of `ty`.
fn value_type(ty: &FieldType) -> String {
    match ty {
        FieldType::Primitive(Primitive::String) => "&'a str".into(),
        FieldType::Primitive(Primitive::Bytes | Primitive::Records) => "&'a [u8]".into(),
        FieldType::Primitive(_) => super::value_type(ty),
        FieldType::Struct(name) => format!("{}<'a, M>", view_name(name)),
        FieldType::Array(element) => format!("ViewIter<'a, {}, M>", value_type(element)),
    }
}

/// The test saying whether the field may be null at the version (`false` where never).
fn nullable(cx: &Context<'_>, field: &Field) -> String {
    cx.when(field.nullable_versions.intersect(&field.versions))
        .to_bool()
}

/// The width of a fixed-width field that is not an array.
fn is_fixed(field: &Field) -> Option<usize> {
    match &field.ty {
        FieldType::Primitive(p) => p.fixed_width(),
        _ => None,
    }
}

/// Statements checking one value of `field` with the decoder `d` (ending in `?;`).
fn check_field(cx: &Context<'_>, field: &Field) -> String {
    let (c, n) = (cx.compact(field), nullable(cx, field));
    match &field.ty {
        FieldType::Primitive(Primitive::String) => format!("check_str(d, {c}, {n})?;"),
        FieldType::Primitive(Primitive::Bytes | Primitive::Records) => {
            format!("check_bytes(d, {c}, {n})?;")
        }
        FieldType::Primitive(p) => format!("d.skip({})?;", p.fixed_width().expect("fixed")),
        FieldType::Struct(name) => format!(
            "check_struct(d, {n}, |d| {}::<Checked>::view_check(d, version))?;",
            view_name(name)
        ),
        FieldType::Array(element) if is_primitive_array(&field.ty) => {
            let width = element.primitive().and_then(Primitive::fixed_width);
            format!(
                "check_fixed_array_field(d, {c}, {n}, {})?;",
                width.expect("fixed")
            )
        }
        FieldType::Array(element) => {
            let (min, elements) = match element.as_ref() {
                FieldType::Struct(name) => (
                    format!("<{name} as DecodeFields>::min_wire_size(version)"),
                    format!(
                        "check_struct_array(d, count, size_of::<{name}>(), |d| {}::<Checked>::view_check(d, version))?;",
                        view_name(name)
                    ),
                ),
                FieldType::Primitive(Primitive::Bool) => {
                    ("1".into(), "check_bool_array(d, count)?;".into())
                }
                FieldType::Primitive(Primitive::String) => (
                    format!("if {c} {{ 1 }} else {{ 2 }}"),
                    format!("check_str_array(d, count, {c})?;"),
                ),
                FieldType::Primitive(Primitive::Bytes | Primitive::Records) => (
                    format!("if {c} {{ 1 }} else {{ 4 }}"),
                    format!("check_bytes_array(d, count, {c})?;"),
                ),
                FieldType::Primitive(p) => {
                    let width = p.fixed_width().expect("fixed");
                    (
                        width.to_string(),
                        format!("check_fixed_array(d, count, {width})?;"),
                    )
                }
                FieldType::Array(_) => unreachable!("arrays of arrays are refused by validation"),
            };
            format!("let count = check_count(d, {c}, {n}, {min})?;\n{elements}")
        }
    }
}

/// Statements stepping the walk `w` over one value of `field`.
fn skip_field(cx: &Context<'_>, field: &Field) -> String {
    let (c, n) = (cx.compact(field), nullable(cx, field));
    match &field.ty {
        FieldType::Primitive(Primitive::String) => format!("w.skip_str({c});"),
        FieldType::Primitive(Primitive::Bytes | Primitive::Records) => {
            format!("w.skip_bytes({c});")
        }
        FieldType::Primitive(p) => format!("w.skip({});", p.fixed_width().expect("fixed")),
        FieldType::Struct(name) => format!("w.skip_struct::<{}<'a, M>>({n});", view_name(name)),
        FieldType::Array(element) => match element.as_ref() {
            FieldType::Struct(name) => {
                format!("w.skip_struct_array::<{}<'a, M>>({c});", view_name(name))
            }
            FieldType::Primitive(Primitive::String) => format!("w.skip_str_array({c});"),
            FieldType::Primitive(Primitive::Bytes | Primitive::Records) => {
                format!("w.skip_bytes_array({c});")
            }
            FieldType::Primitive(p) => format!(
                "w.skip_fixed_array({c}, {});",
                p.fixed_width().expect("fixed")
            ),
            FieldType::Array(_) => unreachable!("arrays of arrays are refused by validation"),
        },
    }
}

/// The expression reading `field`'s value from the walk `w` (a `&mut Walk`) for the accessor:
/// an `Option` of the value for optional fields, else the value.
fn read_view(cx: &Context<'_>, field: &Field, w: &str) -> String {
    let (c, ty) = (cx.compact(field), value_type(&field.ty));
    if field.is_optional() {
        format!("{w}.read::<{ty}>({c}, {})", nullable(cx, field))
    } else {
        format!("{w}.read_value::<{ty}>({c})")
    }
}

/// The expression reading `field`'s owned value from the walk `w` (a `&mut Walk`), leaving
/// the walk past it.
fn read_owned(cx: &Context<'_>, field: &Field, w: &str) -> String {
    let (c, n) = (cx.compact(field), nullable(cx, field));
    let optional = field.is_optional();
    let value = match &field.ty {
        FieldType::Struct(name) => {
            let read = format!("{}::<Checked>::view_read_owned", view_name(name));
            if !optional {
                return format!("{read}({w})");
            }
            format!("{w}.read_owned_struct({n}, {read})")
        }
        FieldType::Array(element) => {
            let read = match element.as_ref() {
                FieldType::Struct(name) => format!(
                    "{w}.read_owned_structs({c}, {n}, {}::<Checked>::view_read_owned)",
                    view_name(name)
                ),
                element if is_primitive_array(&field.ty) => format!(
                    "{w}.read_owned_fixed_array::<{}>({c}, {n})",
                    value_type(element)
                ),
                element => format!("{w}.read_owned_array::<{}>({c}, {n})", value_type(element)),
            };
            if !optional {
                return format!("{read}.unwrap_or_default()");
            }
            read
        }
        FieldType::Primitive(Primitive::String | Primitive::Bytes | Primitive::Records) => {
            format!("{}.into_owned(buf)", read_view(cx, field, w))
        }
        FieldType::Primitive(_) => read_view(cx, field, w),
    };
    value
}

/// `unwrap_or(..)` giving the field's default where the version lacks it.
fn or_default(field: &Field) -> String {
    let value = match (&field.ty, &field.default) {
        _ if default_is_null(field) => return "unwrap_or(None)".into(),
        (FieldType::Array(_), _) if !field.is_optional() => {
            return "unwrap_or_else(|| ViewIter::empty(self.0.origin()))".into()
        }
        (FieldType::Array(_), _) => return wrap(field, "ViewIter::empty(self.0.origin())", true),
        (FieldType::Struct(name), _) => {
            let absent = format!(
                "{}(ViewCursor::absent(self.0.version(), self.0.origin()))",
                view_name(name)
            );
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

/// Binds `version` (from `source`) and `flexible` in front of `body` where it uses them.
fn with_bindings(cx: &Context<'_>, source: &str, body: String) -> String {
    let body = super::with_flexible_binding(cx, body);
    if super::uses_ident(&body, "version") {
        format!("let version = {source};\n{body}")
    } else {
        body
    }
}

/// The statements over a struct's positional fields in order: each run of consecutive
/// fixed-width fields one `skip` statement (`skip` of the sum of their widths, by version),
/// every other field `each` of it, guarded by its versions.
fn stepped_fields(
    cx: &Context<'_>,
    s: &Struct,
    skip: impl Fn(&str) -> String,
    each: impl Fn(&Field) -> String,
) -> Code {
    let mut body = Code::new();
    let mut fixed: Vec<String> = Vec::new();
    let flush = |body: &mut Code, fixed: &mut Vec<String>| {
        if !fixed.is_empty() {
            body.line(skip(&fixed.join(" + ")));
            fixed.clear();
        }
    };
    for field in &s.fields {
        let when = cx.when(cx.positional(field));
        if matches!(when, Cond::Never) {
            continue;
        }
        if let Some(width) = is_fixed(field) {
            fixed.push(when.choose(&width.to_string(), "0").replace('\n', " "));
            continue;
        }
        flush(&mut body, &mut fixed);
        when.guard(&mut body, &each(field));
    }
    flush(&mut body, &mut fixed);
    body
}

/// `view_check`: the struct's bytes checked as the owned decoder reads them, straight-line
/// per version; consecutive fixed-width fields are one `skip`.
fn emit_check(code: &mut Code, cx: &Context<'_>, s: &Struct) {
    let mut body = stepped_fields(
        cx,
        s,
        |widths| format!("d.skip({widths})?;"),
        |field| check_field(cx, field),
    );
    let flexible = cx.when(cx.message.flexible_versions);
    if !matches!(flexible, Cond::Never) {
        let tagged = tagged_fields(s);
        let read = if tagged.is_empty() {
            "d.read_unknown_tagged_fields()?;".to_string()
        } else {
            let mut arms = String::new();
            for field in tagged {
                let tag = field.tag.expect("tagged");
                let known = format!("{}\nOk(true)", check_field(cx, field));
                let refused =
                    format!("Err(d.error(DecodeErrorKind::TagNotValidForVersion({tag})))");
                let arm = cx.when(field.tagged_versions).choose(&known, &refused);
                arms += &format!("{tag} => {{\n{}}}\n", super::indented(&arm));
            }
            arms += "_ => Ok(false),\n";
            format!(
                "d.read_tagged_fields(|d, tag| match tag {{\n{}}})?;",
                super::indented(&arms)
            )
        };
        flexible.guard(&mut body, &read);
    }
    body.line("Ok(())");
    let body = super::with_flexible_binding(cx, body.finish());
    let version = super::binding(&body, "version");
    code.line("#[doc(hidden)]");
    code.line("#[inline]");
    code.block(
        format!(
            "pub fn view_check(d: &mut Decoder<'_>, {version}: i16) -> Result<(), DecodeError>"
        ),
        |code| code.line(body),
    );
}

/// The field whose value a struct's skip marks for its accessor (`ViewMark`): its last
/// `bytes`/`records` field that is positional in some version (a Produce or Fetch partition's
/// records), whose length would otherwise be read once by the skip and again by the accessor.
fn marked_field(cx: &Context<'_>, s: &Struct) -> Option<usize> {
    s.fields.iter().rposition(|field| {
        matches!(
            field.ty,
            FieldType::Primitive(Primitive::Bytes | Primitive::Records)
        ) && !matches!(cx.when(cx.positional(field)), Cond::Never)
    })
}

/// Whether `field` is variable-width and positional in some version: a place a struct's skip
/// marks the end of (`ViewMark`), in field order.
fn is_variable(cx: &Context<'_>, field: &Field) -> bool {
    is_fixed(field).is_none() && !matches!(cx.when(cx.positional(field)), Cond::Never)
}

/// The mark slot of each field of `s` that is variable-width (`is_variable`), by field index.
fn slots(cx: &Context<'_>, s: &Struct) -> Vec<Option<usize>> {
    let mut next = 0;
    s.fields
        .iter()
        .map(|field| {
            is_variable(cx, field).then(|| {
                next += 1;
                next - 1
            })
        })
        .collect()
}

/// `view_skip_to` (over the fields before field `field`, or all of them; what it stepped over
/// marked: where the marked field's value lies, where each variable-width field ends and the
/// tagged section starts) and `view_skip` (the whole struct).
fn emit_skip(code: &mut Code, cx: &Context<'_>, s: &Struct) {
    let marked = marked_field(cx, s);
    let slots = slots(cx, s);
    let flexible = !matches!(cx.when(cx.message.flexible_versions), Cond::Never);
    let mut body = Code::new();
    // Marks are set where the step passes them; a field the version lacks leaves its end
    // where the field before it ended, which is where its accessor's next field starts.
    let marks = marked.is_some() || slots.iter().any(Option::is_some) || flexible;
    if marks {
        body.line("let mut mark = ViewMark::UNKNOWN;");
    }
    for (index, field) in s.fields.iter().enumerate() {
        let when = cx.when(cx.positional(field));
        if matches!(when, Cond::Never) {
            continue;
        }
        body.line(format!(
            "if field == {index} {{\n    return ViewMark::UNKNOWN;\n}}"
        ));
        let skip = if marked == Some(index) {
            format!("w.skip_bytes_marked({}, &mut mark);", cx.compact(field))
        } else {
            skip_field(cx, field)
        };
        when.guard(&mut body, &skip);
        if let Some(slot) = slots[index] {
            body.line(format!("w.mark_after(&mut mark, {slot});"));
        }
    }
    if flexible {
        body.line("w.mark_tagged(&mut mark);");
    }
    body.line(if marks { "mark" } else { "ViewMark::UNKNOWN" });
    let body = with_bindings(cx, "w.version()", body.finish());
    let (w, field) = (super::binding(&body, "w"), super::binding(&body, "field"));
    code.line("#[doc(hidden)]");
    code.line("#[inline]");
    code.block(
        format!("pub fn view_skip_to({w}: &mut Walk<'a, M>, {field}: usize) -> ViewMark"),
        |code| code.line(body),
    );
    code.blank();
    let mut body = Code::new();
    let flexible = cx.when(cx.message.flexible_versions);
    if matches!(flexible, Cond::Never) {
        body.line("Self::view_skip_to(w, usize::MAX)");
    } else {
        body.line("let mark = Self::view_skip_to(w, usize::MAX);");
        flexible.guard(&mut body, "w.skip_tagged();");
        body.line("mark");
    }
    let body = with_bindings(cx, "w.version()", body.finish());
    code.line("#[doc(hidden)]");
    code.line("#[inline]");
    code.block(
        "pub fn view_skip(w: &mut Walk<'a, M>) -> ViewMark",
        |code| code.line(body),
    );
    code.blank();
    emit_step(code, cx, s);
}

/// `view_step`: one step over the whole struct that marks nothing, for the steps whose marks
/// nobody reads (over the elements of an array, to the field after it): without the marks'
/// bookkeeping it is small enough to inline, and consecutive fixed-width fields are one step.
fn emit_step(code: &mut Code, cx: &Context<'_>, s: &Struct) {
    let mut body = stepped_fields(
        cx,
        s,
        |widths| format!("w.skip({widths});"),
        |field| skip_field(cx, field),
    );
    cx.when(cx.message.flexible_versions)
        .guard(&mut body, "w.skip_tagged();");
    let body = with_bindings(cx, "w.version()", body.finish());
    let w = super::binding(&body, "w");
    code.line("#[doc(hidden)]");
    code.line("#[inline]");
    code.block(format!("pub fn view_step({w}: &mut Walk<'a, M>)"), |code| {
        code.line(body)
    });
    code.blank();
    // An array's iterator steps over an element only when asked for the next one (a lazy
    // one over the last when asked past it), without marks, unless the struct has a
    // `bytes`/`records` field: then it is stepped over with marks as it is handed out, so
    // that the value (a partition's records) is found from its mark, without reading its
    // length twice or stepping again over what lies before it (a Fetch partition's aborted
    // transactions). Deferring that shape too cost about a third more instructions on the
    // Fetch routes (benches/README.md, route15).
    let defer = marked_field(cx, s).is_none();
    code.line("#[doc(hidden)]");
    code.line(format!("pub const VIEW_DEFER: bool = {defer};"));
}

/// `view_read_owned`: the owned struct read in one pass from the walk, which ends past it.
fn emit_read_owned(code: &mut Code, cx: &Context<'_>, s: &Struct) {
    let name = &s.name;
    let mut body = Code::new();
    let local = |field: &Field| format!("f_{}", snake_case(&field.name));
    let flexible = cx.when(cx.message.flexible_versions);
    let mut late = Vec::new();
    for field in &s.fields {
        let positional = cx.when(cx.positional(field));
        let tagged = match field.tag {
            Some(_) => cx.when(field.tagged_versions),
            None => Cond::Never,
        };
        let read = read_owned(cx, field, "w");
        match (&positional, &tagged) {
            (_, Cond::Never) => body.line(format!(
                "let {} = {};",
                local(field),
                positional.choose(&read, &field_default(field))
            )),
            (Cond::Never, _) => late.push((field, tagged, None)),
            _ => {
                let early = format!("{}_at", local(field));
                body.line(format!(
                    "let {early} = {};",
                    positional.choose(&format!("Some({read})"), "None")
                ));
                late.push((field, tagged, Some(early)));
            }
        }
    }
    if !matches!(flexible, Cond::Never) {
        body.line("let section = *w;");
        flexible.guard(&mut body, "w.skip_tagged();");
    }
    for (field, tagged, early) in late {
        let default = field_default(field);
        let read = format!(
            "match section.tagged_from({}) {{\n    Some(mut t) => {{\n        let w = &mut t;\n        {}\n    }}\n    None => {default},\n}}",
            field.tag.expect("tagged"),
            read_owned(cx, field, "w")
        );
        let value = tagged.choose(&read, &default);
        let value = match early {
            Some(early) => format!(
                "match {early} {{\n    Some(value) => value,\n    None => {},\n}}",
                value.replace('\n', "\n    ")
            ),
            None => value,
        };
        body.line(format!("let {} = {value};", local(field)));
    }
    let unknown = format!("section.unknown_tagged({})", known_tag(s));
    body.line(format!(
        "let unknown_tagged_fields = {};",
        flexible.choose(&unknown, "TaggedFields::new()")
    ));
    body.open(name);
    for field in &s.fields {
        body.line(format!("{}: {},", field_ident(field), local(field)));
    }
    body.line("unknown_tagged_fields,");
    body.close();
    let mut body = body.finish();
    if super::uses_ident(&body, "buf") {
        body = format!("let buf = w.buf();\n{body}");
    }
    let body = with_bindings(cx, "w.version()", body);
    let w = super::binding(&body, "w");
    code.line("#[doc(hidden)]");
    code.line("#[inline]");
    code.block(
        format!("pub fn view_read_owned({w}: &mut Walk<'a, Checked>) -> {name}"),
        |code| code.line(body),
    );
}

/// Where field `index`'s accessor starts when the struct's skip marked it: the mark slot of
/// the last variable-width field before it and the width of the fixed-width fields between
/// (`None`: none lie between); `None` when no variable-width field lies before it (the walk
/// from the struct's start is then fixed steps the compiler folds).
fn after_mark(cx: &Context<'_>, s: &Struct, index: usize) -> Option<(usize, Option<String>)> {
    let slots = slots(cx, s);
    let last = (0..index).rev().find(|&j| slots[j].is_some())?;
    let widths: Vec<String> = s.fields[last + 1..index]
        .iter()
        .filter_map(|field| {
            let when = cx.when(cx.positional(field));
            if matches!(when, Cond::Never) {
                return None;
            }
            let width =
                is_fixed(field).expect("only fixed-width fields after the last variable one");
            Some(when.choose(&width.to_string(), "0").replace('\n', " "))
        })
        .collect();
    Some((
        slots[last]?,
        (!widths.is_empty()).then(|| widths.join(" + ")),
    ))
}

/// One accessor: the walk to the field and its read, whose `ok` the mode turns into the
/// value (checked) or a `Result` (lazy).
fn emit_accessor(code: &mut Code, cx: &Context<'_>, s: &Struct, index: usize, marked: bool) {
    let field = &s.fields[index];
    let ty = value_type(&field.ty);
    let ty = if field.is_optional() {
        format!("Option<{ty}>")
    } else {
        ty
    };
    let positional = cx.when(cx.positional(field));
    let tagged = match field.tag {
        Some(_) => cx.when(field.tagged_versions),
        None => Cond::Never,
    };
    let read = read_view(cx, field, "w");
    let at_positional = match after_mark(cx, s, index) {
        // From the end of the last variable-width field before this one, where the struct's
        // skip marked it: only fixed-width fields lie between.
        Some((slot, fixed)) => {
            let step = match fixed {
                Some(fixed) => format!(
                    "if found {{\n        w.skip({fixed});\n    }} else {{\n        Self::view_skip_to(&mut w, {index});\n    }}"
                ),
                None => format!("if !found {{\n        Self::view_skip_to(&mut w, {index});\n    }}"),
            };
            format!(
                "self.0.walk_after({slot}).map(|(mut w, found)| {{\n    {step}\n    let value = {read};\n    ok = w.ok();\n    value\n}})"
            )
        }
        None => format!(
            "self.0.walk().map(|mut w| {{\n    Self::view_skip_to(&mut w, {index});\n    let value = {read};\n    ok = w.ok();\n    value\n}})"
        ),
    };
    let at_tagged = format!(
        "self.0.walk_tagged().and_then(|(mut w, found)| {{\n    if !found {{\n        Self::view_skip_to(&mut w, usize::MAX);\n    }}\n    let found = w.tagged({});\n    ok = w.ok();\n    found.map(|mut w| {{\n        let value = {read};\n        ok = w.ok();\n        value\n    }})\n}})",
        field.tag.unwrap_or(0),
    );
    // The marked field: read where the struct's skip found it, else walked to.
    let at_positional = if marked {
        let found = if field.is_optional() {
            "value"
        } else {
            "value.unwrap_or(&[])"
        };
        format!(
            "match self.0.marked_bytes({}, &mut ok) {{\n    Some(value) => Some({found}),\n    None => {},\n}}",
            nullable(cx, field),
            at_positional.replace('\n', "\n    ")
        )
    } else {
        at_positional
    };
    let value = positional.choose(&at_positional, &tagged.choose(&at_tagged, "None"));
    let body = if value == "None" {
        format!(
            "let value: Option<{ty}> = None;\nM::finish(self.0.origin(), true, value.{})",
            or_default(field)
        )
    } else {
        format!(
            "let mut ok = true;\nlet value = {value};\nM::finish(self.0.origin(), ok, value.{})",
            or_default(field)
        )
    };
    let body = with_bindings(cx, "self.0.version()", body);
    code.doc(&field_doc(field));
    code.line("#[inline]");
    code.block(
        format!("pub fn {}(&self) -> M::Out<{ty}>", field_ident(field)),
        |code| code.line(body),
    );
}

/// The owned value of `field` read through its lazy accessor (`?` on each `Result`).
fn through_accessor(field: &Field) -> String {
    let get = format!("this.{}()?", field_ident(field));
    let optional = field.is_optional();
    match &field.ty {
        FieldType::Struct(_) if optional => {
            format!("{get}.map(|v| v.read_via_accessors()).transpose()?")
        }
        FieldType::Struct(_) => format!("{get}.read_via_accessors()?"),
        // Struct elements into a `Vec` reserved once for the count (a `collect` of `Result`s
        // grows it from empty).
        FieldType::Array(element) if matches!(element.as_ref(), FieldType::Struct(_)) => {
            if optional {
                format!("{get}.map(collect_via_accessors).transpose()?")
            } else {
                format!("collect_via_accessors({get})?")
            }
        }
        FieldType::Array(_) => {
            let each = "e.map(|e| e.into_owned(buf))";
            let collect = format!("map(|e| {each}).collect::<Result<_, DecodeError>>()");
            if optional {
                format!("{get}.map(|i| i.{collect}).transpose()?")
            } else {
                format!("{get}.{collect}?")
            }
        }
        FieldType::Primitive(Primitive::String | Primitive::Bytes | Primitive::Records) => {
            format!("{get}.into_owned(buf)")
        }
        FieldType::Primitive(_) => get,
    }
}

/// `to_owned_via_accessors` of the lazy view: the owned struct built from its accessors
/// alone, for the proofs that every accessor reads what the owned decoder reads.
fn emit_through_accessors(code: &mut Code, cx: &Context<'_>, s: &Struct, cfg: &str) {
    let (name, view) = (&s.name, view_name(&s.name));
    let mut body = Code::new();
    body.open(format!("Ok({name}"));
    for field in &s.fields {
        body.line(format!(
            "{}: {},",
            field_ident(field),
            through_accessor(field)
        ));
    }
    let unknown = format!(
        "{{\n    let mut ok = true;\n    let fields = this.0.walk_tagged().map(|(mut w, found)| {{\n        if !found {{\n            Self::view_skip_to(&mut w, usize::MAX);\n        }}\n        let fields = w.read_unknown_tagged({});\n        ok = w.ok();\n        fields\n    }});\n    Lazy::finish(this.0.origin(), ok, fields.unwrap_or_default())?\n}}",
        known_tag(s)
    );
    let unknown = cx
        .when(cx.message.flexible_versions)
        .choose(&unknown, "TaggedFields::new()");
    body.line(format!("unknown_tagged_fields: {unknown},"));
    body.close_with(")");
    let mut body = body.finish();
    if super::uses_ident(&body, "buf") {
        body = format!("let buf = this.0.buf();\n{body}");
    }
    // One step over the struct marks where its fields lie, if no step did (the root), so
    // that each accessor below starts where it passed.
    let body = format!("let this = self.marked();\n{body}");
    let body = with_bindings(cx, "self.0.version()", body);
    code.line(format!("#[cfg({cfg})]"));
    code.open(format!("impl<'a> {view}<'a, Lazy>"));
    code.doc(&format!(
        " The owned `{name}` read through the accessors alone (each field, tagged ones by\n \
         tag, unknown tagged fields from the section): the proof that every accessor reads what\n \
         the owned decoder reads. `to_owned` is the faster way to the same value."
    ));
    code.line("#[doc(hidden)]");
    code.line("#[inline]");
    // A failure is named by the owned decode only once what the read built is dropped (see
    // `ViaAccessors`): here, around the whole read, not around each nested struct's (their
    // `read_via_accessors`), so that a read pays for it once.
    code.block(
        format!("pub fn to_owned_via_accessors(self) -> Result<{name}, DecodeError>"),
        |code| {
            code.line("let read = ViaAccessors::enter();");
            code.line("read.finish(self.0.origin(), self.read_via_accessors())")
        },
    );
    code.doc(
        " `to_owned_via_accessors` inside another's read: its failure named by the outermost.",
    );
    code.line("#[doc(hidden)]");
    code.line("#[inline]");
    code.block(
        format!("pub fn read_via_accessors(self) -> Result<{name}, DecodeError>"),
        |code| code.line(body),
    );
    code.close();
}

/// The fields struct of struct `name` (`fields()`).
fn fields_name(name: &str) -> String {
    format!("{name}Fields")
}

/// The type of one value of `ty` in a fields struct: nested structs as their fields, arrays of
/// structs as iterators of their fields, arrays of fixed-width values as `ViewArray`s.
fn fields_value_type(ty: &FieldType) -> String {
    match ty {
        FieldType::Struct(name) => format!("{}<'a, M>", fields_name(name)),
        FieldType::Array(element) => match element.as_ref() {
            FieldType::Struct(name) => format!("ViewIter<'a, {}<'a, M>, M>", fields_name(name)),
            element if is_primitive_array(ty) => format!("ViewArray<'a, {}>", value_type(element)),
            element => format!("ViewIter<'a, {}, M>", value_type(element)),
        },
        _ => value_type(ty),
    }
}

fn fields_type(field: &Field) -> String {
    let ty = fields_value_type(&field.ty);
    if field.is_optional() {
        format!("Option<{ty}>")
    } else {
        ty
    }
}

/// The expression reading `field`'s value for its fields struct from the walk `w` (a
/// `&mut Walk`), leaving the walk past it: an `Option` of the value for optional fields.
fn read_fields_value(cx: &Context<'_>, field: &Field) -> String {
    let (c, n) = (cx.compact(field), nullable(cx, field));
    let optional = field.is_optional();
    let (read, always) = match &field.ty {
        FieldType::Struct(name) => {
            let read = format!("{}::<M>::view_read_fields", view_name(name));
            if !optional {
                return format!("{read}(w)");
            }
            (format!("w.read_struct_with({n}, {read})"), false)
        }
        FieldType::Array(element) => {
            let skip = match element.as_ref() {
                FieldType::Struct(name) => format!("{}::<M>::view_step(w);", view_name(name)),
                FieldType::Primitive(Primitive::String) => format!("w.skip_str({c});"),
                FieldType::Primitive(Primitive::Bytes | Primitive::Records) => {
                    format!("w.skip_bytes({c});")
                }
                element if is_primitive_array(&field.ty) => {
                    let read = format!(
                        "w.read_fixed_array::<{}>({c}, {})",
                        value_type(element),
                        if optional { n.as_str() } else { "false" }
                    );
                    return if optional {
                        read
                    } else {
                        format!("{read}.unwrap_or_default()")
                    };
                }
                FieldType::Primitive(_) => "w.skip(1);".into(),
                FieldType::Array(_) => unreachable!("arrays of arrays are refused by validation"),
            };
            let read = format!(
                "w.read_array_then({c}, {}, |w| {{\n    {skip}\n}})",
                if optional { n.as_str() } else { "false" }
            );
            (read, true)
        }
        _ => return read_view(cx, field, "w"),
    };
    if optional {
        read
    } else if always {
        format!("{read}.unwrap_or_else(|| ViewIter::empty(w.origin()))")
    } else {
        read
    }
}

/// The value of `field` in its fields struct where the version lacks it (`origin` in scope).
fn fields_default(field: &Field) -> String {
    if default_is_null(field) {
        return "None".into();
    }
    let value = match (&field.ty, &field.default) {
        (FieldType::Array(_), _) if is_primitive_array(&field.ty) => "ViewArray::default()".into(),
        (FieldType::Array(_), _) => "ViewIter::empty(origin)".into(),
        (FieldType::Struct(name), _) => {
            format!("{}::<M>::view_default_fields(origin)", view_name(name))
        }
        (FieldType::Primitive(Primitive::String), DefaultValue::String(s)) => format!("{s:?}"),
        (FieldType::Primitive(Primitive::String), _) => "\"\"".into(),
        (FieldType::Primitive(Primitive::Bytes | Primitive::Records), _) => "&[]".into(),
        (FieldType::Primitive(Primitive::Uuid), DefaultValue::Uuid(bytes)) if *bytes != [0; 16] => {
            let bytes: Vec<String> = bytes.iter().map(u8::to_string).collect();
            format!("Uuid([{}])", bytes.join(", "))
        }
        (FieldType::Primitive(Primitive::Uuid), _) => "Uuid::ZERO".into(),
        _ => return super::field_default(field),
    };
    if field.is_optional() {
        format!("Some({value})")
    } else {
        value
    }
}

/// The fields struct of `s` (`{Name}Fields`), its `ViewValue` (an array of them reads each
/// element's fields in one pass), and the view's `view_read_fields`/`view_default_fields`.
fn emit_fields_struct(code: &mut Code, s: &Struct, cfg: &str) {
    let (name, fields, view) = (&s.name, fields_name(&s.name), view_name(&s.name));
    code.blank();
    code.doc(&format!(
        " Every field of a `{name}` read in one pass by its view's `fields()`: plain values,\n \
         strings and bytes borrowed from the frame, nested structs as their own fields, arrays\n \
         of structs as iterators of their fields (each element read in one pass as it goes),\n \
         arrays of numbers as [`ViewArray`]s. A field the version\n \
         lacks holds its default."
    ));
    code.line(format!("#[cfg({cfg})]"));
    code.line("#[derive(Clone, Debug)]");
    code.line("#[non_exhaustive]");
    code.open(format!("pub struct {fields}<'a, M: ViewMode = Checked>"));
    for field in &s.fields {
        code.doc(&format!(" `{}`, versions {}.", field.name, field.versions));
        code.line(format!(
            "pub {}: {},",
            field_ident(field),
            fields_type(field)
        ));
    }
    code.doc(" The struct's tagged section: any tagged field by tag.");
    code.line("pub tagged_section: TaggedSection<'a, M>,");
    code.close();
    code.blank();
    code.line(format!("#[cfg({cfg})]"));
    code.open(format!(
        "impl<'a, M: ViewMode> ViewValue<'a, M> for {fields}<'a, M>"
    ));
    code.line("#[inline]");
    code.block("fn read(w: &mut Walk<'a, M>) -> Self", |code| {
        code.line(format!("{view}::<M>::view_read_fields(w)"));
    });
    code.close();
}

/// A run of consecutive fixed-width fields (`runs`, as the owned decoder groups them) read
/// for `view_read_fields` with one bounds check where the version has the run's layout and the
/// bytes hold it, each field at its constant offset; otherwise field by field as before (which
/// marks the walk bad where they run short). Binds the fields' locals, as the per-field code
/// does (a value, or an `Option` where some version lacks the field), and their inits. With
/// `tags` (the section's read, which follows the run), the run also takes an empty tagged
/// section's zero byte and binds `tagged_section`.
fn read_fields_run(
    body: &mut Code,
    inits: &mut Vec<String>,
    cx: &Context<'_>,
    s: &Struct,
    run: &Run,
    tags: Option<&str>,
) {
    let local = |field: &Field| format!("f_{}", snake_case(&field.name));
    let len = run.len;
    let scrutinee = run_scrutinee(body, cx, run, "w", tags.is_some());
    let (mut locals, mut from_run, mut one_by_one) = (Vec::new(), Vec::new(), Vec::new());
    for index in run.fields.clone() {
        let field = &s.fields[index];
        let ident = field_ident(field);
        let positional = cx.when(cx.positional(field));
        let read = read_view(cx, field, "w");
        let at = run.slot(index).map(|(offset, p)| {
            let width = p.fixed_width().expect("fixed width");
            format!(
                "{}(wire::read_at::<{offset}, {width}, {len}>(run))",
                super::decode::from_be_bytes(p)
            )
        });
        match positional {
            Cond::Never => {
                inits.push(format!("{ident}: {},", fields_default(field)));
                continue;
            }
            Cond::Always => {
                from_run.push(at.expect("a field of every version is in the run's layout"));
                one_by_one.push(read);
                inits.push(format!("{ident}: {},", local(field)));
            }
            Cond::Expr(..) => {
                from_run.push(at.map_or_else(|| "None".into(), |at| format!("Some({at})")));
                one_by_one.push(positional.choose(&format!("Some({read})"), "None"));
                inits.push(format!(
                    "{ident}: {}.unwrap_or({}),",
                    local(field),
                    fields_default(field)
                ));
            }
        }
        locals.push(local(field));
    }
    let pattern = match tags {
        Some(tags) => {
            locals.push("tagged_section".into());
            from_run.push("section".into());
            one_by_one.push(tags.into());
            "Some((run, section))"
        }
        None => "Some(run)",
    };
    let tuple = |values: &[String]| {
        let lines: String = values.iter().map(|value| format!("{value},\n")).collect();
        format!("(\n{})", super::indented(&lines))
    };
    body.open(format!("let {} = match {scrutinee}", tuple(&locals)));
    body.line(format!("{pattern} => {},", tuple(&from_run)));
    body.line(format!("None => {},", tuple(&one_by_one)));
    body.close_with(";");
}

/// `view_read_fields` (every field read in one pass, the walk left past the struct) and
/// `view_default_fields` (every field's default, for a struct the version lacks).
fn emit_read_fields(code: &mut Code, cx: &Context<'_>, s: &Struct) {
    let fields = fields_name(&s.name);
    let local = |field: &Field| format!("f_{}", snake_case(&field.name));
    let flexible = cx.when(cx.message.flexible_versions);
    let mut body = Code::new();
    let mut arms = String::new();
    let mut inits = Vec::new();
    let pieces = pieces(cx, s);
    // As in the owned decoder: a run that ends the struct takes an empty section with it.
    let run_takes_tags = run_takes_tags(cx, s, &pieces);
    let empty_section =
        flexible.choose("w.read_tagged_section(|_, _| {})", "TaggedSection::none()");
    let last = pieces.len().saturating_sub(1);
    for (at, piece) in pieces.into_iter().enumerate() {
        let field = match piece {
            Piece::Field(field) => field,
            Piece::Run(run) => {
                let tags = (run_takes_tags && at == last).then_some(empty_section.as_str());
                read_fields_run(&mut body, &mut inits, cx, s, &run, tags);
                continue;
            }
        };
        let positional = cx.when(cx.positional(field));
        let tagged = match field.tag {
            Some(_) => cx.when(field.tagged_versions),
            None => Cond::Never,
        };
        let read = read_fields_value(cx, field);
        let ident = field_ident(field);
        let default = fields_default(field);
        match (&positional, &tagged) {
            (Cond::Never, Cond::Never) => inits.push(format!("{ident}: {default},")),
            (Cond::Always, Cond::Never) => {
                body.line(format!("let {} = {read};", local(field)));
                inits.push(format!("{ident}: {},", local(field)));
            }
            _ => {
                let mutable = if matches!(tagged, Cond::Never) {
                    ""
                } else {
                    "mut "
                };
                body.line(format!(
                    "let {mutable}{} = {};",
                    local(field),
                    positional.choose(&format!("Some({read})"), "None")
                ));
                if !matches!(tagged, Cond::Never) {
                    let tag = field.tag.expect("tagged");
                    let test = match tagged.and(&format!("tag == {tag}")) {
                        Some(test) => test,
                        None => unreachable!("a tagged field is tagged in some version"),
                    };
                    // An `if` chain: a `match` of one arm is what clippy calls a single match.
                    if !arms.is_empty() {
                        arms += " else ";
                    }
                    arms += &format!(
                        "if {test} {{\n    {} = Some({});\n}}",
                        local(field),
                        read.replace('\n', "\n    ")
                    );
                }
                // A call only where the default needs one (an empty iterator, nested defaults).
                let or = if default == "ViewArray::default()" {
                    "unwrap_or_default()".to_string()
                } else if default.contains("::") && default.contains('(') {
                    format!("unwrap_or_else(|| {default})")
                } else {
                    format!("unwrap_or({default})")
                };
                inits.push(format!("{ident}: {}.{or},", local(field)));
            }
        }
    }
    let section = if arms.is_empty() {
        "w.read_tagged_section(|_, _| {})".to_string()
    } else {
        format!(
            "w.read_tagged_section(|tag, w| {{\n{}}})",
            super::indented(&arms)
        )
    };
    if !run_takes_tags {
        body.line(format!(
            "let tagged_section = {};",
            flexible.choose(&section, "TaggedSection::none()")
        ));
    }
    body.line("w.check_within();");
    body.open(&fields);
    for init in inits {
        body.line(init);
    }
    body.line("tagged_section,");
    body.close();
    let body = body.finish();
    let body = if super::uses_ident(&body, "origin") {
        format!("let origin = w.origin();\n{body}")
    } else {
        body
    };
    let body = with_bindings(cx, "w.version()", body);
    code.line("#[doc(hidden)]");
    code.line("#[inline]");
    code.block(
        format!("pub fn view_read_fields(w: &mut Walk<'a, M>) -> {fields}<'a, M>"),
        |code| code.line(body),
    );
    code.blank();
    let mut body = Code::new();
    body.open(&fields);
    for field in &s.fields {
        body.line(format!(
            "{}: {},",
            field_ident(field),
            fields_default(field)
        ));
    }
    body.line("tagged_section: TaggedSection::none(),");
    body.close();
    let body = body.finish();
    let origin = super::binding(&body, "origin");
    code.line("#[doc(hidden)]");
    code.line("#[inline]");
    code.block(
        format!("pub fn view_default_fields({origin}: M::Origin<'a>) -> {fields}<'a, M>"),
        |code| code.line(body),
    );
}

/// The owned value of `field` from its fields struct `f`, converted (`?` on each `Result`).
fn owned_from_fields(field: &Field) -> String {
    let get = format!("f.{}", field_ident(field));
    let optional = field.is_optional();
    match &field.ty {
        FieldType::Struct(name) => {
            let convert = format!("{}::<M>::view_fields_owned", view_name(name));
            if optional {
                format!("{get}.map(|v| {convert}(v, buf)).transpose()?")
            } else {
                format!("{convert}({get}, buf)?")
            }
        }
        FieldType::Array(element) => {
            let collect = match element.as_ref() {
                FieldType::Struct(name) => format!(
                    "collect_fields(a, |v| {}::<M>::view_fields_owned(v, buf))",
                    view_name(name)
                ),
                _ if is_primitive_array(&field.ty) => return format!("{get}.into_owned(buf)"),
                _ => "collect_values(a, buf)".into(),
            };
            if optional {
                format!("{get}.map(|a| {collect}).transpose()?")
            } else {
                format!("{{\n    let a = {get};\n    {collect}?\n}}")
            }
        }
        FieldType::Primitive(Primitive::String | Primitive::Bytes | Primitive::Records) => {
            format!("{get}.into_owned(buf)")
        }
        FieldType::Primitive(_) => get,
    }
}

/// `fields()`, its owned conversion (`view_fields_owned`, `to_owned_via_fields`: the proof
/// that it reads what the owned decoder reads).
fn emit_fields_call(code: &mut Code, s: &Struct) {
    let (name, fields) = (&s.name, fields_name(&s.name));
    code.doc(&format!(
        " Every field of the struct read in one pass (`{fields}`): one walk and one `Result`\n \
         for the whole struct where the accessors take one each. Its arrays of structs iterate\n \
         their elements' fields, each read in one pass as the iterator goes."
    ));
    code.line("#[inline]");
    code.block(format!("pub fn fields(&self) -> M::Out<{fields}<'a, M>>"), |code| {
        code.line(
            "let mut ok = true;\nlet value = match self.0.walk() {\n    Some(mut w) => {\n        let value = Self::view_read_fields(&mut w);\n        ok = w.ok();\n        value\n    }\n    None => Self::view_default_fields(self.0.origin()),\n};\nM::finish(self.0.origin(), ok, value)",
        );
    });
    code.blank();
    let mut body = Code::new();
    body.open(format!("Ok({name}"));
    for field in &s.fields {
        body.line(format!(
            "{}: {},",
            field_ident(field),
            owned_from_fields(field)
        ));
    }
    body.line(format!(
        "unknown_tagged_fields: f.tagged_section.unknown(buf, {}),",
        known_tag(s)
    ));
    body.close_with(")");
    let body = body.finish();
    let buf = super::binding(&body, "buf");
    code.line("#[doc(hidden)]");
    code.line("#[inline]");
    code.block(
        format!(
            "pub fn view_fields_owned(f: {fields}<'a, M>, {buf}: &'a Bytes) -> Result<{name}, DecodeError>"
        ),
        |code| code.line(body),
    );
    code.blank();
    code.doc(&format!(
        " The owned `{name}` built from `fields()`: the proof that it reads what the owned\n \
         decoder reads."
    ));
    code.line("#[doc(hidden)]");
    code.line("#[inline]");
    code.block(
        format!("pub fn to_owned_via_fields(self) -> Result<{name}, DecodeError>"),
        |code| {
            code.line("Self::view_fields_owned(M::result(self.fields())?, self.0.buf())");
        },
    );
}

pub(crate) fn emit_view(code: &mut Code, cx: &Context<'_>, s: &Struct, is_root: bool) {
    let Some(cfg) = view_cfg(cx.message.kind) else {
        return;
    };
    let (name, view) = (&s.name, view_name(&s.name));

    code.blank();
    if is_root {
        code.doc(&format!(
            " A zero-copy view of a `{name}`: its bytes, checked once when the view was made; each\n \
             accessor reads its field on demand and cannot fail. `to_owned` builds the `{name}`.\n \
             `{name}View<'a, Lazy>` is its lazy view: only the header was checked, and each\n \
             accessor returns a `Result` (see `wire::view::ViewMode`)."
        ));
    } else {
        code.doc(&format!(
            " A zero-copy view of the `{name}` struct of `{}` (see the message's view).",
            cx.message.name
        ));
    }
    code.line(format!("#[cfg({cfg})]"));
    code.line("#[derive(Clone, Copy)]");
    code.line(format!(
        "pub struct {view}<'a, M: ViewMode = Checked>(ViewCursor<'a, M>);"
    ));
    code.blank();
    code.line(format!("#[cfg({cfg})]"));
    code.line(format!("view_struct!({view}, {name});"));
    code.blank();
    code.line(format!("#[cfg({cfg})]"));
    code.open(format!("impl<'a, M: ViewMode> {view}<'a, M>"));
    let marked = marked_field(cx, s);
    for index in 0..s.fields.len() {
        emit_accessor(code, cx, s, index, marked == Some(index));
        code.blank();
    }
    code.doc(
        " This view after one step over its struct that marks where its fields lie, if no step\n \
         did (a message's root view, an array's element): then every accessor starts where\n \
         that step passed its field instead of walking from the struct's start. Worth it\n \
         before reading fields that follow a large array, or several fields of a view; a\n \
         view found by a struct field is marked already; an array's iterator hands out its\n \
         elements unmarked (it steps over an element only when asked for the next one), but\n \
         for those of a struct with a `bytes` or `records` field.",
    );
    code.line("#[inline]");
    code.block("pub fn marked(self) -> Self", |code| {
        code.line("Self(self.0.marked(Self::view_skip))");
    });
    code.blank();
    code.doc(" The raw bytes of the tagged field `tag`, known or not, if the struct has it.");
    code.line("#[inline]");
    let flexible = cx.when(cx.message.flexible_versions);
    let raw = flexible.choose(
        "let mut ok = true;\nlet raw = self.0.walk_tagged().and_then(|(mut w, found)| {\n    if !found {\n        Self::view_skip_to(&mut w, usize::MAX);\n    }\n    let raw = w.raw_tagged(tag);\n    ok = w.ok();\n    raw\n});\nM::finish(self.0.origin(), ok, raw)",
        "M::finish(self.0.origin(), true, None)",
    );
    let raw = with_bindings(cx, "self.0.version()", raw);
    let tag = super::binding(&raw, "tag");
    code.block(
        format!("pub fn raw_tagged_field(&self, {tag}: u32) -> M::Out<Option<&'a [u8]>>"),
        |code| code.line(raw),
    );
    code.blank();
    code.doc(&format!(
        " The owned `{name}`: equal to what the owned decoder reads from the same bytes.\n \
         Strings and bytes share the input's buffer; arrays are collected. A lazy view runs\n \
         the owned decoder on the struct's bytes (they were not checked)."
    ));
    // `#[inline]`, like every accessor: compiled only in a crate that calls it, not once per
    // struct in every dependent's build of the library.
    code.line("#[inline]");
    code.block(format!("pub fn to_owned(self) -> M::Out<{name}>"), |code| {
        code.line(format!(
            "M::to_owned(self.0, <{name} as DecodeFields>::decode_fields, Self::view_read_owned)"
        ));
    });
    code.blank();
    emit_fields_call(code, s);
    code.blank();
    emit_walk_call(code, s);
    code.blank();
    emit_check(code, cx, s);
    code.blank();
    emit_skip(code, cx, s);
    code.blank();
    emit_read_owned(code, cx, s);
    code.blank();
    emit_read_fields(code, cx, s);
    code.blank();
    emit_visit(code, cx, s);
    code.close();
    code.blank();
    emit_through_accessors(code, cx, s, &cfg);
    emit_fields_struct(code, s, &cfg);
}

/// `request_view_check(key)` / `response_view_check(key)`: the check of an API's body and its
/// valid versions, for the frame views, which learn the API from a header or the caller.
pub(crate) fn emit_spec_lookup(code: &mut Code, set: &SchemaSet, kind: MessageKind, krate: &str) {
    let (function, label) = match kind {
        MessageKind::Request => ("request_view_check", "request"),
        _ => ("response_view_check", "response"),
    };
    let cfg = view_cfg(kind).expect("requests and responses have views");
    code.doc(&format!(
        " The view check of the {label} body of API `key` and its valid versions, if compiled."
    ));
    code.line(format!("#[cfg({cfg})]"));
    code.line("#[doc(hidden)]");
    // Inline, as the codecs: generated in the crate that makes a frame view, not in this
    // library, where it would compile every compiled API's view check for any dependent.
    code.line("#[inline]");
    code.open(format!(
        "pub fn {function}(key: i16) -> Option<({krate}::wire::view::ViewCheck, {krate}::VersionRange)>"
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
            "{key} => Some(({module}::{}::<{krate}::wire::view::Checked>::view_check, {module}::{}::VALID_VERSIONS)),",
            view_name(&message.name),
            message.name
        ));
    }
    code.line("_ => None,");
    code.close();
    code.close();
}

/// The visitor's method for one value of primitive `p` (`ViewVisitor`).
fn visit_method(p: Primitive) -> &'static str {
    match p {
        Primitive::String => "string",
        Primitive::Records => "records",
        p => super::primitive_suffix(p),
    }
}

/// Statements reading one value of `field` from the walk `w` and handing it to the visitor
/// `v` (`view_visit`: in wire order, nested structs and arrays' elements as they come).
fn visit_value(cx: &Context<'_>, field: &Field) -> String {
    let (c, n) = (cx.compact(field), nullable(cx, field));
    let name = &field.name;
    let optional = field.is_optional();
    let nullable_or_false = if optional { n.as_str() } else { "false" };
    match &field.ty {
        FieldType::Primitive(p @ (Primitive::String | Primitive::Bytes | Primitive::Records)) => {
            let read = read_view(cx, field, "w");
            let read = if optional {
                read
            } else {
                format!("Some({read})")
            };
            format!("v.{}(\"{name}\", {read});", visit_method(*p))
        }
        FieldType::Primitive(p) => {
            format!(
                "v.{}(\"{name}\", {});",
                visit_method(*p),
                read_view(cx, field, "w")
            )
        }
        FieldType::Struct(struct_name) => {
            let inner = format!(
                "v.begin_struct(\"{name}\");\n{}::<M>::view_visit(w, v);\nv.end_struct(\"{name}\");",
                view_name(struct_name)
            );
            // The marker where the version lets the struct be null (`nullable`, folded).
            let test = match cx.when(field.nullable_versions.intersect(&field.versions)) {
                _ if !optional => return inner,
                Cond::Never => return inner,
                Cond::Always => "w.struct_present()".to_string(),
                cond => format!("{} || w.struct_present()", cond.not().to_bool()),
            };
            format!(
                "if {test} {{\n{}}} else {{\n    v.null(\"{name}\");\n}}",
                super::indented(&inner)
            )
        }
        FieldType::Array(element) if is_primitive_array(&field.ty) => format!(
            "v.fixed_array(\"{name}\", w.read_fixed_array::<{}>({c}, {nullable_or_false}));",
            value_type(element)
        ),
        FieldType::Array(element) => {
            let each = match element.as_ref() {
                FieldType::Struct(struct_name) => format!(
                    "v.begin_struct(\"{name}\");\n{}::<M>::view_visit(w, v);\nv.end_struct(\"{name}\");",
                    view_name(struct_name)
                ),
                FieldType::Primitive(p @ (Primitive::String | Primitive::Bytes | Primitive::Records)) => {
                    format!(
                        "v.{}(\"{name}\", Some(w.read_value::<{}>({c})));",
                        visit_method(*p),
                        value_type(element)
                    )
                }
                FieldType::Primitive(p) => format!(
                    "v.{}(\"{name}\", w.read_value::<{}>({c}));",
                    visit_method(*p),
                    value_type(element)
                ),
                FieldType::Array(_) => unreachable!("arrays of arrays are refused by validation"),
            };
            // A bad walk stops the array (its values are thrown away with the error), so
            // that bytes cut short never cost more than the elements that are there.
            format!(
                "match w.visit_count({c}, {nullable_or_false}) {{\n    Some(count) => {{\n        v.begin_array(\"{name}\", count);\n        for _ in 0..count {{\n            if !w.ok() {{\n                break;\n            }}\n{}        }}\n        v.end_array(\"{name}\");\n    }}\n    None => v.null(\"{name}\"),\n}}",
                super::indented(&super::indented(&super::indented(&each)))
            )
        }
    }
}

/// A run of consecutive fixed-width fields for `view_visit`: one bounds check where the
/// version has the run's layout and the bytes hold it, each field handed to the visitor from
/// its constant offset; otherwise field by field. With `untagged`, the run also takes an
/// empty tagged section's zero byte, and the one-by-one path reads the section (`section`).
fn visit_run(body: &mut Code, cx: &Context<'_>, s: &Struct, run: &Run, section: Option<&str>) {
    let len = run.len;
    let scrutinee = run_scrutinee(body, cx, run, "w", section.is_some());
    let (mut from_run, mut one_by_one) = (Code::new(), Code::new());
    for index in run.fields.clone() {
        let field = &s.fields[index];
        let positional = cx.when(cx.positional(field));
        if matches!(positional, Cond::Never) {
            continue;
        }
        if let Some((offset, p)) = run.slot(index) {
            let width = p.fixed_width().expect("fixed width");
            from_run.line(format!(
                "v.{}(\"{}\", {}(wire::read_at::<{offset}, {width}, {len}>(run)));",
                visit_method(p),
                field.name,
                super::decode::from_be_bytes(p)
            ));
        }
        positional.guard(&mut one_by_one, &visit_value(cx, field));
    }
    if let Some(section) = section {
        one_by_one.line(section);
    }
    let pattern = if section.is_some() {
        "Some((run, _))"
    } else {
        "Some(run)"
    };
    let (from_run, one_by_one) = (from_run.finish(), one_by_one.finish());
    let pattern = if from_run.trim().is_empty() {
        pattern.replace("run", "_")
    } else {
        pattern.into()
    };
    body.open(format!("match {scrutinee}"));
    body.block(format!("{pattern} =>"), |code| code.line(&from_run));
    body.block("None =>", |code| code.line(&one_by_one));
    body.close();
}

/// `view_visit`: every field of the struct handed to the visitor `v` in wire order, the walk
/// left past the struct.
fn emit_visit(code: &mut Code, cx: &Context<'_>, s: &Struct) {
    let flexible = cx.when(cx.message.flexible_versions);
    let mut body = Code::new();
    let mut arms = String::new();
    let pieces = pieces(cx, s);
    let run_takes_tags = run_takes_tags(cx, s, &pieces);
    let unknown_only = "w.read_tagged_section(|tag, w| v.unknown_tagged(tag, w.rest()));";
    let last = pieces.len().saturating_sub(1);
    for (at, piece) in pieces.into_iter().enumerate() {
        let field = match piece {
            Piece::Field(field) => field,
            Piece::Run(run) => {
                let section = (run_takes_tags && at == last).then(|| {
                    let mut section = Code::new();
                    flexible.guard(&mut section, unknown_only);
                    section.finish()
                });
                visit_run(&mut body, cx, s, &run, section.as_deref());
                continue;
            }
        };
        let positional = cx.when(cx.positional(field));
        positional.guard(&mut body, &visit_value(cx, field));
        if let Some(tag) = field.tag {
            let tagged = cx.when(field.tagged_versions);
            if let Some(test) = tagged.and(&format!("tag == {tag}")) {
                if !arms.is_empty() {
                    arms += " else ";
                }
                arms += &format!(
                    "if {test} {{\n{}}}",
                    super::indented(&visit_value(cx, field))
                );
            }
        }
    }
    if !run_takes_tags {
        let section = if arms.is_empty() {
            unknown_only.to_string()
        } else {
            format!(
                "w.read_tagged_section(|tag, w| {{\n{}}});",
                super::indented(&format!(
                    "{arms} else {{\n    v.unknown_tagged(tag, w.rest());\n}}"
                ))
            )
        };
        flexible.guard(&mut body, &section);
    }
    body.line("w.check_within();");
    let body = with_bindings(cx, "w.version()", body.finish());
    let v = super::binding(&body, "v");
    code.line("#[doc(hidden)]");
    code.line("#[inline]");
    code.block(
        format!("pub fn view_visit<V: ViewVisitor<'a> + ?Sized>(w: &mut Walk<'a, M>, {v}: &mut V)"),
        |code| code.line(body),
    );
}

/// `walk`: every field of the struct handed to a visitor in wire order.
fn emit_walk_call(code: &mut Code, s: &Struct) {
    code.doc(&format!(
        " Every field of the `{}` handed to `visitor` in wire order ([`ViewVisitor`]): each byte\n \
         read once, nested structs and arrays' elements as they come. A lazy view's walk\n \
         returns the owned decoder's error at its end where the bytes are bad (the visitor may\n \
         have been handed values read past the fault before it).",
        s.name
    ));
    code.line("#[inline]");
    code.block(
        "pub fn walk<V: ViewVisitor<'a> + ?Sized>(&self, visitor: &mut V) -> M::Out<()>",
        |code| {
            code.line(
                "let ok = match self.0.walk() {\n    Some(mut w) => {\n        Self::view_visit(&mut w, visitor);\n        w.ok()\n    }\n    None => true,\n};\nM::finish(self.0.origin(), ok, ())",
            );
        },
    );
}

/// The closure that tells a struct's own tags from unknown ones in its tagged section, for
/// the three readers that collect the unknown ones.
fn known_tag(s: &Struct) -> String {
    let known: Vec<String> = s
        .fields
        .iter()
        .filter_map(|f| f.tag.map(|t| t.to_string()))
        .collect();
    if known.is_empty() {
        "|_| false".to_owned()
    } else {
        format!("|tag| [{}].contains(&tag)", known.join(", "))
    }
}
