//! The struct definition, its `Default`, and the trait impls that tie the pieces together.

use super::{codec, field_default, field_ident, field_type, json, random, type_ident, Context};
use crate::model::{Field, MessageKind, Struct};
use proc_macro2::TokenStream;
use quote::quote;

fn field_doc(field: &Field) -> String {
    let mut doc = format!(
        " `{}`: `{}`, versions {}",
        field.name, field.ty, field.versions
    );
    if !field.nullable_versions.is_empty() {
        doc += &format!(", nullable {}", field.nullable_versions);
    }
    if let Some(tag) = field.tag {
        doc += &format!(", tag {tag} in versions {}", field.tagged_versions);
    }
    if field.ignorable {
        doc += ", ignorable";
    }
    if field.map_key {
        doc += ", map key";
    }
    if let Some(entity) = field.entity_type.as_deref().filter(|e| *e != "unknown") {
        doc += &format!(", entity {entity}");
    }
    doc.push('.');
    doc
}

pub(crate) fn emit_struct(cx: &Context<'_>, s: &Struct, is_root: bool) -> TokenStream {
    let k = &cx.krate;
    let name = type_ident(&s.name);
    let field_defs = s.fields.iter().map(|field| {
        let ident = field_ident(field);
        let ty = field_type(cx, field);
        let doc = field_doc(field);
        quote! {
            #[doc = #doc]
            pub #ident: #ty,
        }
    });
    let field_defaults = s.fields.iter().map(|field| {
        let ident = field_ident(field);
        let default = field_default(cx, field);
        quote!(#ident: #default,)
    });
    let doc = if is_root {
        format!(" The `{}` message.", s.name)
    } else {
        format!(" The `{}` struct of `{}`.", s.name, cx.message.name)
    };
    let decode = codec::emit_decode(cx, s);
    let encode = codec::emit_encode(cx, s);
    let len = codec::emit_len(cx, s);
    let to_json = json::emit_to_json(cx, s);
    let from_json = json::emit_from_json(cx, s);
    let arbitrary = random::emit_arbitrary(cx, s);
    let message_impl = if is_root {
        emit_message_impl(cx, s)
    } else {
        quote!()
    };
    let (derives, default_impl) = if super::derivable_default(&s.fields) {
        (
            quote!(#[derive(Debug, Clone, PartialEq, Default)]),
            quote!(),
        )
    } else {
        (
            quote!(#[derive(Debug, Clone, PartialEq)]),
            quote! {
                impl Default for #name {
                    fn default() -> Self {
                        #name {
                            #(#field_defaults)*
                            unknown_tagged_fields: Vec::new(),
                        }
                    }
                }
            },
        )
    };
    quote! {
        #[doc = #doc]
        #derives
        pub struct #name {
            #(#field_defs)*
            /// Tagged fields this crate does not know, kept so they are written back unchanged.
            pub unknown_tagged_fields: Vec<#k::RawTaggedField>,
        }

        #default_impl

        impl #k::StructCodec for #name {
            #decode
            #encode
            #len
            #to_json
            #from_json
        }

        #arbitrary
        #message_impl
    }
}

fn emit_message_impl(cx: &Context<'_>, s: &Struct) -> TokenStream {
    let k = &cx.krate;
    let message = cx.message;
    let name = type_ident(&s.name);
    let schema_name = &message.name;
    let kind = match message.kind {
        MessageKind::Request => quote!(#k::MessageKind::Request),
        MessageKind::Response => quote!(#k::MessageKind::Response),
        MessageKind::Header => quote!(#k::MessageKind::Header),
        MessageKind::Data | MessageKind::Metadata => quote!(#k::MessageKind::Data),
    };
    let api_key = match message.api_key {
        Some(key) if matches!(message.kind, MessageKind::Request | MessageKind::Response) => {
            quote!(Some(#key))
        }
        _ => quote!(None),
    };
    let (min, max) = (message.valid_versions.min, message.valid_versions.max);
    let flexible = match message.first_flexible() {
        Some(v) => quote!(Some(#v)),
        None => quote!(None),
    };
    quote! {
        impl #k::Message for #name {
            const NAME: &'static str = #schema_name;
            const KIND: #k::MessageKind = #kind;
            const API_KEY: Option<i16> = #api_key;
            const VALID_VERSIONS: #k::VersionRange = #k::VersionRange::new(#min, #max);
            const FIRST_FLEXIBLE_VERSION: Option<i16> = #flexible;
        }
    }
}
