//! Bytes from the hex text people paste, and lowercase hex out.
//!
//! [`decode`] takes the form from the first line that holds data:
//!
//! * **xxd**: `00000000: 0037 0002 0000 0007  .7......`: an offset and a colon, groups of
//!   hex digits separated by single spaces, then (after two spaces) the ASCII column, which
//!   is ignored.
//! * **Offset dump**: `0000  00 37 00 02 00 00 00 07   .7......`: an offset of four or more
//!   hex digits, then bytes as two-digit pairs separated by one or two spaces. The ASCII
//!   column starts after three or more spaces or a tab, or at the first word that is not a
//!   pair (`|.7..|` in `hexdump -C`). This is what `tshark -x`, Wireshark's "Copy as Hex
//!   Dump" and `hexdump -C` write.
//! * **Plain hex**: anything else. Hex digits, with whitespace and commas between them
//!   ignored; `#` starts a comment that runs to the end of the line; a word may start with
//!   `0x` (`0x0037`, `0x00, 0x37`), and then holds whole bytes.
//!
//! In both dump forms each line's offset must continue from the bytes before it, so a
//! missing, repeated or misread line is an error rather than bytes silently lost or gained.
//! A `*` line (`hexdump` and `xxd -a` squeeze repeated lines into one) repeats the line
//! before it up to the next offset. Blank lines and lines starting with `#` are skipped.
//!
//! ```
//! let plain = kafka_codec_hexdump::decode(b"00 37 # api key 55\n0x0002").unwrap();
//! let xxd = kafka_codec_hexdump::decode(b"00000000: 0037 0002  .7..\n").unwrap();
//! let tshark = kafka_codec_hexdump::decode(b"0000  00 37 00 02   .7..\n").unwrap();
//! assert_eq!(plain, [0x00, 0x37, 0x00, 0x02]);
//! assert_eq!(xxd, plain);
//! assert_eq!(tshark, plain);
//! assert_eq!(kafka_codec_hexdump::encode(&plain), "00370002");
//! ```

use std::fmt;

/// The most bytes that `*` lines may stand for in one input: the line count is a claim in a
/// few characters of text, so it must not reserve memory out of proportion to the input.
pub const MAX_REPEATED_BYTES: usize = 16 * 1024 * 1024;

/// Lowercase hex, no separators.
pub fn encode(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

/// A form of hex text [`decode`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Hex digits, comments and `0x` prefixes.
    Plain,
    /// `xxd`'s default output.
    Xxd,
    /// An offset, pairs of digits, an ASCII column: `tshark -x`, Wireshark, `hexdump -C`.
    OffsetDump,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Plain => "plain hex",
            Format::Xxd => "xxd dump",
            Format::OffsetDump => "hex dump",
        })
    }
}

/// A place in the text: 1-based line and column, and the 0-based byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// Line number, from 1.
    pub line: usize,
    /// Column (byte within the line), from 1.
    pub column: usize,
    /// Byte offset from the start of the text.
    pub offset: usize,
}

/// What is wrong with the text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A character that is not a hex digit where one was expected.
    InvalidCharacter(u8),
    /// An odd number of digits in all: the last byte has only its high half.
    HalfByte {
        /// Bytes decoded before the half byte.
        byte_offset: usize,
    },
    /// A `0x` word or a dump group whose digits do not make whole bytes.
    OddDigits,
    /// A line that does not have the shape of the dump that the first data line started.
    NotADumpLine(Format),
    /// A dump line whose offset does not continue from the bytes before it.
    OffsetGap {
        /// The offset the line should have.
        expected: u64,
        /// The offset it has.
        found: u64,
    },
    /// A dump line with more bytes than the first line: its ASCII column was probably read
    /// as bytes.
    LineTooLong {
        /// Bytes on the first line.
        first: usize,
        /// Bytes on this line.
        found: usize,
    },
    /// A `*` line that cannot be expanded: nothing before it, no offset after it, or a gap
    /// that is not a whole number of lines.
    BadRepeat,
    /// `*` lines standing for more than [`MAX_REPEATED_BYTES`].
    RepeatTooLarge(u64),
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::InvalidCharacter(c) => write!(
                f,
                "invalid character {:?} in hex input",
                c.escape_ascii().to_string()
            ),
            ErrorKind::HalfByte { byte_offset } => write!(
                f,
                "hex input ends with half a byte (odd number of digits) at byte offset {byte_offset}"
            ),
            ErrorKind::OddDigits => f.write_str("odd number of hex digits in one word"),
            ErrorKind::NotADumpLine(format) => {
                write!(f, "line does not continue the {format} begun above")
            }
            ErrorKind::OffsetGap { expected, found } => write!(
                f,
                "dump line starts at offset {found:#x}, but the bytes before it end at {expected:#x}"
            ),
            ErrorKind::LineTooLong { first, found } => write!(
                f,
                "dump line holds {found} bytes, more than the {first} of the first line"
            ),
            ErrorKind::BadRepeat => f.write_str(
                "`*` must stand between two dump lines, for a whole number of repeats of the first",
            ),
            ErrorKind::RepeatTooLarge(bytes) => write!(
                f,
                "`*` lines stand for {bytes} bytes, more than the {MAX_REPEATED_BYTES} this reader fills in"
            ),
        }
    }
}

/// Why hex text could not be read: what, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    at: Option<Position>,
}

impl Error {
    /// What is wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// Where, when it is one place in the text.
    pub fn position(&self) -> Option<Position> {
        self.at
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some(at) = self.at {
            write!(
                f,
                " at line {}, column {} (text offset {})",
                at.line, at.column, at.offset
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// One line of the text, without its line break (`\n` or `\r\n`).
#[derive(Clone, Copy)]
struct Line<'a> {
    text: &'a [u8],
    number: usize,
    start: usize,
}

impl Line<'_> {
    fn error(&self, kind: ErrorKind, column: usize) -> Error {
        Error {
            kind,
            at: Some(Position {
                line: self.number,
                column: column + 1,
                offset: self.start + column,
            }),
        }
    }

    /// Index of the first character that is not a space or tab.
    fn indent(&self) -> usize {
        self.text
            .iter()
            .take_while(|c| matches!(c, b' ' | b'\t'))
            .count()
    }

    /// Blank, or a `#` comment.
    fn holds_no_data(&self) -> bool {
        matches!(self.text.get(self.indent()), None | Some(b'#'))
    }
}

fn lines(text: &[u8]) -> impl Iterator<Item = Line<'_>> {
    let mut start = 0;
    text.split(|&c| c == b'\n')
        .enumerate()
        .map(move |(index, raw)| {
            let line = Line {
                text: raw.strip_suffix(b"\r").unwrap_or(raw),
                number: index + 1,
                start,
            };
            start += raw.len() + 1;
            line
        })
}

fn hex_digits(text: &[u8]) -> usize {
    text.iter().take_while(|c| c.is_ascii_hexdigit()).count()
}

/// The form of the text, from its first line that holds data.
pub fn detect(text: &[u8]) -> Format {
    let starts_dump =
        |line: &Line<'_>| !line.holds_no_data() && &line.text[line.indent()..] != b"*";
    let Some(line) = lines(text).find(starts_dump) else {
        return Format::Plain;
    };
    let text = &line.text[line.indent()..];
    let digits = hex_digits(text);
    if digits < 4 {
        return Format::Plain;
    }
    let rest = &text[digits..];
    if rest.first() == Some(&b':') {
        return Format::Xxd;
    }
    let gap = rest
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t'))
        .count();
    let first_word = &rest[gap..];
    let pair_follows =
        hex_digits(first_word) == 2 && matches!(first_word.get(2), None | Some(b' ' | b'\t'));
    if (gap >= 2 || rest[..gap].contains(&b'\t')) && pair_follows {
        Format::OffsetDump
    } else {
        Format::Plain
    }
}

/// Decodes hex text in any of the forms the crate documents.
pub fn decode(text: &[u8]) -> Result<Vec<u8>, Error> {
    match detect(text) {
        Format::Plain => decode_plain(text),
        format => Dump::new(format).decode(text),
    }
}

fn is_separator(c: u8) -> bool {
    c.is_ascii_whitespace() || c == b','
}

fn decode_plain(text: &[u8]) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut high: Option<u8> = None;
    for line in lines(text) {
        let bytes = line.text;
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i];
            if c == b'#' {
                break;
            }
            if is_separator(c) {
                i += 1;
                continue;
            }
            let word_start = i == 0 || is_separator(bytes[i - 1]);
            if word_start && c == b'0' && matches!(bytes.get(i + 1), Some(b'x' | b'X')) {
                let digits = &bytes[i + 2..];
                let len = hex_digits(digits);
                let end = i + 2 + len;
                if let Some(&c) = bytes.get(end).filter(|&&c| !is_separator(c) && c != b'#') {
                    return Err(line.error(ErrorKind::InvalidCharacter(c), end));
                }
                // A `0x` word is a number of whole bytes, so half a byte before it, or an
                // odd count inside it, has no one reading.
                if high.is_some() || len == 0 || len % 2 == 1 {
                    return Err(line.error(ErrorKind::OddDigits, i));
                }
                out.extend(hex::decode(&digits[..len]).expect("checked: even count of digits"));
                i = end;
                continue;
            }
            let Some(nibble) = (c as char).to_digit(16) else {
                return Err(line.error(ErrorKind::InvalidCharacter(c), i));
            };
            // `to_digit(16)` is below 16, so it fits a nibble.
            let nibble = nibble as u8;
            match high.take() {
                None => high = Some(nibble),
                Some(h) => out.push(h << 4 | nibble),
            }
            i += 1;
        }
    }
    if high.is_some() {
        return Err(Error {
            kind: ErrorKind::HalfByte {
                byte_offset: out.len(),
            },
            at: None,
        });
    }
    Ok(out)
}

/// The state of reading an xxd or offset dump.
struct Dump {
    format: Format,
    out: Vec<u8>,
    /// The offset of the first line: a dump may show a slice of something larger.
    base: Option<u64>,
    /// Bytes on the first line: every later line holds at most as many.
    first_len: Option<usize>,
    /// Where the last line's bytes sit in `out`, for `*`.
    previous: Option<std::ops::Range<usize>>,
    /// Bytes that `*` lines stood for so far.
    repeated: u64,
}

impl Dump {
    fn new(format: Format) -> Self {
        Dump {
            format,
            out: Vec::new(),
            base: None,
            first_len: None,
            previous: None,
            repeated: 0,
        }
    }

    fn decode(mut self, text: &[u8]) -> Result<Vec<u8>, Error> {
        let mut pending_repeat: Option<(usize, usize, usize)> = None;
        for line in lines(text) {
            if line.holds_no_data() {
                continue;
            }
            let indent = line.indent();
            if &line.text[indent..] == b"*" {
                if self.previous.is_none() || pending_repeat.is_some() {
                    return Err(line.error(ErrorKind::BadRepeat, indent));
                }
                pending_repeat = Some((line.number, line.start, indent));
                continue;
            }
            let (offset, data_start) = self.read_offset(&line, indent)?;
            let expected = self.base.unwrap_or(offset) + self.out.len() as u64;
            if pending_repeat.take().is_some() {
                self.fill_repeat(&line, indent, offset, expected)?;
            } else if offset != expected {
                return Err(line.error(
                    ErrorKind::OffsetGap {
                        expected,
                        found: offset,
                    },
                    indent,
                ));
            }
            self.base.get_or_insert(offset);
            let start = self.out.len();
            match self.format {
                Format::Xxd => self.read_xxd_groups(&line, data_start)?,
                _ => self.read_pairs(&line, data_start)?,
            }
            let len = self.out.len() - start;
            match self.first_len {
                None if len > 0 => self.first_len = Some(len),
                Some(first) if len > first => {
                    return Err(line.error(ErrorKind::LineTooLong { first, found: len }, indent))
                }
                _ => {}
            }
            self.previous = Some(start..self.out.len());
        }
        if let Some((number, start, indent)) = pending_repeat {
            let line = Line {
                text: b"",
                number,
                start,
            };
            return Err(line.error(ErrorKind::BadRepeat, indent));
        }
        Ok(self.out)
    }

    /// The line's offset and where its data starts.
    fn read_offset(&self, line: &Line<'_>, indent: usize) -> Result<(u64, usize), Error> {
        let text = line.text;
        let digits = hex_digits(&text[indent..]);
        let end = indent + digits;
        let shape_ok = (4..=16).contains(&digits)
            && match self.format {
                Format::Xxd => text.get(end) == Some(&b':'),
                _ => matches!(text.get(end), None | Some(b' ' | b'\t')),
            };
        if !shape_ok {
            return Err(line.error(ErrorKind::NotADumpLine(self.format), end));
        }
        let digits = std::str::from_utf8(&text[indent..end]).expect("hex digits are ASCII");
        let offset = u64::from_str_radix(digits, 16).expect("at most 16 hex digits fit a u64");
        let data_start = if self.format == Format::Xxd {
            end + 1
        } else {
            end
        };
        Ok((offset, data_start))
    }

    /// Expands a `*` line: the line before it, again and again up to `offset`.
    fn fill_repeat(
        &mut self,
        line: &Line<'_>,
        indent: usize,
        offset: u64,
        expected: u64,
    ) -> Result<(), Error> {
        let previous = self.previous.clone().expect("a `*` follows a dump line");
        let unit = previous.len() as u64;
        let Some(gap) = offset.checked_sub(expected) else {
            return Err(line.error(ErrorKind::BadRepeat, indent));
        };
        self.repeated = self.repeated.saturating_add(gap);
        if self.repeated > MAX_REPEATED_BYTES as u64 {
            return Err(line.error(ErrorKind::RepeatTooLarge(self.repeated), indent));
        }
        if unit == 0 || gap % unit != 0 {
            return Err(line.error(ErrorKind::BadRepeat, indent));
        }
        for _ in 0..gap / unit {
            self.out.extend_from_within(previous.clone());
        }
        Ok(())
    }

    /// xxd: after the colon, groups of digits separated by single spaces, up to two spaces
    /// (the ASCII column) or the end of the line.
    fn read_xxd_groups(&mut self, line: &Line<'_>, data_start: usize) -> Result<(), Error> {
        let text = line.text;
        let mut i = data_start;
        if text.get(i) == Some(&b' ') {
            i += 1;
        }
        let mut groups = 0;
        while i < text.len() && text[i] != b' ' {
            let len = hex_digits(&text[i..]);
            let end = i + len;
            match text.get(end) {
                None | Some(b' ') => {}
                Some(&c) => return Err(line.error(ErrorKind::InvalidCharacter(c), end)),
            }
            if len % 2 == 1 {
                return Err(line.error(ErrorKind::OddDigits, i));
            }
            self.out
                .extend(hex::decode(&text[i..end]).expect("checked: even count of digits"));
            groups += 1;
            // One space separates groups; two start the ASCII column.
            if text.get(end + 1) == Some(&b' ') {
                break;
            }
            i = end + 1;
        }
        if groups == 0 && text[i..].iter().any(|c| !c.is_ascii_whitespace()) {
            return Err(line.error(ErrorKind::NotADumpLine(self.format), i));
        }
        Ok(())
    }

    /// Offset dumps: two-digit pairs separated by one or two spaces, up to three spaces or a
    /// tab, or a word starting with `|` (the ASCII column), or the end of the line.
    fn read_pairs(&mut self, line: &Line<'_>, data_start: usize) -> Result<(), Error> {
        let text = line.text;
        let is_blank = |c: &u8| matches!(c, b' ' | b'\t');
        let mut i = data_start
            + text[data_start..]
                .iter()
                .take_while(|c| is_blank(c))
                .count();
        let mut pairs = 0;
        while i < text.len() {
            let word_len = text[i..].iter().take_while(|c| !is_blank(c)).count();
            let digits = hex_digits(&text[i..i + word_len]);
            if word_len == 2 && digits == 2 {
                self.out
                    .extend(hex::decode(&text[i..i + 2]).expect("checked: two hex digits"));
                pairs += 1;
            } else if text[i] == b'|' && pairs > 0 {
                break;
            } else if digits < word_len {
                let c = text[i + digits];
                return Err(line.error(ErrorKind::InvalidCharacter(c), i + digits));
            } else {
                return Err(line.error(ErrorKind::OddDigits, i));
            }
            let gap = &text[i + 2..];
            let gap_len = gap.iter().take_while(|c| is_blank(c)).count();
            if gap_len >= 3 || gap[..gap_len].contains(&b'\t') {
                break;
            }
            i += 2 + gap_len;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
