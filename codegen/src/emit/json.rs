//! `to_json_value` and `from_json_value`: Kafka's JSON form of one struct.

use super::{differs_from_default, field_ident, json_key, type_ident, Context};
use crate::model::{Field, FieldType, Primitive, Struct};
use proc_macro2::TokenStream;
use quote::quote;

/// The JSON of a value: `(expression, fallible)`. A fallible expression is a
/// `Result<Value, EncodeError>`, an infallible one a `Value`. `value` is a reference.
fn value_to_json(cx: &Context<'_>, ty: &FieldType, value: TokenStream) -> (TokenStream, bool) {
    value_to_json_at(cx, ty, value, false)
}

/// As [`value_to_json`]; with `owned_place`, `value` is a place such as `self.field`.
fn value_to_json_at(
    cx: &Context<'_>,
    ty: &FieldType,
    value: TokenStream,
    owned_place: bool,
) -> (TokenStream, bool) {
    let k = &cx.krate;
    let (copied, borrowed) = if owned_place {
        (value.clone(), quote!(&#value))
    } else {
        (quote!(*#value), value)
    };
    match ty {
        FieldType::Primitive(p) => match p {
            Primitive::Float64 => (quote!(#k::json::f64_to_json(#copied)), true),
            Primitive::Uuid => (quote!(#k::json::uuid_to_json(#borrowed)), false),
            Primitive::String => (quote!(#k::json::string_to_json(#borrowed)), false),
            Primitive::Bytes | Primitive::Records => {
                (quote!(#k::json::bytes_to_json(#borrowed)), false)
            }
            _ => (quote!(#k::serde_json::Value::from(#copied)), false),
        },
        FieldType::Struct(_) => (
            quote!(#k::StructCodec::to_json_value(#borrowed, version)),
            true,
        ),
        FieldType::Array(element) => {
            let (element, fallible) = value_to_json(cx, element, quote!(element));
            let element = if fallible {
                element
            } else {
                quote!(Ok(#element))
            };
            (
                quote!(#k::json::write_array(#borrowed, |element| #element)),
                true,
            )
        }
    }
}

fn field_to_json(cx: &Context<'_>, field: &Field) -> (TokenStream, bool) {
    let k = &cx.krate;
    let ident = field_ident(field);
    if field.is_optional() {
        let (inner, fallible) = value_to_json(cx, &field.ty, quote!(value));
        let null = if fallible {
            quote!(Ok(#k::serde_json::Value::Null))
        } else {
            quote!(#k::serde_json::Value::Null)
        };
        let expr = quote! {
            match &self.#ident {
                Some(value) => #inner,
                None => #null,
            }
        };
        (expr, fallible)
    } else {
        value_to_json_at(cx, &field.ty, quote!(self.#ident), true)
    }
}

pub(crate) fn emit_to_json(cx: &Context<'_>, s: &Struct) -> TokenStream {
    let k = &cx.krate;
    let fields = s.fields.iter().map(|field| {
        let key = json_key(field);
        let name = &field.name;
        let (value, fallible) = field_to_json(cx, field);
        let value = if fallible {
            quote!(#value.map_err(|e| e.at(#name))?)
        } else {
            value
        };
        let insert = quote! {
            object.insert(#key.into(), #value);
        };
        // Kafka shows a tagged field only when it differs from its default.
        // When to show a present field: always, unless it is tagged at this version and
        // holds its default.
        let show = if field.tag.is_some() {
            let differs = differs_from_default(cx, field);
            match cx.when_within(field.tagged_versions, field.versions) {
                super::Cond::Never => None,
                super::Cond::Always => Some(differs),
                super::Cond::Expr(_, untagged) => Some(quote!((#untagged || #differs))),
            }
        } else {
            None
        };
        let present = cx.when(field.versions);
        if field.ignorable {
            return match show {
                Some(show) => match present.and(show) {
                    test if test.to_string() == "false" => quote!(),
                    test => quote!(if #test { #insert }),
                },
                None => present.guard(insert),
            };
        }
        let insert = match show {
            Some(show) => quote!(if #show { #insert }),
            None => insert,
        };
        let differs = differs_from_default(cx, field);
        let refuse = quote! {
            return Err(#k::EncodeError::new(#k::EncodeErrorKind::FieldNotInVersion).at(#name));
        };
        match present {
            super::Cond::Expr(e, _) => quote!(if #e { #insert } else if #differs { #refuse }),
            other => other.branch(insert, quote!(if #differs { #refuse })),
        }
    });
    quote! {
        fn to_json_value(&self, version: i16) -> Result<#k::serde_json::Value, #k::EncodeError> {
            let mut object = #k::serde_json::Map::new();
            #(#fields)*
            Ok(#k::serde_json::Value::Object(object))
        }
    }
}

/// The reader function for a primitive.
fn primitive_reader(cx: &Context<'_>, p: Primitive) -> TokenStream {
    let k = &cx.krate;
    match p {
        Primitive::Bool => quote!(#k::json::read_bool),
        Primitive::Int8 => quote!(#k::json::read_i8),
        Primitive::Int16 => quote!(#k::json::read_i16),
        Primitive::Uint16 => quote!(#k::json::read_u16),
        Primitive::Int32 => quote!(#k::json::read_i32),
        Primitive::Uint32 => quote!(#k::json::read_u32),
        Primitive::Int64 => quote!(#k::json::read_i64),
        Primitive::Float64 => quote!(#k::json::read_f64),
        Primitive::Uuid => quote!(#k::json::read_uuid),
        Primitive::String => quote!(#k::json::read_string),
        Primitive::Bytes | Primitive::Records => quote!(#k::json::read_bytes),
    }
}

/// `Result<T, JsonError>` reading one value from the `&Value` named `value`.
fn value_from_json(cx: &Context<'_>, ty: &FieldType) -> TokenStream {
    let k = &cx.krate;
    match ty {
        FieldType::Primitive(p) => {
            let read = primitive_reader(cx, *p);
            quote!(#read(value))
        }
        FieldType::Struct(name) => {
            let name = type_ident(name);
            quote!(<#name as #k::StructCodec>::from_json_value(value, version))
        }
        FieldType::Array(element) => match element.as_ref() {
            FieldType::Primitive(p) => {
                let read = primitive_reader(cx, *p);
                quote!(#k::json::read_array(value, #read))
            }
            element => {
                let element = value_from_json(cx, element);
                quote!(#k::json::read_array(value, |value| #element))
            }
        },
    }
}

pub(crate) fn emit_from_json(cx: &Context<'_>, s: &Struct) -> TokenStream {
    let k = &cx.krate;
    let fields = s.fields.iter().map(|field| {
        let ident = field_ident(field);
        let key = json_key(field);
        let name = &field.name;
        let inner = value_from_json(cx, &field.ty);
        let read = if field.is_optional() {
            match &field.ty {
                FieldType::Primitive(p) => {
                    let read = primitive_reader(cx, *p);
                    quote!(#k::json::read_nullable(value, #read))
                }
                _ => quote!(#k::json::read_nullable(value, |value| #inner)),
            }
        } else {
            inner
        };
        // Kafka requires the key exactly where the field is present and not tagged.
        let missing = cx.when(cx.positional(field)).guard(quote! {
            return Err(#k::JsonError::new(#k::JsonErrorKind::MissingField).at(#name));
        });
        if missing.is_empty() {
            quote! {
                if let Some(value) = object.get(#key) {
                    this.#ident = #read.map_err(|e| e.at(#name))?;
                }
            }
        } else {
            quote! {
                match object.get(#key) {
                    Some(value) => this.#ident = #read.map_err(|e| e.at(#name))?,
                    None => { #missing }
                }
            }
        }
    });
    // Kafka's JSON reader refuses to read a struct at a version the struct does not exist in.
    // Only a field the version lacks can lead here (its key is read at any version), so a
    // nested struct in such a field is refused, as Kafka refuses it.
    let valid = s.versions.to_string();
    let absent = match cx.when(s.versions) {
        super::Cond::Always => None,
        super::Cond::Expr(_, absent) => Some(absent),
        // Never valid: still a run-time test, so the rest is not unreachable code.
        super::Cond::Never => {
            let (min, max) = (s.versions.min, s.versions.max);
            Some(quote!(!(#min..=#max).contains(&version)))
        }
    };
    let version_check = absent.map(|absent| {
        quote! {
            if #absent {
                return Err(#k::JsonError::new(#k::JsonErrorKind::UnsupportedVersion {
                    version,
                    valid: #valid.into(),
                }));
            }
        }
    });
    quote! {
        fn from_json_value(
            value: &#k::serde_json::Value,
            version: i16,
        ) -> Result<Self, #k::JsonError> {
            #version_check
            let object = #k::json::expect_object(value)?;
            let mut this = Self::default();
            #(#fields)*
            Ok(this)
        }
    }
}
