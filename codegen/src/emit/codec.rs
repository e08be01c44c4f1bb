//! `decode_fields`, `encode_fields` and `fields_len`: the binary codec of one struct.

use super::{differs_from_default, field_ident, Cond, Context};
use crate::model::{Field, FieldType, Primitive, Struct, Versions};
use proc_macro2::TokenStream;
use quote::quote;

impl Context<'_> {
    /// Like [`Context::when`], but simplified for code that already runs only within `within`.
    pub fn when_within(&self, range: Versions, within: Versions) -> Cond {
        let scope = within.intersect(&self.message.valid_versions);
        let hit = range.intersect(&scope);
        if hit.is_empty() {
            Cond::Never
        } else if hit == scope {
            Cond::Always
        } else {
            self.when(range)
        }
    }

    fn flexible_binding(&self) -> TokenStream {
        let flexible = self.when(self.message.flexible_versions).to_bool();
        quote!(let flexible = #flexible;)
    }

    fn is_never_flexible(&self) -> bool {
        self.message.flexible_versions.is_empty()
    }
}

fn tagged_fields(s: &Struct) -> Vec<&Field> {
    let mut tagged: Vec<&Field> = s.fields.iter().filter(|f| f.tag.is_some()).collect();
    tagged.sort_by_key(|f| f.tag);
    tagged
}

// ---------------------------------------------------------------------------------------------
// Decoding

/// An expression of type `Result<T, DecodeError>` reading one element of an array.
fn read_element(cx: &Context<'_>, ty: &FieldType, compact: &TokenStream) -> TokenStream {
    let k = &cx.krate;
    match ty {
        FieldType::Primitive(p) => read_primitive(*p, compact),
        FieldType::Struct(name) => {
            let name = super::type_ident(name);
            quote!(d.read_struct(|d| <#name as #k::StructCodec>::decode_fields(d, version)))
        }
        FieldType::Array(_) => unreachable!("arrays of arrays are refused by validation"),
    }
}

fn read_primitive(p: Primitive, compact: &TokenStream) -> TokenStream {
    match p {
        Primitive::Bool => quote!(d.read_bool()),
        Primitive::Int8 => quote!(d.read_i8()),
        Primitive::Int16 => quote!(d.read_i16()),
        Primitive::Uint16 => quote!(d.read_u16()),
        Primitive::Int32 => quote!(d.read_i32()),
        Primitive::Uint32 => quote!(d.read_u32()),
        Primitive::Int64 => quote!(d.read_i64()),
        Primitive::Float64 => quote!(d.read_f64()),
        Primitive::Uuid => quote!(d.read_uuid()),
        Primitive::String => quote!(d.read_string(#compact)),
        Primitive::Bytes | Primitive::Records => quote!(d.read_bytes(#compact)),
    }
}

/// The nullable twin of a read expression.
fn read_nullable(cx: &Context<'_>, field: &Field, compact: &TokenStream) -> TokenStream {
    let k = &cx.krate;
    match &field.ty {
        FieldType::Primitive(Primitive::String) => quote!(d.read_nullable_string(#compact)),
        FieldType::Primitive(_) => quote!(d.read_nullable_bytes(#compact)),
        FieldType::Struct(name) => {
            let name = super::type_ident(name);
            quote!(d.read_nullable_struct(|d| <#name as #k::StructCodec>::decode_fields(d, version)))
        }
        FieldType::Array(element) => {
            let element = read_element(cx, element, compact);
            quote!(d.read_nullable_array(#compact, |d| #element))
        }
    }
}

fn read_non_null(cx: &Context<'_>, field: &Field, compact: &TokenStream) -> TokenStream {
    match &field.ty {
        FieldType::Array(element) => {
            let element = read_element(cx, element, compact);
            quote!(d.read_array(#compact, |d| #element))
        }
        other => read_element(cx, other, compact),
    }
}

/// `Result<FieldType, DecodeError>` for the field, within `scope` versions.
fn read_field(cx: &Context<'_>, field: &Field, scope: Versions) -> TokenStream {
    let compact = cx.compact(field);
    if !field.is_optional() {
        return read_non_null(cx, field, &compact);
    }
    let nullable = read_nullable(cx, field, &compact);
    let non_null = read_non_null(cx, field, &compact);
    match cx.when_within(field.nullable_versions, scope) {
        Cond::Always => nullable,
        Cond::Never => quote!(#non_null.map(Some)),
        Cond::Expr(e, _) => quote! {
            if #e { #nullable } else { #non_null.map(Some) }
        },
    }
}

/// The local variable that holds a field while its struct is decoded: the field's own name,
/// unless that would shadow one of the decoder's own bindings.
fn local_ident(field: &Field) -> proc_macro2::Ident {
    let ident = field_ident(field);
    match ident.to_string().as_str() {
        "d" | "version" | "flexible" | "tag" | "unknown_tagged_fields" => {
            quote::format_ident!("{}_value", ident.to_string())
        }
        _ => ident,
    }
}

pub(crate) fn emit_decode(cx: &Context<'_>, s: &Struct) -> TokenStream {
    let k = &cx.krate;
    let flexible = cx.flexible_binding();
    // Each field is read into a local (or takes its default where the version lacks it), and
    // the struct is built once at the end: no default-then-overwrite, no extra copy.
    let locals = s.fields.iter().map(|field| {
        let local = local_ident(field);
        let name = &field.name;
        let range = cx.positional(field);
        let read = read_field(cx, field, range);
        let read = quote!(#read.map_err(|e| e.at(#name))?);
        let default = super::field_default(cx, field);
        let value = cx.when(range).branch(read, default);
        let mutability = if field.tag.is_some() && !cx.is_never_flexible() {
            quote!(mut)
        } else {
            quote!()
        };
        quote!(let #mutability #local = #value;)
    });
    let unknown_tagged_fields = if cx.is_never_flexible() {
        quote!(Vec::new())
    } else {
        let tagged = tagged_fields(s);
        let arms = tagged.iter().map(|field| {
            let local = local_ident(field);
            let name = &field.name;
            let tag = field.tag.expect("tagged");
            let read = read_field(cx, field, field.tagged_versions);
            let body = quote! {
                #local = #read.map_err(|e| e.at(#name))?;
                Ok(true)
            };
            let body = cx.when(field.tagged_versions).branch(
                body,
                quote!(Err(d.error(#k::DecodeErrorKind::TagNotValidForVersion(#tag)))),
            );
            quote!(#tag => { #body })
        });
        let read_known = if tagged.is_empty() {
            quote!(|_, _| Ok(false))
        } else {
            quote! {
                |d, tag| match tag {
                    #(#arms)*
                    _ => Ok(false),
                }
            }
        };
        cx.when(cx.message.flexible_versions).branch(
            quote!(d.read_tagged_fields(#read_known)?),
            quote!(Vec::new()),
        )
    };
    let inits = s.fields.iter().map(|field| {
        let ident = field_ident(field);
        let local = local_ident(field);
        if ident == local {
            quote!(#ident,)
        } else {
            quote!(#ident: #local,)
        }
    });
    quote! {
        fn decode_fields(
            d: &mut #k::wire::Decoder<'_>,
            version: i16,
        ) -> Result<Self, #k::DecodeError> {
            #flexible
            #(#locals)*
            let unknown_tagged_fields = #unknown_tagged_fields;
            Ok(Self {
                #(#inits)*
                unknown_tagged_fields,
            })
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding

fn put_fixed(cx: &Context<'_>, p: Primitive, value: TokenStream) -> TokenStream {
    let k = &cx.krate;
    match p {
        Primitive::Bool => quote!(#k::wire::put_bool(buf, #value)),
        Primitive::Int8 => quote!(buf.put_i8(#value)),
        Primitive::Int16 => quote!(buf.put_i16(#value)),
        Primitive::Uint16 => quote!(buf.put_u16(#value)),
        Primitive::Int32 => quote!(buf.put_i32(#value)),
        Primitive::Uint32 => quote!(buf.put_u32(#value)),
        Primitive::Int64 => quote!(buf.put_i64(#value)),
        Primitive::Float64 => quote!(#k::wire::put_f64(buf, #value)),
        Primitive::Uuid => quote!(#k::wire::put_uuid(buf, &#value)),
        _ => unreachable!("not fixed-width"),
    }
}

/// `Result<(), EncodeError>` writing one value `value` (a reference for non-Copy types).
fn write_value(
    cx: &Context<'_>,
    ty: &FieldType,
    value: TokenStream,
    compact: &TokenStream,
) -> TokenStream {
    let k = &cx.krate;
    match ty {
        FieldType::Primitive(Primitive::String) => {
            quote!(#k::wire::put_string(buf, #value, #compact))
        }
        FieldType::Primitive(Primitive::Bytes | Primitive::Records) => {
            quote!(#k::wire::put_bytes(buf, #value, #compact))
        }
        FieldType::Primitive(p) => {
            // `value` is a reference: a UUID is passed on as is, numbers are copied out.
            let put = if *p == Primitive::Uuid {
                quote!(#k::wire::put_uuid(buf, #value))
            } else {
                put_fixed(cx, *p, quote!(*#value))
            };
            quote!({ #put; Ok(()) })
        }
        FieldType::Struct(_) => quote!(#k::StructCodec::encode_fields(#value, buf, version)),
        FieldType::Array(element) => {
            let element = write_value(cx, element, quote!(element), compact);
            quote!(#k::wire::put_array(buf, #value, #compact, |buf, element| #element))
        }
    }
}

fn write_nullable(
    cx: &Context<'_>,
    field: &Field,
    value: TokenStream,
    compact: &TokenStream,
) -> TokenStream {
    let k = &cx.krate;
    match &field.ty {
        FieldType::Primitive(Primitive::String) => {
            quote!(#k::wire::put_nullable_string(buf, #value, #compact))
        }
        FieldType::Primitive(_) => quote!(#k::wire::put_nullable_bytes(buf, #value, #compact)),
        FieldType::Struct(_) => quote! {
            #k::wire::put_nullable_struct(buf, #value, |buf, value| {
                #k::StructCodec::encode_fields(value, buf, version)
            })
        },
        FieldType::Array(element) => {
            let element = write_value(cx, element, quote!(element), compact);
            quote!(#k::wire::put_nullable_array(buf, #value, #compact, |buf, element| #element))
        }
    }
}

/// How to borrow an `Option` field's inner value.
fn borrow_option(field: &Field) -> TokenStream {
    let ident = field_ident(field);
    match &field.ty {
        FieldType::Struct(_) => quote!(self.#ident.as_ref()),
        _ => quote!(self.#ident.as_deref()),
    }
}

/// A statement writing the field within `scope` versions; fallible writes add the field
/// name to the error path.
fn write_field(cx: &Context<'_>, field: &Field, scope: Versions) -> TokenStream {
    let name = &field.name;
    if let Some(p) = field.ty.primitive().filter(|p| p.fixed_width().is_some()) {
        let ident = field_ident(field);
        let put = put_fixed(cx, p, quote!(self.#ident));
        return quote!(#put;);
    }
    let write = write_fallible(cx, field, scope);
    quote!(#write.map_err(|e| e.at(#name))?;)
}

/// `Result<(), EncodeError>` writing a field that is not a fixed-width primitive.
fn write_fallible(cx: &Context<'_>, field: &Field, scope: Versions) -> TokenStream {
    let k = &cx.krate;
    let ident = field_ident(field);
    let compact = cx.compact(field);
    if !field.is_optional() {
        return write_value(cx, &field.ty, quote!(&self.#ident), &compact);
    }
    let borrowed = borrow_option(field);
    let nullable = write_nullable(cx, field, borrowed.clone(), &compact);
    let non_null = write_value(cx, &field.ty, quote!(value), &compact);
    let non_null = quote!(#k::wire::non_null(#borrowed).and_then(|value| #non_null));
    match cx.when_within(field.nullable_versions, scope) {
        Cond::Always => nullable,
        Cond::Never => non_null,
        Cond::Expr(e, _) => quote!(if #e { #nullable } else { #non_null }),
    }
}

/// `usize`: bytes of one value.
fn value_len(
    cx: &Context<'_>,
    ty: &FieldType,
    value: TokenStream,
    compact: &TokenStream,
) -> TokenStream {
    let k = &cx.krate;
    match ty {
        FieldType::Primitive(Primitive::String) => {
            quote!(#k::wire::string_len(#value, #compact))
        }
        FieldType::Primitive(Primitive::Bytes | Primitive::Records) => {
            quote!(#k::wire::bytes_len(#value, #compact))
        }
        FieldType::Primitive(p) => {
            let width = p.fixed_width().expect("fixed width");
            quote!(#width)
        }
        FieldType::Struct(_) => quote!(#k::StructCodec::fields_len(#value, version)),
        FieldType::Array(element) => {
            if let Some(width) = element.primitive().and_then(Primitive::fixed_width) {
                quote!(#k::wire::fixed_array_len(#value, #compact, #width))
            } else {
                let element = value_len(cx, element, quote!(element), compact);
                quote!(#k::wire::array_len(#value, #compact, |element| #element))
            }
        }
    }
}

fn field_len(cx: &Context<'_>, field: &Field, scope: Versions) -> TokenStream {
    let k = &cx.krate;
    let ident = field_ident(field);
    let compact = cx.compact(field);
    if !field.is_optional() {
        return value_len(cx, &field.ty, quote!(&self.#ident), &compact);
    }
    let borrowed = borrow_option(field);
    let inner = value_len(cx, &field.ty, quote!(value), &compact);
    match &field.ty {
        FieldType::Primitive(Primitive::String) => {
            quote!(#k::wire::nullable_string_len(#borrowed, #compact))
        }
        FieldType::Primitive(_) => quote!(#k::wire::nullable_bytes_len(#borrowed, #compact)),
        FieldType::Array(_) => quote! {
            #borrowed.map_or(#k::wire::array_prefix_len(0, #compact), |value| #inner)
        },
        // A nullable struct carries a one-byte marker; a non-nullable one does not.
        FieldType::Struct(_) => cx.when_within(field.nullable_versions, scope).branch(
            quote!(#borrowed.map_or(1, |value| 1 + #inner)),
            quote!(#borrowed.map_or(0, |value| #inner)),
        ),
    }
}

pub(crate) fn emit_encode(cx: &Context<'_>, s: &Struct) -> TokenStream {
    let k = &cx.krate;
    let flexible = cx.flexible_binding();
    let positional = s.fields.iter().map(|field| {
        let name = &field.name;
        let range = cx.positional(field);
        let write = write_field(cx, field, range);
        let absent = if field.ignorable {
            quote!()
        } else {
            // Outside the positional versions: a plain field is absent there; a tagged one is
            // absent only where it is not tagged either.
            let absent_here = if field.tag.is_none() {
                Cond::Always
            } else {
                cx.when(field.versions).not()
            };
            let test = absent_here.and(differs_from_default(cx, field));
            match test.to_string().as_str() {
                "false" => quote!(),
                _ => quote! {
                    if #test {
                        return Err(#k::EncodeError::new(#k::EncodeErrorKind::FieldNotInVersion).at(#name));
                    }
                },
            }
        };
        match cx.when(range) {
            // Present everywhere the field is positional; absent elsewhere (maybe tagged).
            Cond::Expr(e, _) if !absent.is_empty() => quote!(if #e { #write } else #absent),
            cond => cond.branch(write, absent),
        }
    });
    let tagged = tagged_fields(s);
    let known_tags = s.known_tags;
    let mutability = if tagged.is_empty() {
        quote!()
    } else {
        quote!(mut)
    };
    let tagged_section = if cx.is_never_flexible() {
        quote! {
            if !self.unknown_tagged_fields.is_empty() {
                return Err(#k::EncodeError::new(#k::EncodeErrorKind::TaggedFieldsNotFlexible));
            }
        }
    } else {
        let counts = tagged.iter().map(|field| {
            let differs = differs_from_default(cx, field);
            let test = cx.when(field.tagged_versions).and(differs);
            quote!(if #test { tagged_count += 1; })
        });
        let writes = tagged.iter().map(|field| {
            let tag = field.tag.expect("tagged");
            let differs = differs_from_default(cx, field);
            let test = cx.when(field.tagged_versions).and(differs);
            let len = field_len(cx, field, field.tagged_versions);
            let write = write_field(cx, field, field.tagged_versions);
            quote! {
                if #test {
                    #k::wire::put_unsigned_varint(buf, #tag);
                    #k::wire::put_length_varint(buf, #len)?;
                    #write
                }
            }
        });
        quote! {
            if flexible {
                let #mutability tagged_count = self.unknown_tagged_fields.len();
                #(#counts)*
                #k::wire::put_length_varint(buf, tagged_count)?;
                #(#writes)*
                #k::wire::put_raw_tagged_fields(buf, &self.unknown_tagged_fields, #known_tags)?;
            } else if !self.unknown_tagged_fields.is_empty() {
                return Err(#k::EncodeError::new(#k::EncodeErrorKind::TaggedFieldsNotFlexible));
            }
        }
    };
    quote! {
        fn encode_fields(
            &self,
            buf: &mut impl #k::bytes::BufMut,
            version: i16,
        ) -> Result<(), #k::EncodeError> {
            #flexible
            #(#positional)*
            #tagged_section
            Ok(())
        }
    }
}

pub(crate) fn emit_len(cx: &Context<'_>, s: &Struct) -> TokenStream {
    let k = &cx.krate;
    let flexible = cx.flexible_binding();
    let positional = s.fields.iter().map(|field| {
        let range = cx.positional(field);
        let len = field_len(cx, field, range);
        cx.when(range).guard(quote!(len += #len;))
    });
    let mutability = if s.known_tags == 0 {
        quote!()
    } else {
        quote!(mut)
    };
    let tagged_section = if cx.is_never_flexible() {
        quote!()
    } else {
        let tagged = tagged_fields(s).into_iter().map(|field| {
            let tag = field.tag.expect("tagged");
            let differs = differs_from_default(cx, field);
            let test = cx.when(field.tagged_versions).and(differs);
            let len = field_len(cx, field, field.tagged_versions);
            quote! {
                if #test {
                    tagged_count += 1;
                    tagged_len += #k::wire::tagged_field_len(#tag, #len);
                }
            }
        });
        quote! {
            if flexible {
                let #mutability tagged_count = self.unknown_tagged_fields.len();
                let #mutability tagged_len = #k::wire::raw_tagged_fields_len(&self.unknown_tagged_fields);
                #(#tagged)*
                len += #k::wire::unsigned_varint_len(tagged_count as u32) + tagged_len;
            }
        }
    };
    quote! {
        fn fields_len(&self, version: i16) -> usize {
            #flexible
            let mut len = 0;
            #(#positional)*
            #tagged_section
            len
        }
    }
}
