//! A strict JSON reader for the schema files, with no dependencies.
//!
//! Every dependent of kafka-codec compiles this generator before the crate itself, so what the
//! generator pulls in is paid in every build. serde_json with `preserve_order` brought ten
//! crates (serde, serde_core, serde_json, indexmap, hashbrown, memchr, itoa, zmij, foldhash,
//! equivalent) onto that path, 4-6 s of a `client` dependent's 24-28 s of build CPU (README,
//! "Build time"); and it still needed a hand-written visitor to refuse a key given twice. The schemas are a few hundred
//! small files of plain JSON (comments are stripped before this reader sees them), so a
//! recursive-descent reader of RFC 8259 is short and does exactly what the generator needs:
//! objects keep their keys in the order written, a key given twice is an error, trailing
//! tokens are an error, and every error names its line and column.

use std::fmt;

/// A parsed JSON value. Numbers keep the text they were written as: the schemas use them
/// only as integers or as text (Jackson's scalar coercion), never as floating-point values.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array(Vec<Value>),
    /// Members in the order written; keys are unique (the reader refuses duplicates).
    Object(Vec<(String, Value)>),
}

impl Value {
    pub fn as_object(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Object(members) => Some(members),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
}

/// Compact JSON text, for error messages that show what was found.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Number(text) => f.write_str(text),
            Value::String(s) => write_string(f, s),
            Value::Array(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            Value::Object(members) => {
                f.write_str("{")?;
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write_string(f, key)?;
                    write!(f, ":{value}")?;
                }
                f.write_str("}")
            }
        }
    }
}

fn write_string(f: &mut fmt::Formatter, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("\"")
}

/// Nesting deeper than this is refused rather than recursed into (the schemas nest about ten
/// levels; serde_json's default limit is the same 128).
const MAX_DEPTH: usize = 128;

/// Parses one JSON document; anything after it but whitespace is an error.
pub fn parse(text: &str) -> Result<Value, String> {
    let mut reader = Reader {
        text: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    let result = reader.skip_whitespace().and_then(|()| {
        let value = reader.value()?;
        reader.skip_whitespace()?;
        if reader.pos < reader.text.len() {
            return Err("trailing characters".to_owned());
        }
        Ok(value)
    });
    result.map_err(|message| {
        let (line, column) = reader.line_column();
        format!("{message} at line {line} column {column}")
    })
}

struct Reader<'a> {
    text: &'a [u8],
    pos: usize,
    depth: usize,
}

impl Reader<'_> {
    /// 1-based line and column (in bytes) of the current position.
    fn line_column(&self) -> (usize, usize) {
        let before = &self.text[..self.pos.min(self.text.len())];
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        let column = 1 + before.iter().rev().take_while(|&&b| b != b'\n').count();
        (line, column)
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) -> Result<(), String> {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
        Ok(())
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        match self.peek() {
            Some(b) if b == byte => {
                self.pos += 1;
                Ok(())
            }
            Some(b) => Err(format!(
                "expected `{}`, found `{}`",
                byte as char,
                b.escape_ascii()
            )),
            None => Err(format!("expected `{}`, found the end", byte as char)),
        }
    }

    fn keyword(&mut self, word: &str, value: Value) -> Result<Value, String> {
        if self.text[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err("expected a JSON value".to_owned())
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        match self.peek() {
            None => Err("expected a JSON value, found the end".to_owned()),
            Some(b'{') => self.nested(Reader::object),
            Some(b'[') => self.nested(Reader::array),
            Some(b'"') => self.string().map(Value::String),
            Some(b't') => self.keyword("true", Value::Bool(true)),
            Some(b'f') => self.keyword("false", Value::Bool(false)),
            Some(b'n') => self.keyword("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err("expected a JSON value".to_owned()),
        }
    }

    fn nested(&mut self, read: fn(&mut Self) -> Result<Value, String>) -> Result<Value, String> {
        if self.depth == MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH} levels"));
        }
        self.depth += 1;
        let value = read(self)?;
        self.depth -= 1;
        Ok(value)
    }

    fn object(&mut self) -> Result<Value, String> {
        self.expect(b'{')?;
        let mut members: Vec<(String, Value)> = Vec::new();
        self.skip_whitespace()?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_whitespace()?;
            let key_start = self.pos;
            if self.peek() != Some(b'"') {
                return Err("expected a string key".to_owned());
            }
            let key = self.string()?;
            if members.iter().any(|(k, _)| *k == key) {
                self.pos = key_start;
                return Err(format!("key `{key}` appears twice"));
            }
            self.skip_whitespace()?;
            self.expect(b':')?;
            self.skip_whitespace()?;
            let value = self.value()?;
            members.push((key, value));
            self.skip_whitespace()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err("expected `,` or `}` in an object".to_owned()),
            }
        }
    }

    fn array(&mut self) -> Result<Value, String> {
        self.expect(b'[')?;
        let mut items = Vec::new();
        self.skip_whitespace()?;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_whitespace()?;
            items.push(self.value()?);
            self.skip_whitespace()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err("expected `,` or `]` in an array".to_owned()),
            }
        }
    }

    /// A number as RFC 8259 writes it: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Result<Value, String> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err("invalid number".to_owned()),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err("invalid number".to_owned());
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err("invalid number".to_owned());
            }
            self.digits();
        }
        let text = std::str::from_utf8(&self.text[start..self.pos]).expect("ASCII digits");
        Ok(Value::Number(text.to_owned()))
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    /// A string literal, escapes resolved. The input is a `&str`, so the bytes between escapes
    /// are valid UTF-8 already.
    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out = String::new();
        loop {
            let run_start = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            out.push_str(std::str::from_utf8(&self.text[run_start..self.pos]).expect("UTF-8"));
            match self.peek() {
                None => return Err("unterminated string".to_owned()),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    out.push(self.escape()?);
                }
                Some(_) => return Err("control character in a string".to_owned()),
            }
        }
    }

    fn escape(&mut self) -> Result<char, String> {
        let Some(b) = self.peek() else {
            return Err("unterminated string".to_owned());
        };
        self.pos += 1;
        Ok(match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let first = self.hex4()?;
                if (0xD800..0xDC00).contains(&first) {
                    // A high surrogate must be followed by an escaped low one.
                    if !self.text[self.pos..].starts_with(b"\\u") {
                        return Err("unpaired surrogate in \\u escape".to_owned());
                    }
                    self.pos += 2;
                    let second = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&second) {
                        return Err("unpaired surrogate in \\u escape".to_owned());
                    }
                    let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                    char::from_u32(code).ok_or("invalid \\u escape")?
                } else {
                    char::from_u32(first).ok_or("unpaired surrogate in \\u escape")?
                }
            }
            _ => return Err("invalid escape".to_owned()),
        })
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .ok_or("invalid \\u escape")?;
        let mut code = 0;
        for &d in digits {
            let nibble = (d as char).to_digit(16).ok_or("invalid \\u escape")?;
            code = code * 16 + nibble;
        }
        self.pos += 4;
        Ok(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(members: &[(&str, Value)]) -> Value {
        Value::Object(
            members
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn reads_every_kind_of_value_in_order() {
        let value = parse(
            r#" {"b": [1, -2.5e3, true, false, null], "a": {"s": "x\"\\\/\n\u00e9\ud83d\ude00"}} "#,
        )
        .unwrap();
        let expected = object(&[
            (
                "b",
                Value::Array(vec![
                    Value::Number("1".into()),
                    Value::Number("-2.5e3".into()),
                    Value::Bool(true),
                    Value::Bool(false),
                    Value::Null,
                ]),
            ),
            ("a", object(&[("s", Value::String("x\"\\/\né😀".into()))])),
        ]);
        assert_eq!(value, expected);
        assert_eq!(
            value.to_string(),
            r#"{"b":[1,-2.5e3,true,false,null],"a":{"s":"x\"\\/\né😀"}}"#
        );
        assert_eq!(parse("[]").unwrap(), Value::Array(vec![]));
        assert_eq!(parse("{ }").unwrap(), object(&[]));
    }

    #[test]
    fn refuses_what_rfc_8259_refuses_with_a_place() {
        for (text, what) in [
            ("", "found the end"),
            ("{\"a\":1,}", "expected a string key"),
            ("[1,]", "expected a JSON value"),
            ("[1 2]", "expected `,` or `]`"),
            ("{\"a\" 1}", "expected `:`"),
            ("01", "trailing characters"),
            ("-", "invalid number"),
            ("1.", "invalid number"),
            ("1e", "invalid number"),
            ("\"a", "unterminated string"),
            ("\"a\tb\"", "control character"),
            ("\"\\x\"", "invalid escape"),
            ("\"\\u12\"", "invalid \\u escape"),
            ("\"\\ud800\"", "unpaired surrogate"),
            ("\"\\udc00\"", "unpaired surrogate"),
            ("tru", "expected a JSON value"),
            ("{} {}", "trailing characters"),
            ("'a'", "expected a JSON value"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(what), "{text:?}: {err}");
            assert!(err.contains(" at line 1 column "), "{text:?}: {err}");
        }
    }

    #[test]
    fn a_duplicate_key_is_refused_at_its_place() {
        let err = parse("{\"a\": 1,\n  \"a\": 2}").unwrap_err();
        assert_eq!(err, "key `a` appears twice at line 2 column 3");
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep).unwrap_err().contains("nested deeper"));
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(&ok).is_ok());
    }
}
