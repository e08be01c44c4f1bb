//! `to_json_value` and `from_json_value`: Kafka's JSON form of one struct.

use super::{differs_from_default, field_ident, json_key, type_ident, Context};
use crate::model::{Field, FieldType, Primitive, Struct};
use proc_macro2::TokenStream;
use quote::quote;

/// The JSON of the value at `place`: `(expression, fallible)`. A fallible expression is a
/// `Result<Value, EncodeError>`, an infallible one a `Value`.
fn value_to_json(ty: &FieldType, place: TokenStream) -> (TokenStream, bool) {
    match ty {
        FieldType::Primitive(p) => match p {
            Primitive::Float64 => (quote!(crate::json::f64_to_json(#place)), true),
            Primitive::Uuid => (quote!(crate::json::uuid_to_json(&#place)), false),
            Primitive::String => (quote!(crate::json::string_to_json(&#place)), false),
            Primitive::Bytes | Primitive::Records => (quote!(crate::json::bytes_to_json(&#place)), false),
            _ => (quote!(::serde_json::Value::from(#place)), false),
        },
        FieldType::Struct(_) => (quote!(crate::StructCodec::to_json_value(&#place, version)), true),
        FieldType::Array(element) => {
            let (element, fallible) = value_to_json(element, quote!(*element));
            let element = if fallible { element } else { quote!(Ok(#element)) };
            (quote!(crate::json::write_array(&#place, |element| #element)), true)
        }
    }
}

fn field_to_json(field: &Field) -> (TokenStream, bool) {
    let ident = field_ident(field);
    if field.is_optional() {
        let (inner, fallible) = value_to_json(&field.ty, quote!(*value));
        let null = if fallible {
            quote!(Ok(::serde_json::Value::Null))
        } else {
            quote!(::serde_json::Value::Null)
        };
        let expr = quote! {
            match &self.#ident {
                Some(value) => #inner,
                None => #null,
            }
        };
        (expr, fallible)
    } else {
        value_to_json(&field.ty, quote!(self.#ident))
    }
}

pub(crate) fn emit_to_json(cx: &Context<'_>, s: &Struct) -> TokenStream {
    let fields = s.fields.iter().map(|field| {
        let key = json_key(field);
        let name = &field.name;
        let (value, fallible) = field_to_json(field);
        let value = if fallible { quote!(#value.map_err(|e| e.at(#name))?) } else { value };
        let insert = quote! {
            object.insert(#key.into(), #value);
        };
        // Kafka shows a tagged field only when it differs from its default.
        let insert = if field.tag.is_some() {
            let differs = differs_from_default(field);
            match cx.when_within(field.tagged_versions, field.versions) {
                super::Cond::Never => insert,
                super::Cond::Always => quote!(if #differs { #insert }),
                super::Cond::Expr(tagged) => quote!(if !(#tagged) || #differs { #insert }),
            }
        } else {
            insert
        };
        let absent = if field.ignorable {
            quote!()
        } else {
            let differs = differs_from_default(field);
            quote! {
                if #differs {
                    return Err(crate::EncodeError::new(crate::EncodeErrorKind::FieldNotInVersion).at(#name));
                }
            }
        };
        cx.when(field.versions).branch(insert, absent)
    });
    quote! {
        fn to_json_value(&self, version: i16) -> Result<::serde_json::Value, crate::EncodeError> {
            let mut object = ::serde_json::Map::new();
            #(#fields)*
            Ok(::serde_json::Value::Object(object))
        }
    }
}

/// `Result<T, JsonError>` reading one value from the `&Value` named `value`.
fn value_from_json(ty: &FieldType) -> TokenStream {
    match ty {
        FieldType::Primitive(p) => match p {
            Primitive::Bool => quote!(crate::json::read_bool(value)),
            Primitive::Int8 => quote!(crate::json::read_i8(value)),
            Primitive::Int16 => quote!(crate::json::read_i16(value)),
            Primitive::Uint16 => quote!(crate::json::read_u16(value)),
            Primitive::Int32 => quote!(crate::json::read_i32(value)),
            Primitive::Uint32 => quote!(crate::json::read_u32(value)),
            Primitive::Int64 => quote!(crate::json::read_i64(value)),
            Primitive::Float64 => quote!(crate::json::read_f64(value)),
            Primitive::Uuid => quote!(crate::json::read_uuid(value)),
            Primitive::String => quote!(crate::json::read_string(value)),
            Primitive::Bytes | Primitive::Records => quote!(crate::json::read_bytes(value)),
        },
        FieldType::Struct(name) => {
            let name = type_ident(name);
            quote!(<#name as crate::StructCodec>::from_json_value(value, version))
        }
        FieldType::Array(element) => {
            let element = value_from_json(element);
            quote!(crate::json::read_array(value, |value| #element))
        }
    }
}

pub(crate) fn emit_from_json(cx: &Context<'_>, s: &Struct) -> TokenStream {
    let fields = s.fields.iter().map(|field| {
        let ident = field_ident(field);
        let key = json_key(field);
        let name = &field.name;
        let inner = value_from_json(&field.ty);
        let read = if field.is_optional() {
            quote!(crate::json::read_nullable(value, |value| #inner))
        } else {
            inner
        };
        // Kafka requires the key exactly where the field is present and not tagged.
        let missing = cx.when(cx.positional(field)).guard(quote! {
            return Err(crate::JsonError::new(crate::JsonErrorKind::MissingField).at(#name));
        });
        quote! {
            match object.get(#key) {
                Some(value) => {
                    this.#ident = #read.map_err(|e| e.at(#name))?;
                }
                None => { #missing }
            }
        }
    });
    // Kafka's JSON reader refuses to read a struct at a version the struct does not exist in.
    // Only a field the version lacks can lead here (its key is read at any version), so a
    // nested struct in such a field is refused, as Kafka refuses it.
    let valid = s.versions.to_string();
    let absent = match cx.when(s.versions) {
        super::Cond::Always => None,
        super::Cond::Expr(present) => Some(quote!(!(#present))),
        // Never valid: still a run-time test, so the rest is not unreachable code.
        super::Cond::Never => {
            let (min, max) = (s.versions.min, s.versions.max);
            Some(quote!(!(#min..=#max).contains(&version)))
        }
    };
    let version_check = absent.map(|absent| {
        quote! {
            if #absent {
                return Err(crate::JsonError::new(crate::JsonErrorKind::UnsupportedVersion {
                    version,
                    valid: #valid.into(),
                }));
            }
        }
    });
    quote! {
        fn from_json_value(
            value: &::serde_json::Value,
            version: i16,
        ) -> Result<Self, crate::JsonError> {
            #version_check
            let object = crate::json::expect_object(value)?;
            let mut this = Self::default();
            #(#fields)*
            Ok(this)
        }
    }
}
