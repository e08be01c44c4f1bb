//! The API table (`ApiKey`) and the `Request`/`Response` enums that dispatch on it, plus
//! visitors over every message type for generic tools and tests.

use super::{module_ident, type_ident};
use crate::model::{Message, MessageKind, SchemaSet};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

fn opt_i16(value: Option<i16>) -> TokenStream {
    match value {
        Some(v) => quote!(Some(#v)),
        None => quote!(None),
    }
}

/// Emits `api.rs`: included by the hand-written `api` module. `krate` as for
/// [`emit_all`](super::emit_all).
pub fn emit_api(set: &SchemaSet, krate: &TokenStream) -> String {
    let k = krate;
    let mut apis: Vec<(&Message, &Message)> = set
        .live()
        .filter(|m| m.kind == MessageKind::Request)
        .map(|request| {
            let response_name = format!("{}Response", request.name.trim_end_matches("Request"));
            (request, set.find(&response_name).expect("validated"))
        })
        .collect();
    apis.sort_by_key(|(request, _)| request.api_key);

    let variant = |request: &Message| format_ident!("{}", request.name.trim_end_matches("Request"));
    let variants = apis.iter().map(|(request, _)| {
        let ident = variant(request);
        let key = request.api_key.unwrap();
        let doc = format!(
            " `{}` (key {key}), versions {}.",
            ident, request.valid_versions
        );
        quote!(#[doc = #doc] #ident = #key,)
    });
    let all = apis.iter().map(|(request, _)| variant(request));
    let from_key = apis.iter().map(|(request, _)| {
        let ident = variant(request);
        let key = request.api_key.unwrap();
        quote!(#key => Some(ApiKey::#ident),)
    });
    let names = apis.iter().map(|(request, _)| {
        let ident = variant(request);
        let name = ident.to_string();
        quote!(ApiKey::#ident => #name,)
    });
    let versions = apis.iter().map(|(request, _)| {
        let ident = variant(request);
        let (min, max) = (request.valid_versions.min, request.valid_versions.max);
        quote!(ApiKey::#ident => #k::VersionRange::new(#min, #max),)
    });
    let deprecated = apis.iter().map(|(request, _)| {
        let ident = variant(request);
        let d = request.deprecated_versions;
        let value = if d.is_empty() {
            quote!(None)
        } else {
            let (min, max) = (d.min, d.max.min(request.valid_versions.max));
            quote!(Some(#k::VersionRange::new(#min, #max)))
        };
        quote!(ApiKey::#ident => #value,)
    });
    let unstable = apis.iter().map(|(request, _)| {
        let ident = variant(request);
        let value = request.latest_version_unstable;
        quote!(ApiKey::#ident => #value,)
    });
    let request_flexible = apis.iter().map(|(request, _)| {
        let ident = variant(request);
        let value = opt_i16(request.first_flexible());
        quote!(ApiKey::#ident => #value,)
    });
    let response_flexible = apis.iter().map(|(request, response)| {
        let ident = variant(request);
        let value = opt_i16(response.first_flexible());
        quote!(ApiKey::#ident => #value,)
    });
    let listeners = apis.iter().map(|(request, _)| {
        let ident = variant(request);
        let values = request.listeners.iter().map(|l| match l.as_str() {
            "broker" => quote!(#k::Listener::Broker),
            "controller" => quote!(#k::Listener::Controller),
            _ => quote!(#k::Listener::ZkBroker),
        });
        quote!(ApiKey::#ident => &[#(#values),*],)
    });

    let request_enum = emit_body_enum(&apis, true, k);
    let response_enum = emit_body_enum(&apis, false, k);

    let live: Vec<&Message> = set.live().collect();
    let visit = live.iter().map(|m| {
        let module = module_ident(&m.name);
        let name = type_ident(&m.name);
        quote!(visitor.visit::<#k::messages::#module::#name>();)
    });
    let visit_random = visit.clone();

    let file = quote! {
        /// An API: the key shared by a request schema and its response schema.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(i16)]
        #[non_exhaustive]
        pub enum ApiKey {
            #(#variants)*
        }

        impl ApiKey {
            /// Every API, by key.
            pub const ALL: &'static [ApiKey] = &[#(ApiKey::#all),*];

            /// The key number on the wire.
            pub const fn key(self) -> i16 {
                self as i16
            }

            /// The API for a key number, if this crate knows it.
            pub const fn from_key(key: i16) -> Option<ApiKey> {
                match key {
                    #(#from_key)*
                    _ => None,
                }
            }

            /// The API's name, as Kafka spells it (`DescribeQuorum`).
            pub const fn name(self) -> &'static str {
                match self { #(#names)* }
            }

            /// The versions a peer may use.
            pub const fn valid_versions(self) -> #k::VersionRange {
                match self { #(#versions)* }
            }

            /// Versions that Kafka marks deprecated, if any.
            pub const fn deprecated_versions(self) -> Option<#k::VersionRange> {
                match self { #(#deprecated)* }
            }

            /// Whether the highest valid version is still unstable upstream (Kafka advertises it
            /// only when unstable versions are enabled).
            pub const fn latest_version_unstable(self) -> bool {
                match self { #(#unstable)* }
            }

            /// The first version whose request uses the flexible encoding.
            pub const fn request_first_flexible_version(self) -> Option<i16> {
                match self { #(#request_flexible)* }
            }

            /// The first version whose response uses the flexible encoding.
            pub const fn response_first_flexible_version(self) -> Option<i16> {
                match self { #(#response_flexible)* }
            }

            /// The listeners that serve this API.
            pub const fn listeners(self) -> &'static [#k::Listener] {
                match self { #(#listeners)* }
            }
        }

        #request_enum
        #response_enum

        /// Something done once per message type, generically.
        pub trait MessageVisitor {
            /// Called once for each message type.
            fn visit<M: #k::Message>(&mut self);
        }

        /// Calls `visitor` for every request, response, header and data schema.
        pub fn visit_messages(visitor: &mut impl MessageVisitor) {
            #(#visit)*
        }

        /// Something done once per message type that can also be generated at random.
        #[cfg(feature = "arbitrary")]
        pub trait RandomMessageVisitor {
            /// Called once for each message type.
            fn visit<M: #k::Message + #k::random::Random>(&mut self);
        }

        /// Calls `visitor` for every message type (requires the `arbitrary` feature).
        #[cfg(feature = "arbitrary")]
        pub fn visit_random_messages(visitor: &mut impl RandomMessageVisitor) {
            #(#visit_random)*
        }
    };
    let syntax = syn::parse2::<syn::File>(file).expect("generated code parses");
    format!(
        "// Generated by kafka-codec-codegen from the schemas in `schemas/`. Do not edit.\n\n{}",
        prettyplease::unparse(&syntax)
    )
}

fn emit_body_enum<'a>(
    apis: &[(&'a Message, &'a Message)],
    request: bool,
    k: &TokenStream,
) -> TokenStream {
    let (enum_name, doc) = if request {
        (format_ident!("Request"), " A request body of any API.")
    } else {
        (format_ident!("Response"), " A response body of any API.")
    };
    let pick = |pair: &(&'a Message, &'a Message)| -> &'a Message {
        if request {
            pair.0
        } else {
            pair.1
        }
    };
    let variant =
        |pair: &(&Message, &Message)| format_ident!("{}", pair.0.name.trim_end_matches("Request"));
    let message_path = |m: &Message| {
        let module = module_ident(&m.name);
        let name = type_ident(&m.name);
        quote!(#k::messages::#module::#name)
    };
    let variants = apis.iter().map(|pair| {
        let v = variant(pair);
        let path = message_path(pick(pair));
        let doc = format!(" A `{}`.", pick(pair).name);
        quote!(#[doc = #doc] #v(#path),)
    });
    let api_keys = apis.iter().map(|pair| {
        let v = variant(pair);
        quote!(#enum_name::#v(_) => ApiKey::#v,)
    });
    let decodes = apis.iter().map(|pair| {
        let v = variant(pair);
        let path = message_path(pick(pair));
        quote!(ApiKey::#v => <#path as #k::Message>::decode_from(decoder, version).map(#enum_name::#v),)
    });
    let encodes = apis.iter().map(|pair| {
        let v = variant(pair);
        quote!(#enum_name::#v(body) => #k::Message::encode(body, buf, version),)
    });
    let lens = apis.iter().map(|pair| {
        let v = variant(pair);
        quote!(#enum_name::#v(body) => #k::Message::encoded_len(body, version),)
    });
    let to_json = apis.iter().map(|pair| {
        let v = variant(pair);
        quote!(#enum_name::#v(body) => #k::Message::to_json(body, version),)
    });
    let from_json = apis.iter().map(|pair| {
        let v = variant(pair);
        let path = message_path(pick(pair));
        quote!(ApiKey::#v => <#path as #k::Message>::from_json(value, version).map(#enum_name::#v),)
    });
    let froms = apis.iter().map(|pair| {
        let v = variant(pair);
        let path = message_path(pick(pair));
        quote! {
            impl From<#path> for #enum_name {
                fn from(body: #path) -> Self {
                    #enum_name::#v(body)
                }
            }
        }
    });
    quote! {
        #[doc = #doc]
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        pub enum #enum_name {
            #(#variants)*
        }

        impl #enum_name {
            /// The API this body belongs to.
            pub fn api_key(&self) -> ApiKey {
                match self { #(#api_keys)* }
            }

            /// Reads the body of `api_key` at `version`.
            pub fn decode_from(
                api_key: ApiKey,
                decoder: &mut #k::wire::Decoder<'_>,
                version: i16,
            ) -> Result<Self, #k::DecodeError> {
                match api_key { #(#decodes)* }
            }

            /// Writes the body at `version`.
            pub fn encode(&self, buf: &mut impl #k::bytes::BufMut, version: i16) -> Result<(), #k::EncodeError> {
                match self { #(#encodes)* }
            }

            /// Exactly the bytes [`Self::encode`] writes.
            pub fn encoded_len(&self, version: i16) -> Result<usize, #k::EncodeError> {
                match self { #(#lens)* }
            }

            /// The body in Kafka's JSON form.
            pub fn to_json(&self, version: i16) -> Result<#k::serde_json::Value, #k::EncodeError> {
                match self { #(#to_json)* }
            }

            /// Reads the body of `api_key` from Kafka's JSON form.
            pub fn from_json(
                api_key: ApiKey,
                value: &#k::serde_json::Value,
                version: i16,
            ) -> Result<Self, #k::JsonError> {
                match api_key { #(#from_json)* }
            }
        }

        #(#froms)*
    }
}
