//! Version-aware random values (behind the `arbitrary` feature): property tests and
//! structure-aware fuzzing start from messages that are valid for the version at hand.

use super::{field_ident, type_ident, Context};
use crate::model::{FieldType, Primitive, Struct};
use proc_macro2::TokenStream;
use quote::quote;

/// The generator function for a primitive.
fn primitive_fn(cx: &Context<'_>, p: Primitive) -> TokenStream {
    let k = &cx.krate;
    match p {
        Primitive::Bool => quote!(#k::random::boolean),
        Primitive::Int8 => quote!(#k::random::int::<i8>),
        Primitive::Int16 => quote!(#k::random::int::<i16>),
        Primitive::Uint16 => quote!(#k::random::int::<u16>),
        Primitive::Int32 => quote!(#k::random::int::<i32>),
        Primitive::Uint32 => quote!(#k::random::int::<u32>),
        Primitive::Int64 => quote!(#k::random::int::<i64>),
        Primitive::Float64 => quote!(#k::random::float),
        Primitive::Uuid => quote!(#k::random::uuid),
        Primitive::String => quote!(#k::random::string),
        Primitive::Bytes | Primitive::Records => quote!(#k::random::bytes),
    }
}

fn random_value(cx: &Context<'_>, ty: &FieldType) -> TokenStream {
    let k = &cx.krate;
    match ty {
        FieldType::Primitive(p) => {
            let function = primitive_fn(cx, *p);
            quote!(#function(u))
        }
        FieldType::Struct(name) => {
            let name = type_ident(name);
            quote!(<#name as #k::random::Random>::random(u, version, options))
        }
        FieldType::Array(element) => match element.primitive() {
            Some(p) => {
                let function = primitive_fn(cx, p);
                quote!(#k::random::vec(u, #function))
            }
            None => {
                let element = random_value(cx, element);
                quote!(#k::random::vec(u, |u| #element))
            }
        },
    }
}

pub(crate) fn emit_arbitrary(cx: &Context<'_>, s: &Struct) -> TokenStream {
    let k = &cx.krate;
    let name = type_ident(&s.name);
    let fields = s.fields.iter().map(|field| {
        let ident = field_ident(field);
        let value = random_value(cx, &field.ty);
        let value = if field.is_optional() {
            let generate = match field.ty.primitive() {
                Some(p) => primitive_fn(cx, p),
                None => quote!(|u| #value),
            };
            match cx.when_within(field.nullable_versions, field.versions) {
                super::Cond::Never => quote!(#value.map(Some)),
                nullable => {
                    let nullable = nullable.to_bool();
                    quote!(#k::random::maybe_null(u, #nullable, #generate))
                }
            }
        } else {
            value
        };
        cx.when(field.versions)
            .guard(quote!(this.#ident = #value?;))
    });
    let known_tags = s.known_tags;
    let add_unknown = match cx.when(cx.message.flexible_versions) {
        super::Cond::Never => quote!(),
        flexible => {
            let test = flexible.and(quote!(options.unknown_tagged_fields));
            quote! {
                if #test {
                    this.unknown_tagged_fields = #k::random::unknown_tagged_fields(u, #known_tags)?;
                }
            }
        }
    };
    quote! {
        #[cfg(feature = "arbitrary")]
        impl #k::random::Random for #name {
            fn random(
                u: &mut #k::random::arbitrary::Unstructured<'_>,
                version: i16,
                options: &#k::random::RandomOptions,
            ) -> #k::random::arbitrary::Result<Self> {
                let mut this = Self::default();
                #(#fields)*
                #add_unknown
                Ok(this)
            }
        }
    }
}
