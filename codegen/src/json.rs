//! A strict reader for the JSON of schema files (RFC 8259).
//!
//! Objects keep their keys in the order written and refuse a key given twice; numbers keep
//! the text they were written with, which is what Kafka's generator sees when Jackson coerces
//! a number to a string (`"default": -1` is the text `-1`); nesting is bounded, so hostile
//! input cannot exhaust the stack.
//!
//! Here rather than `serde_json`: every crate that depends on `kafka-codec` compiles this
//! generator before `kafka-codec` itself can start, and serde with serde_json was the longest
//! part of that wait; what the generator needs from JSON fits in this file.

/// A JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// A number, as written.
    Number(String),
    String(String),
    Array(Vec<Value>),
    /// Keys in the order written; no key twice.
    Object(Vec<(String, Value)>),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// A short description of the value for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// Deepest nesting of arrays and objects accepted (Kafka's schemas nest a few levels).
const MAX_DEPTH: usize = 128;

/// Parses a whole document: one value, surrounded by nothing but whitespace.
pub fn parse(text: &str) -> Result<Value, String> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    let value = reader
        .value()
        .and_then(|value| {
            reader.skip_whitespace();
            match reader.peek() {
                None => Ok(value),
                Some(_) => Err("unexpected text after the document".into()),
            }
        })
        .map_err(|message| reader.located(&message))?;
    Ok(value)
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
}

impl Reader<'_> {
    /// `message` with the line and column of the current position.
    fn located(&self, message: &str) -> String {
        let before = &self.text[..self.pos.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |n| n + 1) + 1;
        format!("invalid JSON at line {line}, column {column}: {message}")
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!("expected `{}`", byte as char))
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        self.skip_whitespace();
        match self.peek() {
            None => Err("unexpected end of input".into()),
            Some(b'{') => self.nested(Self::object),
            Some(b'[') => self.nested(Self::array),
            Some(b'"') => self.string().map(Value::String),
            Some(b'-' | b'0'..=b'9') => self.number().map(Value::Number),
            Some(_) => {
                for (word, value) in [
                    ("true", Value::Bool(true)),
                    ("false", Value::Bool(false)),
                    ("null", Value::Null),
                ] {
                    if self.text[self.pos..].starts_with(word) {
                        self.pos += word.len();
                        return Ok(value);
                    }
                }
                Err("expected a value".into())
            }
        }
    }

    fn nested(&mut self, read: fn(&mut Self) -> Result<Value, String>) -> Result<Value, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH} levels"));
        }
        let value = read(self);
        self.depth -= 1;
        value
    }

    fn object(&mut self) -> Result<Value, String> {
        self.expect(b'{')?;
        let mut entries: Vec<(String, Value)> = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(entries));
        }
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'"') {
                return Err("expected a key in double quotes".into());
            }
            let key = self.string()?;
            if entries.iter().any(|(k, _)| *k == key) {
                return Err(format!("key `{key}` appears twice"));
            }
            self.skip_whitespace();
            self.expect(b':')?;
            let value = self.value()?;
            entries.push((key, value));
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(entries));
                }
                _ => return Err("expected `,` or `}`".into()),
            }
        }
    }

    fn array(&mut self) -> Result<Value, String> {
        self.expect(b'[')?;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value()?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err("expected `,` or `]`".into()),
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out = String::new();
        loop {
            // Copy the run of plain characters up to the next quote, escape or control byte.
            let run = self.bytes[self.pos..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .ok_or("unterminated string")?;
            out.push_str(&self.text[self.pos..self.pos + run]);
            self.pos += run;
            match self.bytes[self.pos] {
                b'"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => {
                    self.pos += 1;
                    let escaped = self.peek().ok_or("unterminated string")?;
                    self.pos += 1;
                    out.push(match escaped {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err("invalid escape in a string".into()),
                    });
                }
                _ => return Err("control character in a string".into()),
            }
        }
    }

    /// The character of `\uXXXX` (the `\u` read), joining a UTF-16 surrogate pair.
    fn unicode_escape(&mut self) -> Result<char, String> {
        let high = self.hex4()?;
        let code = if (0xd800..0xdc00).contains(&high) {
            if !self.text[self.pos..].starts_with("\\u") {
                return Err("unpaired surrogate in a string".into());
            }
            self.pos += 2;
            let low = self.hex4()?;
            if !(0xdc00..0xe000).contains(&low) {
                return Err("unpaired surrogate in a string".into());
            }
            0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)
        } else {
            high
        };
        char::from_u32(code).ok_or_else(|| "unpaired surrogate in a string".into())
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .filter(|digits| digits.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or("`\\u` needs four hex digits")?;
        self.pos += 4;
        Ok(u32::from_str_radix(digits, 16).expect("four hex digits"))
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, as written.
    fn number(&mut self) -> Result<String, String> {
        let start = self.pos;
        let digits = |reader: &mut Self| {
            let from = reader.pos;
            while matches!(reader.peek(), Some(b'0'..=b'9')) {
                reader.pos += 1;
            }
            reader.pos - from
        };
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err("invalid number".into()),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if digits(self) == 0 {
                return Err("invalid number".into());
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err("invalid number".into());
            }
        }
        Ok(self.text[start..self.pos].to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_kind_of_value() {
        let value = parse(
            " {\"a\": [1, -0.5e+3, true, false, null], \"b\": {}, \"c\": \"x\\\"\\\\\\/\\n\\u00e9\\ud83e\\udd80\"} ",
        )
        .unwrap();
        assert_eq!(
            value,
            Value::Object(vec![
                (
                    "a".into(),
                    Value::Array(vec![
                        Value::Number("1".into()),
                        Value::Number("-0.5e+3".into()),
                        Value::Bool(true),
                        Value::Bool(false),
                        Value::Null,
                    ])
                ),
                ("b".into(), Value::Object(vec![])),
                ("c".into(), Value::String("x\"\\/\né🦀".into())),
            ])
        );
        assert_eq!(
            parse("9223372036854775807").unwrap(),
            Value::Number("9223372036854775807".into()),
            "numbers keep their text"
        );
    }

    #[test]
    fn refuses_what_is_not_json() {
        for (text, why) in [
            ("", "end of input"),
            ("{\"a\": 1,}", "key in double quotes"),
            ("[1,]", "expected a value"),
            ("{\"a\": 1, \"a\": 2}", "appears twice"),
            ("{\"a\" 1}", "expected `:`"),
            ("01", "after the document"),
            ("1.", "invalid number"),
            ("-", "invalid number"),
            ("1e", "invalid number"),
            ("\"a\nb\"", "control character"),
            ("\"\\x\"", "invalid escape"),
            ("\"\\ud800\"", "unpaired surrogate"),
            ("\"\\u12\"", "four hex digits"),
            ("\"abc", "unterminated"),
            ("tru", "expected a value"),
            ("{} {}", "after the document"),
            ("{'a': 1}", "key in double quotes"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(why), "{text:?}: {err}");
        }
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep).unwrap_err().contains("nested deeper"));
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(&ok).is_ok());
    }

    #[test]
    fn errors_say_where() {
        let err = parse("{\n  \"a\": tru\n}").unwrap_err();
        assert!(
            err.starts_with("invalid JSON at line 2, column 8:"),
            "{err}"
        );
    }
}
