//! The fewest bytes a struct or array element takes on the wire at each version, and the
//! memory-per-wire-byte rows built from it.
//!
//! Decoders refuse an array count that the remaining bytes could not hold at the element's
//! minimum size, so they can reserve the whole array at once without a lying count costing
//! memory; the density rows (`DENSITY`) let a test tabulate, for every element type, how many
//! bytes of memory one wire byte can become.

use super::code::Code;
use super::{value_type, Context};
use crate::model::{Field, FieldType, Message, Primitive, Struct, Versions};

/// Whether `field` uses compact (varint) lengths at `version`.
fn compact_at(message: &Message, field: &Field, version: i16) -> bool {
    field
        .flexible_versions
        .unwrap_or(message.flexible_versions)
        .contains(version)
}

/// The fewest wire bytes of one value of `ty` that is not null, at `version`.
fn min_value_size(message: &Message, field: &Field, ty: &FieldType, version: i16) -> usize {
    let compact = compact_at(message, field, version);
    match ty {
        FieldType::Primitive(p) => match (p.fixed_width(), p) {
            (Some(width), _) => width,
            (None, Primitive::String) => {
                if compact {
                    1
                } else {
                    2
                }
            }
            (None, _) => {
                if compact {
                    1
                } else {
                    4
                }
            }
        },
        FieldType::Array(_) => {
            if compact {
                1
            } else {
                4
            }
        }
        FieldType::Struct(name) => match message.struct_by_name(name) {
            Some(nested) => min_struct_size(message, nested, version),
            // The root struct is never nested in itself; a name the model does not know was
            // refused by validation.
            None => 0,
        },
    }
}

/// The fewest wire bytes of `field` at `version`: nothing when absent or tagged, the null
/// marker or length when it may be null.
fn min_field_size(message: &Message, field: &Field, version: i16) -> usize {
    if !field.versions.contains(version) || field.tagged_versions.contains(version) {
        return 0;
    }
    let nullable = field.nullable_versions.contains(version);
    match &field.ty {
        // A nullable struct may be just its marker byte.
        FieldType::Struct(_) if nullable => 1,
        // Null strings, bytes and arrays are a length prefix of the same width.
        ty => min_value_size(message, field, ty, version),
    }
}

/// The fewest wire bytes of struct `s` at `version`.
pub(crate) fn min_struct_size(message: &Message, s: &Struct, version: i16) -> usize {
    let tagged_section = usize::from(message.flexible_versions.contains(version));
    tagged_section
        + s.fields
            .iter()
            .map(|field| min_field_size(message, field, version))
            .sum::<usize>()
}

/// `(versions, value)` runs of `size(version)` over the message's valid versions.
fn version_runs<T: PartialEq>(message: &Message, size: impl Fn(i16) -> T) -> Vec<(Versions, T)> {
    let valid = message.valid_versions;
    let mut runs: Vec<(Versions, T)> = Vec::new();
    for version in valid.min..=valid.max {
        let value = size(version);
        match runs.last_mut() {
            Some((range, last)) if *last == value => range.max = version,
            _ => runs.push((
                Versions {
                    min: version,
                    max: version,
                },
                value,
            )),
        }
    }
    runs
}

fn range_pattern(range: Versions) -> String {
    if range.min == range.max {
        range.min.to_string()
    } else {
        format!("{}..={}", range.min, range.max)
    }
}

/// `fn min_wire_size`, inside the struct's `DecodeFields` impl.
pub(crate) fn emit_min_wire_size(code: &mut Code, cx: &Context<'_>, s: &Struct) {
    let runs = version_runs(cx.message, |v| min_struct_size(cx.message, s, v));
    code.line("#[inline]");
    code.block("fn min_wire_size(version: i16) -> usize", |code| {
        if let [(_, only)] = runs.as_slice() {
            code.line("let _ = version;");
            code.line(only.to_string());
            return;
        }
        code.block("match version", |code| {
            let (last, rest) = runs.split_last().expect("a valid version");
            for (range, size) in rest {
                code.line(format!("{} => {size},", range_pattern(*range)));
            }
            code.line(format!("_ => {},", last.1));
        });
    });
}

/// The array element types of `message` with their minimum wire size per version: each
/// struct that is an array's element, and each array of primitives. `(label, memory of one
/// element as an expression, runs)`.
type Runs = Vec<(Versions, Option<usize>)>;

/// (`None` where the element does not exist at that version.)
fn element_rows(message: &Message) -> Vec<(String, String, Runs)> {
    let mut rows = Vec::new();
    let module = super::module_name(&message.name);
    let structs: Vec<&Struct> = std::iter::once(&message.root)
        .chain(&message.structs)
        .collect();
    // Only array elements are reserved on the heap (and charged to the budget); any other
    // struct lives inside its parent, or is the message itself.
    let is_element = |name: &str| {
        structs
            .iter()
            .flat_map(|s| &s.fields)
            .any(|f| matches!(&f.ty, FieldType::Array(e) if e.struct_name() == Some(name)))
    };
    for s in structs.iter().copied() {
        if is_element(&s.name) {
            let runs = version_runs(message, |v| {
                s.versions
                    .contains(v)
                    .then(|| min_struct_size(message, s, v))
            });
            rows.push((
                s.name.clone(),
                format!("size_of::<{module}::{}>()", s.name),
                runs,
            ));
        }
        for field in &s.fields {
            let FieldType::Array(element) = &field.ty else {
                continue;
            };
            if element.struct_name().is_some() {
                continue;
            }
            let runs = version_runs(message, |v| {
                (s.versions.contains(v) && field.versions.contains(v))
                    .then(|| min_value_size(message, field, element, v))
            });
            // An array held as its wire bytes (`PrimitiveArray`) reserves nothing.
            let memory = if super::is_primitive_array(&field.ty) {
                "0".to_string()
            } else {
                format!("size_of::<{}>()", value_type(element))
            };
            rows.push((format!("{}.{}[]", s.name, field.name), memory, runs));
        }
    }
    rows
}

/// The rows of `DENSITY_ROWS`: one per element type and run of versions, under the schema
/// module's `cfg` (an attribute on an array element).
pub(crate) fn emit_density_rows(code: &mut Code, message: &Message, cfg: Option<&str>) {
    for (label, memory, runs) in element_rows(message) {
        for (range, wire) in runs {
            let Some(wire) = wire else { continue };
            if let Some(cfg) = cfg {
                code.line(format!("#[cfg({cfg})]"));
            }
            code.open("DensityRow");
            code.line(format!("schema: \"{}\",", message.name));
            code.line(format!("element: \"{label}\","));
            code.line(format!("versions: ({}, {}),", range.min, range.max));
            code.line(format!("memory: {memory},"));
            code.line(format!("wire: {wire},"));
            code.close_with(",");
        }
    }
}
