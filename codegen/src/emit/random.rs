//! Version-aware random values (feature `arbitrary`): property tests and structure-aware
//! fuzzing start from messages that are valid for the version at hand.

use super::code::Code;
use super::{field_default, field_ident, if_else, uses_ident, Cond, Context};
use crate::model::{FieldType, Primitive, Struct};

/// The generator function for a primitive.
fn primitive_fn(p: Primitive) -> &'static str {
    match p {
        Primitive::Bool => "random::boolean",
        Primitive::Int8 => "random::int::<i8>",
        Primitive::Int16 => "random::int::<i16>",
        Primitive::Uint16 => "random::int::<u16>",
        Primitive::Int32 => "random::int::<i32>",
        Primitive::Uint32 => "random::int::<u32>",
        Primitive::Int64 => "random::int::<i64>",
        Primitive::Float64 => "random::float",
        Primitive::Uuid => "random::uuid",
        Primitive::String => "random::string",
        Primitive::Bytes | Primitive::Records => "random::bytes",
    }
}

/// A function of `u` making one value of `ty`.
fn generator(ty: &FieldType) -> String {
    match ty {
        FieldType::Primitive(p) => primitive_fn(*p).into(),
        FieldType::Struct(name) => format!("|u| {name}::random(u, version, options)"),
        FieldType::Array(element) if super::is_primitive_array(ty) => {
            format!("|u| random::primitive_array(u, {})", generator(element))
        }
        FieldType::Array(element) => format!("|u| random::vec(u, {})", generator(element)),
    }
}

/// `Result<T>` making one value of `ty`.
fn value(ty: &FieldType) -> String {
    match ty {
        FieldType::Primitive(p) => format!("{}(u)", primitive_fn(*p)),
        FieldType::Struct(name) => format!("{name}::random(u, version, options)"),
        FieldType::Array(element) if super::is_primitive_array(ty) => {
            format!("random::primitive_array(u, {})", generator(element))
        }
        FieldType::Array(element) => format!("random::vec(u, {})", generator(element)),
    }
}

pub(crate) fn emit_random(code: &mut Code, cx: &Context<'_>, s: &Struct) {
    let mut body = Code::new();
    // Fields are drawn in schema order, then the unknown tagged fields.
    body.open("Ok(Self");
    for field in &s.fields {
        let ident = field_ident(field);
        let value = if field.is_optional() {
            match cx.when_within(field.nullable_versions, field.versions) {
                Cond::Never => format!("Some({}?)", value(&field.ty)),
                nullable => format!(
                    "random::maybe_null(u, {}, {})?",
                    nullable.to_bool(),
                    generator(&field.ty)
                ),
            }
        } else {
            format!("{}?", value(&field.ty))
        };
        let value = cx
            .when(field.versions)
            .choose(&value, &field_default(field));
        body.line(format!("{ident}: {value},"));
    }
    let unknown = match cx.when(cx.message.flexible_versions) {
        Cond::Never => "TaggedFields::new()".to_string(),
        flexible => {
            let test = flexible
                .and("options.unknown_tagged_fields")
                .expect("not never");
            if_else(
                &test,
                &format!("random::unknown_tagged_fields(u, {})?", s.known_tags),
                "TaggedFields::new()",
            )
        }
    };
    body.line(format!("unknown_tagged_fields: {unknown},"));
    body.close_with(")");
    let body = body.finish();
    let name = |ident: &str| match uses_ident(&body, ident) {
        true => ident.to_string(),
        false => format!("_{ident}"),
    };
    code.block(
        format!(
            "fn random(\n    {}: &mut Unstructured<'_>,\n    {}: i16,\n    {}: &RandomOptions,\n) -> random::arbitrary::Result<Self>",
            name("u"),
            name("version"),
            name("options")
        ),
        |code| code.line(body),
    );
}
