//! The typed, validated schema model the emitter works from.

use crate::parse::{RawField, RawMessage, RawStruct};

/// An inclusive version range; empty when `min > max`. `max == i16::MAX` is "open-ended".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Versions {
    pub min: i16,
    pub max: i16,
}

impl Versions {
    pub const NONE: Versions = Versions { min: 1, max: 0 };
    pub const ALL: Versions = Versions {
        min: 0,
        max: i16::MAX,
    };

    /// Parses `none`, `N`, `A-B` or `N+`.
    pub fn parse(text: &str) -> Result<Versions, String> {
        let text = text.trim();
        let number = |s: &str| {
            s.trim()
                .parse::<i16>()
                .ok()
                .filter(|n| *n >= 0)
                .ok_or_else(|| format!("invalid version `{s}` in range `{text}`"))
        };
        if text == "none" {
            Ok(Versions::NONE)
        } else if let Some(start) = text.strip_suffix('+') {
            Ok(Versions {
                min: number(start)?,
                max: i16::MAX,
            })
        } else if let Some((a, b)) = text.split_once('-') {
            let range = Versions {
                min: number(a)?,
                max: number(b)?,
            };
            if range.is_empty() {
                return Err(format!("version range `{text}` is empty"));
            }
            Ok(range)
        } else {
            let n = number(text)?;
            Ok(Versions { min: n, max: n })
        }
    }

    pub fn is_empty(&self) -> bool {
        self.min > self.max
    }

    pub fn is_open_ended(&self) -> bool {
        !self.is_empty() && self.max == i16::MAX
    }

    pub fn contains(&self, version: i16) -> bool {
        self.min <= version && version <= self.max
    }

    pub fn contains_range(&self, other: &Versions) -> bool {
        other.is_empty() || (self.min <= other.min && other.max <= self.max)
    }

    pub fn intersect(&self, other: &Versions) -> Versions {
        let range = Versions {
            min: self.min.max(other.min),
            max: self.max.min(other.max),
        };
        if range.is_empty() {
            Versions::NONE
        } else {
            range
        }
    }

    /// `self` minus an open-ended range `tail` (`N+`), which leaves at most one range.
    pub fn before(&self, tail: &Versions) -> Versions {
        if tail.is_empty() {
            return *self;
        }
        self.intersect(&Versions {
            min: 0,
            max: tail.min - 1,
        })
    }
}

impl std::fmt::Display for Versions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_empty() {
            f.write_str("none")
        } else if self.max == i16::MAX {
            write!(f, "{}+", self.min)
        } else if self.min == self.max {
            write!(f, "{}", self.min)
        } else {
            write!(f, "{}-{}", self.min, self.max)
        }
    }
}

/// A primitive type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primitive {
    Bool,
    Int8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Float64,
    String,
    Bytes,
    Uuid,
    Records,
}

impl Primitive {
    pub fn parse(name: &str) -> Option<Primitive> {
        Some(match name {
            "bool" => Primitive::Bool,
            "int8" => Primitive::Int8,
            "int16" => Primitive::Int16,
            "uint16" => Primitive::Uint16,
            "int32" => Primitive::Int32,
            "uint32" => Primitive::Uint32,
            "int64" => Primitive::Int64,
            "float64" => Primitive::Float64,
            "string" => Primitive::String,
            "bytes" => Primitive::Bytes,
            "uuid" => Primitive::Uuid,
            "records" => Primitive::Records,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Primitive::Bool => "bool",
            Primitive::Int8 => "int8",
            Primitive::Int16 => "int16",
            Primitive::Uint16 => "uint16",
            Primitive::Int32 => "int32",
            Primitive::Uint32 => "uint32",
            Primitive::Int64 => "int64",
            Primitive::Float64 => "float64",
            Primitive::String => "string",
            Primitive::Bytes => "bytes",
            Primitive::Uuid => "uuid",
            Primitive::Records => "records",
        }
    }

    /// Bytes on the wire for fixed-width types.
    pub fn fixed_width(self) -> Option<usize> {
        Some(match self {
            Primitive::Bool | Primitive::Int8 => 1,
            Primitive::Int16 | Primitive::Uint16 => 2,
            Primitive::Int32 | Primitive::Uint32 => 4,
            Primitive::Int64 | Primitive::Float64 => 8,
            Primitive::Uuid => 16,
            _ => return None,
        })
    }
}

/// A field's type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldType {
    Primitive(Primitive),
    Struct(String),
    Array(Box<FieldType>),
}

impl FieldType {
    pub fn parse(text: &str) -> Result<FieldType, String> {
        let text = text.trim();
        if let Some(element) = text.strip_prefix("[]") {
            let element = FieldType::parse(element)?;
            if matches!(element, FieldType::Array(_)) {
                return Err(format!("arrays of arrays are not allowed: `{text}`"));
            }
            return Ok(FieldType::Array(Box::new(element)));
        }
        if let Some(primitive) = Primitive::parse(text) {
            return Ok(FieldType::Primitive(primitive));
        }
        let mut chars = text.chars();
        match chars.next() {
            Some(first)
                if first.is_ascii_uppercase() && chars.all(|c| c.is_ascii_alphanumeric()) =>
            {
                Ok(FieldType::Struct(text.to_owned()))
            }
            _ => Err(format!("unknown type `{text}`")),
        }
    }

    pub fn is_array(&self) -> bool {
        matches!(self, FieldType::Array(_))
    }

    pub fn struct_name(&self) -> Option<&str> {
        match self {
            FieldType::Struct(name) => Some(name),
            FieldType::Array(element) => element.struct_name(),
            FieldType::Primitive(_) => None,
        }
    }

    pub fn primitive(&self) -> Option<Primitive> {
        match self {
            FieldType::Primitive(p) => Some(*p),
            _ => None,
        }
    }

    /// Types that may be null: strings, bytes, records, arrays and structs.
    pub fn can_be_null(&self) -> bool {
        match self {
            FieldType::Primitive(p) => {
                matches!(p, Primitive::String | Primitive::Bytes | Primitive::Records)
            }
            FieldType::Struct(_) | FieldType::Array(_) => true,
        }
    }
}

impl std::fmt::Display for FieldType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FieldType::Primitive(p) => f.write_str(p.name()),
            FieldType::Struct(name) => f.write_str(name),
            FieldType::Array(element) => write!(f, "[]{element}"),
        }
    }
}

/// A field's default value, parsed for its type.
#[derive(Debug, Clone, PartialEq)]
pub enum DefaultValue {
    /// The type's own default (0, false, "", empty, zero UUID, empty struct).
    Implicit,
    /// `"null"`.
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    String(String),
    Uuid([u8; 16]),
}

/// One field of a struct.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: String,
    pub ty: FieldType,
    pub versions: Versions,
    pub nullable_versions: Versions,
    pub default: DefaultValue,
    pub ignorable: bool,
    pub map_key: bool,
    pub entity_type: Option<String>,
    pub about: Option<String>,
    pub tag: Option<u32>,
    pub tagged_versions: Versions,
    /// Per-field override of the message's flexible versions (string and bytes only).
    pub flexible_versions: Option<Versions>,
    pub zero_copy: bool,
}

impl Field {
    /// Nullable in at least one version: the Rust type is an `Option`.
    pub fn is_optional(&self) -> bool {
        !self.nullable_versions.intersect(&self.versions).is_empty()
    }
}

/// A struct: the message itself, a nested struct or a common struct.
#[derive(Debug, Clone)]
pub struct Struct {
    pub name: String,
    pub versions: Versions,
    pub fields: Vec<Field>,
    /// The number of tags the struct knows; its tags are exactly `0..known_tags`.
    pub known_tags: u32,
}

/// What the file describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    Request,
    Response,
    Header,
    Data,
    Metadata,
}

/// One schema file.
#[derive(Debug, Clone)]
pub struct Message {
    pub name: String,
    pub kind: MessageKind,
    pub api_key: Option<i16>,
    pub valid_versions: Versions,
    pub deprecated_versions: Versions,
    pub flexible_versions: Versions,
    /// The schema's own `headerVersions`, checked; `None` where it has none (the header
    /// versions then follow from the flexible versions, see [`crate::header_versions`]).
    pub header_versions: Option<crate::header_versions::HeaderTable>,
    pub listeners: Vec<String>,
    pub latest_version_unstable: bool,
    /// The top-level struct (named after the message).
    pub root: Struct,
    /// Every other struct of the file, nested ones in definition order, then common ones.
    pub structs: Vec<Struct>,
}

impl Message {
    /// Retired APIs are kept in the schema set with `validVersions: none`; no code is
    /// generated for them.
    pub fn is_retired(&self) -> bool {
        self.valid_versions.is_empty()
    }

    /// The first flexible version, if any.
    pub fn first_flexible(&self) -> Option<i16> {
        (!self.flexible_versions.is_empty()).then_some(self.flexible_versions.min)
    }

    pub fn struct_by_name(&self, name: &str) -> Option<&Struct> {
        self.structs.iter().find(|s| s.name == name)
    }

    pub fn from_raw(raw: RawMessage) -> Result<Message, String> {
        let kind = match raw.kind.as_str() {
            "request" => MessageKind::Request,
            "response" => MessageKind::Response,
            "header" => MessageKind::Header,
            "data" => MessageKind::Data,
            // Newer Kafka also has coordinator record types; they read like data.
            "metadata" | "coordinator-key" | "coordinator-value" => MessageKind::Metadata,
            other => return Err(format!("unknown message type `{other}`")),
        };
        let valid_versions = Versions::parse(
            raw.valid_versions
                .as_deref()
                .ok_or("`validVersions` is required")?,
        )?;
        let retired = valid_versions.is_empty();
        if valid_versions.is_open_ended() {
            return Err("`validVersions` must have an upper bound".into());
        }
        let flexible_versions = match raw.flexible_versions.as_deref() {
            Some(text) => Versions::parse(text)?,
            None if retired => Versions::NONE,
            None => return Err("`flexibleVersions` is required".into()),
        };
        if !flexible_versions.is_empty() && !flexible_versions.is_open_ended() {
            return Err("`flexibleVersions` must be `none` or open-ended (`N+`)".into());
        }
        if !raw.listeners.is_empty() && kind != MessageKind::Request {
            return Err("`listeners` is only allowed on requests".into());
        }
        if raw.latest_version_unstable && kind != MessageKind::Request {
            return Err("`latestVersionUnstable` is only allowed on requests".into());
        }
        for listener in &raw.listeners {
            if !matches!(listener.as_str(), "zkBroker" | "broker" | "controller") {
                return Err(format!("unknown listener `{listener}`"));
            }
        }
        let api_key = raw
            .api_key
            .map(|k| i16::try_from(k).map_err(|_| format!("apiKey {k} out of range")))
            .transpose()?;
        if matches!(kind, MessageKind::Request | MessageKind::Response) && api_key.is_none() {
            return Err("requests and responses need an `apiKey`".into());
        }

        let header_versions = raw
            .header_versions
            .as_deref()
            .map(|map| crate::header_versions::parse(&raw.name, kind, api_key, valid_versions, map))
            .transpose()?;

        let mut builder = StructBuilder {
            structs: Vec::new(),
            common_names: raw.common_structs.iter().map(|s| s.name.clone()).collect(),
        };
        let root = builder.build_struct(&raw.name, Versions::ALL, &raw.fields)?;
        for common in &raw.common_structs {
            builder.add_common(common)?;
        }
        let message = Message {
            name: raw.name,
            kind,
            api_key,
            valid_versions,
            deprecated_versions: raw
                .deprecated_versions
                .as_deref()
                .map(Versions::parse)
                .transpose()?
                .unwrap_or(Versions::NONE),
            flexible_versions,
            header_versions,
            listeners: raw.listeners,
            latest_version_unstable: raw.latest_version_unstable,
            root,
            structs: builder.structs,
        };
        Ok(message)
    }
}

struct StructBuilder {
    structs: Vec<Struct>,
    common_names: Vec<String>,
}

impl StructBuilder {
    fn add_common(&mut self, raw: &RawStruct) -> Result<(), String> {
        let versions = Versions::parse(
            raw.versions
                .as_deref()
                .ok_or_else(|| format!("common struct {} needs `versions`", raw.name))?,
        )?;
        if !raw.name.starts_with(|c: char| c.is_ascii_uppercase()) {
            return Err(format!("struct name `{}` must start upper-case", raw.name));
        }
        let built = self.build_struct(&raw.name, versions, &raw.fields)?;
        self.push(built)
    }

    fn push(&mut self, built: Struct) -> Result<(), String> {
        if self.structs.iter().any(|s| s.name == built.name) {
            return Err(format!("struct `{}` is defined twice", built.name));
        }
        self.structs.push(built);
        Ok(())
    }

    fn build_struct(
        &mut self,
        name: &str,
        versions: Versions,
        raw_fields: &[RawField],
    ) -> Result<Struct, String> {
        let mut fields = Vec::with_capacity(raw_fields.len());
        for raw in raw_fields {
            let field = build_field(raw).map_err(|e| format!("field {}: {e}", raw.name))?;
            if let Some(struct_name) = field.ty.struct_name() {
                let is_common = self.common_names.iter().any(|n| n == struct_name);
                if !raw.fields.is_empty() {
                    if is_common {
                        return Err(format!(
                            "field {} redefines common struct {struct_name}",
                            raw.name
                        ));
                    }
                    let nested = self.build_struct(struct_name, field.versions, &raw.fields)?;
                    self.push(nested)?;
                } else if !is_common {
                    return Err(format!(
                        "field {} refers to struct {struct_name}, which is not defined",
                        raw.name
                    ));
                }
            } else if !raw.fields.is_empty() {
                return Err(format!(
                    "field {} of type {} cannot have fields",
                    raw.name, field.ty
                ));
            }
            fields.push(field);
        }
        let known_tags = fields.iter().filter(|f| f.tag.is_some()).count() as u32;
        Ok(Struct {
            name: name.to_owned(),
            versions,
            fields,
            known_tags,
        })
    }
}

fn build_field(raw: &RawField) -> Result<Field, String> {
    let ty = FieldType::parse(&raw.ty)?;
    let tagged_versions = raw
        .tagged_versions
        .as_deref()
        .map(Versions::parse)
        .transpose()?
        .unwrap_or(Versions::NONE);
    let versions = match raw.versions.as_deref() {
        Some(text) if !text.trim().is_empty() => Versions::parse(text)?,
        // A tagged field may leave `versions` out; it then means `taggedVersions`.
        _ if !tagged_versions.is_empty() => tagged_versions,
        _ => return Err("`versions` is required".into()),
    };
    let nullable_versions = raw
        .nullable_versions
        .as_deref()
        .map(Versions::parse)
        .transpose()?
        .unwrap_or(Versions::NONE);
    let flexible_versions = raw
        .flexible_versions
        .as_deref()
        .map(Versions::parse)
        .transpose()?;
    let tag = raw
        .tag
        .map(|t| u32::try_from(t).map_err(|_| format!("tag {t} must be non-negative")))
        .transpose()?;
    let mut field = Field {
        name: raw.name.clone(),
        ty,
        versions,
        nullable_versions,
        default: DefaultValue::Implicit,
        ignorable: raw.ignorable,
        map_key: raw.map_key,
        entity_type: raw.entity_type.clone(),
        about: raw.about.clone(),
        tag,
        tagged_versions,
        flexible_versions,
        zero_copy: raw.zero_copy,
    };
    field.default = parse_default(&field, raw.default.as_deref())?;
    Ok(field)
}

/// Parses a field's `default` text for its type.
pub fn parse_default(field: &Field, text: Option<&str>) -> Result<DefaultValue, String> {
    let Some(text) = text.filter(|t| !t.is_empty()) else {
        return Ok(DefaultValue::Implicit);
    };
    if text == "null" {
        if !field.ty.can_be_null() || !field.nullable_versions.contains_range(&field.versions) {
            return Err("a null default needs the field to be nullable in all its versions".into());
        }
        return Ok(DefaultValue::Null);
    }
    let ty = match &field.ty {
        FieldType::Primitive(p) => *p,
        FieldType::Struct(_) | FieldType::Array(_) => {
            return Err(format!(
                "a {} field may only default to empty or null",
                field.ty
            ));
        }
    };
    let integer = |min: i128, max: i128| -> Result<DefaultValue, String> {
        let value = if let Some(hex) = text.strip_prefix("0x") {
            i128::from_str_radix(hex, 16).ok()
        } else if text.len() > 1 && text.trim_start_matches('-').starts_with('0') {
            // Java would paste this into source as an octal literal; refuse it.
            None
        } else {
            text.parse::<i128>().ok()
        };
        match value {
            Some(v) if (min..=max).contains(&v) => Ok(DefaultValue::Int(v)),
            _ => Err(format!("invalid {} default `{text}`", ty.name())),
        }
    };
    match ty {
        Primitive::Bool => match text.to_ascii_lowercase().as_str() {
            "true" => Ok(DefaultValue::Bool(true)),
            "false" => Ok(DefaultValue::Bool(false)),
            _ => Err(format!("invalid bool default `{text}`")),
        },
        Primitive::Int8 => integer(i8::MIN.into(), i8::MAX.into()),
        Primitive::Int16 => integer(i16::MIN.into(), i16::MAX.into()),
        Primitive::Uint16 => integer(0, u16::MAX.into()),
        Primitive::Int32 => integer(i32::MIN.into(), i32::MAX.into()),
        Primitive::Uint32 => integer(0, u32::MAX.into()),
        Primitive::Int64 => integer(i64::MIN.into(), i64::MAX.into()),
        Primitive::Float64 => text
            .parse::<f64>()
            .map(DefaultValue::Float)
            .map_err(|_| format!("invalid float64 default `{text}`")),
        Primitive::String => Ok(DefaultValue::String(text.to_owned())),
        Primitive::Uuid => decode_kafka_uuid(text)
            .map(DefaultValue::Uuid)
            .ok_or_else(|| format!("invalid uuid default `{text}`")),
        Primitive::Bytes | Primitive::Records => Err(format!(
            "a {} field may only default to empty or null",
            ty.name()
        )),
    }
}

fn decode_kafka_uuid(text: &str) -> Option<[u8; 16]> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for &c in text.trim_end_matches('=').as_bytes() {
        acc = (acc << 6) | ALPHABET.iter().position(|&a| a == c)? as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out.try_into().ok()
}

/// Every schema of the set.
#[derive(Debug, Clone)]
pub struct SchemaSet {
    pub messages: Vec<Message>,
    /// Which Kafka release speaks which version (empty without `releases.tsv`).
    pub releases: crate::releases::Releases,
}

impl SchemaSet {
    /// Messages that get code (retired APIs are skipped).
    pub fn live(&self) -> impl Iterator<Item = &Message> {
        self.messages.iter().filter(|m| !m.is_retired())
    }

    pub fn find(&self, name: &str) -> Option<&Message> {
        self.messages.iter().find(|m| m.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_ranges() {
        assert_eq!(
            Versions::parse("3+").unwrap(),
            Versions {
                min: 3,
                max: i16::MAX
            }
        );
        assert_eq!(
            Versions::parse(" 0-2 ").unwrap(),
            Versions { min: 0, max: 2 }
        );
        assert!(Versions::parse("none").unwrap().is_empty());
        assert!(Versions::parse("-1").is_err());
        assert!(Versions::parse("3-1").is_err());
        assert_eq!(
            Versions::parse("0-5")
                .unwrap()
                .before(&Versions::parse("3+").unwrap())
                .to_string(),
            "0-2"
        );
    }
}
