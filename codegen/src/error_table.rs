//! Kafka's error table: `schemas/error-codes.tsv`, written by `tools/import_schemas.py` from
//! the pinned `kafka-clients` jar. One row per error: code, name, and whether a client may
//! retry the request that got it.

use std::collections::BTreeSet;

/// One known error code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorEntry {
    /// The code on the wire.
    pub code: i16,
    /// Kafka's name for it (`UNKNOWN_TOPIC_OR_PARTITION`).
    pub name: String,
    /// Whether Kafka's exception for it is retriable.
    pub retriable: bool,
}

/// The file name inside the schema directory.
pub const FILE_NAME: &str = "error-codes.tsv";

/// The column header row that follows the comment lines.
const HEADER: &str = "code\tname\tretriable";

/// Reads the table: `#` comment lines, the header row, then `code<TAB>name<TAB>true|false`.
/// Codes and names must be unique, and the rows sorted by code, as the import tool writes them.
pub fn parse(text: &str) -> Result<Vec<ErrorEntry>, String> {
    let mut rows = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.starts_with('#') && !line.trim().is_empty());
    match rows.next() {
        Some((_, HEADER)) => {}
        other => {
            return Err(format!(
                "expected the header row {HEADER:?}, found {:?}",
                other.map(|(_, line)| line)
            ))
        }
    }
    let mut entries: Vec<ErrorEntry> = Vec::new();
    let mut names = BTreeSet::new();
    for (index, line) in rows {
        let at = |message: String| format!("line {}: {message}", index + 1);
        let mut columns = line.split('\t');
        let (Some(code), Some(name), Some(retriable), None) = (
            columns.next(),
            columns.next(),
            columns.next(),
            columns.next(),
        ) else {
            return Err(at(format!("expected 3 tab-separated columns: {line:?}")));
        };
        let code: i16 = code
            .parse()
            .map_err(|_| at(format!("code {code:?} is not an int16")))?;
        let valid_name = name.starts_with(|c: char| c.is_ascii_uppercase())
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if !valid_name {
            return Err(at(format!("{name:?} is not an error name")));
        }
        let retriable = match retriable {
            "true" => true,
            "false" => false,
            other => return Err(at(format!("retriable is {other:?}, not true or false"))),
        };
        if entries.last().is_some_and(|last| last.code >= code) {
            return Err(at(format!("code {code} is out of order or repeated")));
        }
        if !names.insert(name.to_string()) {
            return Err(at(format!("{name} appears twice")));
        }
        entries.push(ErrorEntry {
            code,
            name: name.to_string(),
            retriable,
        });
    }
    if !entries.iter().any(|e| e.code == 0) {
        return Err("no code 0 (NONE)".into());
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rows_and_refuses_malformed_tables() {
        let table = "# a comment\ncode\tname\tretriable\n-1\tUNKNOWN\tfalse\n0\tNONE\tfalse\n3\tX_Y2\ttrue\n";
        let entries = parse(table).unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(
            entries[2],
            ErrorEntry {
                code: 3,
                name: "X_Y2".into(),
                retriable: true
            }
        );
        for bad in [
            "0\tNONE\tfalse\n",
            "code\tname\tretriable\n0\tNONE\n",
            "code\tname\tretriable\n0\tNONE\tyes\n",
            "code\tname\tretriable\n0\tnone\tfalse\n",
            "code\tname\tretriable\n40000\tBIG\tfalse\n",
            "code\tname\tretriable\n0\tNONE\tfalse\n0\tAGAIN\tfalse\n",
            "code\tname\tretriable\n1\tB\tfalse\n0\tNONE\tfalse\n",
            "code\tname\tretriable\n0\tNONE\tfalse\n1\tNONE\tfalse\n",
            "code\tname\tretriable\n1\tONE\tfalse\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
