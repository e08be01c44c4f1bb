//! `docs/memory-density.md`: how many bytes of memory one wire byte can become, per schema,
//! computed from the generator's minimum wire sizes and `size_of`, and the default memory
//! budget (`DecodeLimits::MEMORY_PER_INPUT_BYTE`) that follows from the worst of them.
//!
//! The table is written by this test and compared with the checked-in file, so it cannot
//! drift: after a change that moves it, run
//! `KAFKA_CODEC_WRITE_DENSITY=1 cargo test --test codec memory_density` and commit the file.

use kafka_codec::RawTaggedField;
use kafka_codec::{DecodeLimits, PrimitiveArray};

/// One element type of a schema at a run of versions: what one value costs in memory and
/// the fewest bytes it takes on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DensityRow {
    /// The schema (message) name.
    schema: &'static str,
    /// The struct, or `Struct.Field[]` for an element of an array of primitives.
    element: &'static str,
    /// The versions, inclusive, at which `wire` holds.
    versions: (i16, i16),
    /// `size_of` the Rust value.
    memory: usize,
    /// Fewest wire bytes of one element.
    wire: usize,
}

/// Every element row of every compiled schema. The generator writes the table beside the
/// library's `messages.rs` (`density_rows.rs`, which the library does not include: only this
/// test reads it), as an expression over the names imported here.
fn density_rows() -> Vec<DensityRow> {
    #[allow(unused_imports)] // which names the rows use follows the features
    use kafka_codec::{bytes::Bytes, messages::*, PrimitiveArray, Utf8Bytes, Uuid};
    #[allow(unused_imports)]
    use std::mem::size_of;
    let rows: &[DensityRow] = include!(concat!(env!("OUT_DIR"), "/density_rows.rs"));
    rows.to_vec()
}

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/memory-density.md");

/// Memory per wire byte. An element of no wire bytes (a struct with no fields at a version
/// without tagged fields) is still counted as one, since array counts are checked against
/// the remaining bytes at one byte per element at least.
fn density(row: &DensityRow) -> f64 {
    row.memory as f64 / row.wire.max(1) as f64
}

/// Each schema's densest element (the first, in schema order, of equal ones), densest first.
fn densest_per_schema(rows: &[DensityRow]) -> Vec<DensityRow> {
    let mut densest: Vec<DensityRow> = Vec::new();
    for row in rows {
        match densest.iter_mut().find(|d| d.schema == row.schema) {
            Some(d) if density(row) > density(d) => *d = *row,
            Some(_) => {}
            None => densest.push(*row),
        }
    }
    densest.sort_by(|a, b| {
        density(b)
            .total_cmp(&density(a))
            .then(a.schema.cmp(b.schema))
    });
    densest
}

/// An unknown tagged field kept raw: at least a tag byte and a size byte on the wire.
fn unknown_tagged_field() -> DensityRow {
    DensityRow {
        schema: "(any flexible struct)",
        element: "unknown tagged field",
        versions: (0, i16::MAX),
        memory: std::mem::size_of::<RawTaggedField>(),
        wire: 2,
    }
}

/// An array of fixed-width numbers too long to be held inline: it keeps its bytes as a boxed
/// slice of the input, and has more than an inline array's bytes on the wire. (A shorter
/// one costs nothing beyond its field.)
fn shared_primitive_array() -> DensityRow {
    DensityRow {
        schema: "(any array of fixed-width numbers)",
        element: "elements past the inline capacity",
        versions: (0, i16::MAX),
        memory: std::mem::size_of::<bytes::Bytes>(),
        wire: PrimitiveArray::<i8>::INLINE_CAPACITY + 1,
    }
}

fn versions(row: &DensityRow) -> String {
    match row.versions {
        (min, i16::MAX) => format!("{min}+"),
        (min, max) if min == max => min.to_string(),
        (min, max) => format!("{min}–{max}"),
    }
}

fn table(rows: &[DensityRow]) -> String {
    let mut out = String::from(
        "# Memory per wire byte\n\n\
         Written by `tests/codec/memory_density.rs` from the generator's minimum wire size of\n\
         each element (every field at its shortest: empty strings and arrays, nullable structs\n\
         null, tagged fields absent) and `size_of` of its Rust type; `cargo test` fails when\n\
         this file and the code disagree (`KAFKA_CODEC_WRITE_DENSITY=1 cargo test --test codec\n\
         memory_density` rewrites it). Do not edit by hand.\n\n\
         A decode reserves each array once, exactly, after checking that its count fits the\n\
         bytes that remain at the element's minimum size, and charges the reservation to the\n\
         memory budget (`DecodeLimits::memory_budget`). An element's own wire bytes (its\n\
         fixed fields and the count prefixes of its arrays) belong to no other element, so a\n\
         decode reserves at most the worst ratio below times the input. The default budget,\n\
         `DecodeLimits::MEMORY_PER_INPUT_BYTE` per input byte plus 1 MiB, is that worst ratio\n\
         rounded up, so every honest frame decodes under the defaults.\n\n",
    );
    let worst = rows.iter().map(density).fold(0.0, f64::max);
    out += &format!(
        "Worst: {worst:.1} bytes of memory per wire byte; `MEMORY_PER_INPUT_BYTE` = {}.\n\n",
        DecodeLimits::MEMORY_PER_INPUT_BYTE
    );
    out += "| schema | densest element | versions | memory (B) | min wire (B) | memory / wire |\n";
    out += "|---|---|---|--:|--:|--:|\n";
    for row in rows {
        out += &format!(
            "| {} | {} | {} | {} | {} | {:.1} |\n",
            row.schema,
            row.element,
            versions(row),
            row.memory,
            row.wire,
            density(row)
        );
    }
    out
}

#[test]
fn the_density_table_is_current_and_the_default_budget_covers_it() {
    let all = density_rows();
    assert!(
        all.len() > 500,
        "only {} rows: a schema is missing",
        all.len()
    );
    let mut rows = densest_per_schema(&all);
    rows.push(unknown_tagged_field());
    rows.push(shared_primitive_array());
    rows.sort_by(|a, b| density(b).total_cmp(&density(a)));
    let text = table(&rows);
    if std::env::var_os("KAFKA_CODEC_WRITE_DENSITY").is_some() {
        std::fs::write(DOC, &text).expect("write docs/memory-density.md");
    }
    let on_disk = std::fs::read_to_string(DOC).unwrap_or_default();
    assert!(
        on_disk == text,
        "docs/memory-density.md is out of date: run KAFKA_CODEC_WRITE_DENSITY=1 cargo test \
         --test codec memory_density"
    );
    let worst = rows.iter().map(density).fold(0.0, f64::max);
    assert!(
        (DecodeLimits::MEMORY_PER_INPUT_BYTE as f64) >= worst,
        "the default budget ({} per byte) is below the worst density {worst:.1}",
        DecodeLimits::MEMORY_PER_INPUT_BYTE
    );
}
