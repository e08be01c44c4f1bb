//! Runs of consecutive fixed-width fields, read and written with one length or capacity check.
//!
//! A run is a stretch of a struct's fields that are all fixed-width numbers, booleans or
//! uuids and never tagged. Its layout (which of its fields are on the wire, at which offsets)
//! is taken at the newest versions whose layout is the same as the newest version's; the
//! decoder and encoder handle those versions with one array of `len` bytes, and every other
//! version (and a short input, which must still name the field that is short) field by field
//! as before.

use super::code::Code;
use super::{tagged_fields, Cond, Context};
use crate::model::{Field, FieldType, Primitive, Struct, Versions};
use std::ops::Range;

/// One run of a struct.
pub(crate) struct Run {
    /// The struct's fields that form the run, by index.
    pub fields: Range<usize>,
    /// The versions the one-array path serves: where the layout is the newest version's.
    pub versions: Versions,
    /// The fields on the wire in those versions, in order: (index, offset, primitive).
    pub present: Vec<(usize, usize, Primitive)>,
    /// Bytes of the run in those versions.
    pub len: usize,
}

impl Run {
    /// The field at `index` within those versions: its offset and type, if it is on the wire.
    pub fn slot(&self, index: usize) -> Option<(usize, Primitive)> {
        self.present
            .iter()
            .find(|(i, ..)| *i == index)
            .map(|&(_, offset, p)| (offset, p))
    }
}

/// The fixed-width type of a field that can be part of a run.
fn run_primitive(cx: &Context<'_>, s: &Struct, index: usize) -> Option<Primitive> {
    let field = &s.fields[index];
    match field.ty {
        FieldType::Primitive(p) if field.tag.is_none() && p.fixed_width().is_some() => {
            // A field no version has is left to the per-field code (which writes nothing).
            (!cx.positional(field)
                .intersect(&cx.message.valid_versions)
                .is_empty())
            .then_some(p)
        }
        _ => None,
    }
}

/// A struct's fields in order, as its codecs take them: one at a time, or a run at once.
pub(crate) enum Piece<'a> {
    Field(&'a Field),
    Run(Run),
}

/// The struct's fields, runs grouped.
pub(crate) fn pieces<'a>(cx: &Context<'_>, s: &'a Struct) -> Vec<Piece<'a>> {
    let mut runs = fixed_runs(cx, s).into_iter().peekable();
    let mut pieces = Vec::new();
    let mut index = 0;
    while index < s.fields.len() {
        if let Some(run) = runs.next_if(|run| run.fields.start == index) {
            index = run.fields.end;
            pieces.push(Piece::Run(run));
        } else {
            pieces.push(Piece::Field(&s.fields[index]));
            index += 1;
        }
    }
    pieces
}

/// The runs of a struct worth a single check: at least two fields on the wire.
fn fixed_runs(cx: &Context<'_>, s: &Struct) -> Vec<Run> {
    let mut runs = Vec::new();
    let mut index = 0;
    while index < s.fields.len() {
        let start = index;
        while index < s.fields.len() && run_primitive(cx, s, index).is_some() {
            index += 1;
        }
        if index == start {
            index += 1;
            continue;
        }
        if let Some(run) = layout(cx, s, start..index) {
            runs.push(run);
        }
    }
    runs
}

/// The run of `fields` at the newest versions, if two or more of them are on the wire there.
fn layout(cx: &Context<'_>, s: &Struct, fields: Range<usize>) -> Option<Run> {
    let valid = cx.message.valid_versions;
    let present_at = |v: i16| -> Vec<bool> {
        fields
            .clone()
            .map(|i| cx.positional(&s.fields[i]).contains(v))
            .collect()
    };
    let newest = present_at(valid.max);
    // Walk down from the newest version while the layout stays the same.
    let mut min = valid.max;
    while min > valid.min && present_at(min - 1) == newest {
        min -= 1;
    }
    let mut present = Vec::new();
    let mut len = 0;
    for (i, on_wire) in fields.clone().zip(&newest) {
        if *on_wire {
            let p = run_primitive(cx, s, i).expect("a run field");
            present.push((i, len, p));
            len += p.fixed_width().expect("fixed width");
        }
    }
    (present.len() >= 2).then_some(Run {
        fields,
        versions: Versions {
            min,
            max: valid.max,
        },
        present,
        len,
    })
}

/// What a run's fields are matched on (`Some(run)` or `None`): `{reader}.fixed_run::<N>()`, or
/// with `untagged` `{reader}.fixed_run_untagged::<N, N + 1>()` (the run and an empty tagged
/// section's count), where every version has the run's layout; else `run`, bound in `body` to
/// that where the version has the layout and to `None` where not.
pub(crate) fn run_scrutinee(
    body: &mut Code,
    cx: &Context<'_>,
    run: &Run,
    reader: &str,
    untagged: bool,
) -> String {
    let len = run.len;
    let take = if untagged {
        format!("{reader}.fixed_run_untagged::<{len}, {}>()", len + 1)
    } else {
        format!("{reader}.fixed_run::<{len}>()")
    };
    let versions = cx.when(run.versions);
    match versions {
        Cond::Always => take,
        _ => {
            body.line(format!("let run = {};", versions.choose(&take, "None")));
            "run".to_string()
        }
    }
}

/// Whether the struct's last piece, a run that ends it, takes the tagged section's count with
/// it: where every version the run serves is flexible and the struct knows no tags (the count
/// is then nearly always the zero byte of no fields).
pub(crate) fn run_takes_tags(cx: &Context<'_>, s: &Struct, pieces: &[Piece<'_>]) -> bool {
    match pieces.last() {
        Some(Piece::Run(run)) => {
            !cx.is_never_flexible()
                && tagged_fields(s).is_empty()
                && cx.message.flexible_versions.contains_range(&run.versions)
        }
        _ => false,
    }
}
