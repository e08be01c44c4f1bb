//! Schema text → raw spec structs.
//!
//! Kafka reads schemas with Jackson configured to allow comments, accept a single value where a
//! list is expected, coerce scalars (`"default": -1` is the text `-1`, `"ignorable": "true"` is
//! `true`), treat JSON `null` as "absent" and refuse unknown keys and trailing tokens. This
//! module reproduces those rules so that any file Kafka's generator accepts is accepted here.

use crate::json::{self, Value};

/// A message file as written, before validation.
#[derive(Debug, Clone)]
pub struct RawMessage {
    pub name: String,
    pub kind: String,
    pub api_key: Option<i64>,
    pub valid_versions: Option<String>,
    pub deprecated_versions: Option<String>,
    pub flexible_versions: Option<String>,
    /// `headerVersions`: (range, header version) as written, in the file's order.
    pub header_versions: Option<Vec<(String, String)>>,
    pub fields: Vec<RawField>,
    pub common_structs: Vec<RawStruct>,
    pub listeners: Vec<String>,
    pub latest_version_unstable: bool,
}

/// A named struct in `commonStructs`.
#[derive(Debug, Clone)]
pub struct RawStruct {
    pub name: String,
    pub versions: Option<String>,
    pub fields: Vec<RawField>,
}

/// A field as written.
#[derive(Debug, Clone)]
pub struct RawField {
    pub name: String,
    pub ty: String,
    pub versions: Option<String>,
    pub fields: Vec<RawField>,
    pub nullable_versions: Option<String>,
    pub default: Option<String>,
    pub ignorable: bool,
    pub map_key: bool,
    pub entity_type: Option<String>,
    pub about: Option<String>,
    pub tag: Option<i64>,
    pub tagged_versions: Option<String>,
    pub flexible_versions: Option<String>,
    pub zero_copy: bool,
}

/// Removes `//` and `/* */` comments outside string literals, keeping line structure.
pub fn strip_comments(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            if c == b'\\' && i + 1 < bytes.len() {
                out.push_str(&text[i..i + 2]);
                i += 2;
                continue;
            }
            if c == b'"' {
                in_string = false;
            }
        } else if c == b'"' {
            in_string = true;
        } else if text[i..].starts_with("//") {
            i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
            continue;
        } else if text[i..].starts_with("/*") {
            let end = text[i + 2..].find("*/").ok_or("unterminated /* comment")?;
            out.push(' ');
            i += 2 + end + 2;
            continue;
        }
        let len = text[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&text[i..i + len]);
        i += len;
    }
    Ok(out)
}

/// Parses one schema file.
pub fn parse_schema(text: &str) -> Result<RawMessage, String> {
    let stripped = strip_comments(text)?;
    // Trailing tokens are refused, like Jackson's FAIL_ON_TRAILING_TOKENS; so is a key given
    // twice (Jackson would keep the last value silently; a schema that says two things about
    // one key is a mistake).
    let value = json::parse(&stripped).map_err(|e| format!("invalid JSON: {e}"))?;
    let object = value.as_object().ok_or("a schema must be a JSON object")?;
    let mut keys = Keys::new(object, "message");
    let message = RawMessage {
        name: keys.required_string("name")?,
        kind: keys.required_string("type")?,
        api_key: keys.integer("apiKey")?,
        valid_versions: keys.string("validVersions")?,
        deprecated_versions: keys.string("deprecatedVersions")?,
        flexible_versions: keys.string("flexibleVersions")?,
        header_versions: keys.string_map("headerVersions")?,
        fields: keys.list("fields", parse_field)?,
        common_structs: keys.list("commonStructs", parse_struct)?,
        listeners: keys.list("listeners", |v| {
            scalar_text(v).ok_or_else(|| "listener must be a string".to_owned())
        })?,
        latest_version_unstable: keys.boolean("latestVersionUnstable")?,
    };
    keys.finish()?;
    Ok(message)
}

fn parse_struct(value: &Value) -> Result<RawStruct, String> {
    let object = value
        .as_object()
        .ok_or("a common struct must be an object")?;
    let mut keys = Keys::new(object, "struct");
    let name = keys.required_string("name")?;
    let parsed = RawStruct {
        versions: keys.string("versions")?,
        fields: keys.list("fields", parse_field)?,
        name: name.clone(),
    };
    // Accepted by Kafka's constructor, but without effect.
    keys.string("deprecatedVersions")?;
    keys.finish().map_err(|e| format!("struct {name}: {e}"))?;
    Ok(parsed)
}

fn parse_field(value: &Value) -> Result<RawField, String> {
    let object = value.as_object().ok_or("a field must be an object")?;
    let mut keys = Keys::new(object, "field");
    let name = keys.required_string("name")?;
    let field = (|| {
        Ok::<_, String>(RawField {
            name: name.clone(),
            ty: keys.required_string("type")?,
            versions: keys.string("versions")?,
            fields: keys.list("fields", parse_field)?,
            nullable_versions: keys.string("nullableVersions")?,
            default: keys.string("default")?,
            ignorable: keys.boolean("ignorable")?,
            map_key: keys.boolean("mapKey")?,
            entity_type: keys.string("entityType")?,
            about: keys.string("about")?,
            tag: keys.integer("tag")?,
            tagged_versions: keys.string("taggedVersions")?,
            flexible_versions: keys.string("flexibleVersions")?,
            zero_copy: keys.boolean("zeroCopy")?,
        })
    })()
    .map_err(|e| format!("field {name}: {e}"))?;
    keys.finish().map_err(|e| format!("field {name}: {e}"))?;
    Ok(field)
}

/// Text of a scalar, with Jackson's coercion of numbers and booleans to strings.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.clone()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Reads keys from an object and remembers which were used, to refuse unknown ones.
struct Keys<'a> {
    object: &'a [(String, Value)],
    used: Vec<&'static str>,
    what: &'static str,
}

impl<'a> Keys<'a> {
    fn new(object: &'a [(String, Value)], what: &'static str) -> Self {
        Keys {
            object,
            used: Vec::new(),
            what,
        }
    }

    fn get(&mut self, key: &'static str) -> Option<&'a Value> {
        self.used.push(key);
        self.object
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
            .filter(|v| !v.is_null())
    }

    fn string(&mut self, key: &'static str) -> Result<Option<String>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => scalar_text(v)
                .map(Some)
                .ok_or_else(|| format!("`{key}` must be a string")),
        }
    }

    fn required_string(&mut self, key: &'static str) -> Result<String, String> {
        self.string(key)?
            .ok_or_else(|| format!("{} is missing `{key}`", self.what))
    }

    fn boolean(&mut self, key: &'static str) -> Result<bool, String> {
        match self.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(false),
            Some(other) => Err(format!("`{key}` must be a boolean, found {other}")),
        }
    }

    fn integer(&mut self, key: &'static str) -> Result<Option<i64>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => n
                .parse()
                .map(Some)
                .map_err(|_| format!("`{key}` must be an integer")),
            Some(Value::String(s)) => s
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| format!("`{key}` must be an integer")),
            Some(other) => Err(format!("`{key}` must be an integer, found {other}")),
        }
    }

    /// An object of strings (Jackson's `Map<String, String>`: scalar values coerced to text).
    fn string_map(&mut self, key: &'static str) -> Result<Option<Vec<(String, String)>>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Object(members)) => members
                .iter()
                .map(|(k, v)| {
                    scalar_text(v)
                        .map(|text| (k.clone(), text))
                        .ok_or_else(|| format!("`{key}`: the value of `{k}` must be a string"))
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(format!(
                "`{key}` must be an object of version ranges, found {other}"
            )),
        }
    }

    fn list<T>(
        &mut self,
        key: &'static str,
        parse: impl Fn(&Value) -> Result<T, String>,
    ) -> Result<Vec<T>, String> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items.iter().map(&parse).collect(),
            // Jackson's ACCEPT_SINGLE_VALUE_AS_ARRAY.
            Some(single) => Ok(vec![parse(single)?]),
        }
    }

    fn finish(self) -> Result<(), String> {
        match self
            .object
            .iter()
            .map(|(k, _)| k)
            .find(|k| !self.used.contains(&k.as_str()))
        {
            Some(unknown) => Err(format!("unknown key `{unknown}` in {}", self.what)),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_inside_strings_survive() {
        let text = "// header\n{ \"name\": \"a//b\", /* c */ \"x\": \"/*y*/\" }";
        assert_eq!(
            strip_comments(text).unwrap(),
            "\n{ \"name\": \"a//b\",   \"x\": \"/*y*/\" }"
        );
    }

    #[test]
    fn coercions_and_unknown_keys() {
        let message = parse_schema(
            r#"{"name":"M","type":"data","validVersions":0,"flexibleVersions":"none",
               "fields":{"name":"F","type":"int8","versions":"0+","default":-1,"ignorable":"true"}}"#,
        )
        .unwrap();
        assert_eq!(message.valid_versions.as_deref(), Some("0"));
        assert_eq!(message.fields[0].default.as_deref(), Some("-1"));
        assert!(message.fields[0].ignorable);
        let err = parse_schema(r#"{"name":"M","type":"data","bogus":1}"#).unwrap_err();
        assert!(err.contains("bogus"), "{err}");
        assert!(parse_schema(r#"{"name":"M","type":"data"} {}"#).is_err());
    }

    #[test]
    fn a_key_given_twice_is_refused_with_its_place() {
        let text = "{\"name\":\"M\",\"type\":\"data\",\n \"fields\":[{\"name\":\"F\",\"type\":\"int8\",\n  \"type\":\"int16\",\"versions\":\"0+\"}]}";
        let err = parse_schema(text).unwrap_err();
        assert!(err.contains("`type` appears twice"), "{err}");
        assert!(err.contains("line 3"), "{err}");
        let err = parse_schema(r#"{"name":"M","name":"N","type":"data"}"#).unwrap_err();
        assert!(err.contains("`name` appears twice"), "{err}");
    }
}
