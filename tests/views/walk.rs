//! `walk` (every field handed to a visitor in wire order) against the owned decoder: a visitor
//! that writes what it is handed as Kafka's JSON form ([`JsonSink`]), compared with the JSON
//! of the owned decode of the same bytes (`Message::to_json`, the generated writer of the
//! owned types): the same value for every field the version has, nested structs and arrays
//! included. Tagged fields come at the end of their struct's fields in a walk and in schema
//! order in the owned JSON; a JSON object does not keep its keys' order, so the comparison
//! does not see it. Unknown tagged fields, which the JSON form leaves out, are compared by
//! count with the owned message re-encoded and walked again (the same bytes, the same count).

use bytes::Bytes;
use kafka_codec::json::{JsonSink, ValueSink};
use kafka_codec::{
    view_message, DecodeError, LazyMessage, MessageCodec, StructView, Uuid, ViewArray, ViewScalar,
    ViewVisitor, Viewable,
};
use serde_json::Value;

/// Writes every value it is handed to a [`ValueSink`] as the owned types' JSON writer does.
struct ToJson {
    out: ValueSink,
    /// Whether each open container is an array (its values take no key), innermost last.
    in_array: Vec<bool>,
    /// A `float64` that JSON cannot hold: the owned writer refuses the message.
    not_finite: bool,
    unknown_tagged: usize,
}

impl ToJson {
    fn new() -> Self {
        let mut out = ValueSink::new();
        out.begin_object();
        ToJson {
            out,
            in_array: vec![false],
            not_finite: false,
            unknown_tagged: 0,
        }
    }

    fn key(&mut self, field: &str) {
        if self.in_array.last() == Some(&false) {
            let mut chars = field.chars();
            let key = match chars.next() {
                Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                None => String::new(),
            };
            self.out.key(&key);
        }
    }

    fn finish(mut self) -> Value {
        self.out.end_object();
        self.out.finish()
    }
}

impl<'a> ViewVisitor<'a> for ToJson {
    fn bool(&mut self, field: &'static str, value: bool) {
        self.key(field);
        self.out.bool(value);
    }
    fn i8(&mut self, field: &'static str, value: i8) {
        self.key(field);
        self.out.i64(value.into());
    }
    fn i16(&mut self, field: &'static str, value: i16) {
        self.key(field);
        self.out.i64(value.into());
    }
    fn u16(&mut self, field: &'static str, value: u16) {
        self.key(field);
        self.out.u64(value.into());
    }
    fn i32(&mut self, field: &'static str, value: i32) {
        self.key(field);
        self.out.i64(value.into());
    }
    fn u32(&mut self, field: &'static str, value: u32) {
        self.key(field);
        self.out.u64(value.into());
    }
    fn i64(&mut self, field: &'static str, value: i64) {
        self.key(field);
        self.out.i64(value);
    }
    fn f64(&mut self, field: &'static str, value: f64) {
        self.key(field);
        self.not_finite |= !value.is_finite();
        self.out.f64(if value.is_finite() { value } else { 0.0 });
    }
    fn uuid(&mut self, field: &'static str, value: Uuid) {
        self.key(field);
        self.out.uuid(&value);
    }
    fn string(&mut self, field: &'static str, value: Option<&'a str>) {
        self.key(field);
        match value {
            Some(value) => self.out.str(value),
            None => self.out.null(),
        }
    }
    fn bytes(&mut self, field: &'static str, value: Option<&'a [u8]>) {
        self.key(field);
        match value {
            Some(value) => self.out.bytes(value),
            None => self.out.null(),
        }
    }
    fn fixed_array<T: ViewScalar>(
        &mut self,
        field: &'static str,
        values: Option<ViewArray<'a, T>>,
    ) {
        let Some(values) = values else {
            self.key(field);
            self.out.null();
            return;
        };
        self.begin_array(field, values.len());
        for value in values {
            value.visit(field, self);
        }
        self.end_array(field);
    }
    fn begin_array(&mut self, field: &'static str, _: usize) {
        self.key(field);
        self.out.begin_array();
        self.in_array.push(true);
    }
    fn end_array(&mut self, _: &'static str) {
        self.in_array.pop();
        self.out.end_array();
    }
    fn begin_struct(&mut self, field: &'static str) {
        self.key(field);
        self.out.begin_object();
        self.in_array.push(false);
    }
    fn end_struct(&mut self, _: &'static str) {
        self.in_array.pop();
        self.out.end_object();
    }
    fn null(&mut self, field: &'static str) {
        self.key(field);
        self.out.null();
    }
    fn unknown_tagged(&mut self, _: u32, _: &'a [u8]) {
        self.unknown_tagged += 1;
    }
}

/// What a walk of `view` handed its visitor, as JSON, and how many unknown tagged fields.
fn walk<'a, V: StructView<'a>>(view: &V) -> (<V::Mode as kafka_codec::ViewMode>::Out<()>, ToJson) {
    let mut json = ToJson::new();
    let out = view.walk_struct(&mut json);
    (out, json)
}

/// The JSON of the owned message, `None` where JSON cannot hold it (a float that is not
/// finite), and its unknown tagged fields counted by a checked walk of its own encoding.
fn owned_json<M: MessageCodec + Viewable + 'static>(
    owned: &M,
    version: i16,
) -> Result<Option<(Value, usize)>, String> {
    let Ok(json) = owned.to_json(version) else {
        return Ok(None);
    };
    let bytes = Bytes::from(
        owned
            .encode_to_vec(version)
            .map_err(|e| format!("re-encode: {e}"))?,
    );
    let view = view_message::<M::View<'_>>(&bytes, version)
        .map_err(|e| format!("the view of the re-encoded message: {e}"))?;
    let ((), walked) = walk(&view);
    Ok(Some((json, walked.unknown_tagged)))
}

/// The checked and the lazy view's walks of `bytes` at `version` against the owned decode:
/// what the owned decoder accepts, both walks hand over as the same JSON (with `json`: the
/// JSON costs most of the check, so most hostile variants check the outcome alone); a lazy
/// walk's error is the owned decoder's; `must_fail` (bytes cut short) requires an error.
pub fn check<M: MessageCodec + Viewable + 'static>(
    bytes: &Bytes,
    version: i16,
    must_fail: bool,
    json: bool,
) -> Result<(), String> {
    let owned = M::decode(&mut bytes.clone(), version);
    let expected = match &owned {
        Ok(owned) if json => owned_json(owned, version)?,
        _ => None,
    };
    let compare = |what: &str, json: ToJson| -> Result<(), String> {
        let Some((expected, unknown)) = &expected else {
            return Ok(());
        };
        if json.not_finite {
            return Ok(());
        }
        let count = json.unknown_tagged;
        let got = json.finish();
        if &got != expected || count != *unknown {
            return Err(format!(
                "{what} walk handed over {got} ({count} unknown tagged), the owned decode is {expected} ({unknown})"
            ));
        }
        Ok(())
    };
    if let Ok(view) = view_message::<M::View<'_>>(bytes, version) {
        if owned.is_err() {
            return Err(format!(
                "the checked view accepted what the owned decoder refused: {owned:?}"
            ));
        }
        let ((), json) = walk(&view);
        compare("checked", json)?;
    }
    let lazy: Result<ToJson, DecodeError> =
        LazyMessage::new::<M>(bytes, version).and_then(|message| {
            let view = message.view::<M::LazyView<'_>>().expect("its own view");
            let (out, json) = walk(&view);
            out.map(|()| json)
        });
    match (lazy, &owned) {
        (Ok(json), Ok(_)) => compare("lazy", json),
        (Err(lazy), Err(owned)) if &lazy == owned => Ok(()),
        (Ok(_), Err(_)) if !must_fail => Ok(()),
        (lazy, owned) => Err(format!("lazy walk {:?}, owned {owned:?}", lazy.map(|_| ()))),
    }
}

/// The `views` fuzz target's finding, kept: a tagged field given twice, the second copy too
/// short for its type. The owned decoder refuses the frame; a lazy walk reads both copies and
/// must refuse it with the owned decoder's error (a lazy accessor reads the first copy only and
/// answers from it), and the checked view is refused when made.
#[test]
fn a_tagged_field_given_twice_is_refused_by_the_walk_as_by_the_owned_decoder() {
    use kafka_codec::messages::ApiVersionsResponse;
    use kafka_codec::Message;

    let message = ApiVersionsResponse::default().with_throttle_time_ms(9);
    let mut bytes = message.encode_to_vec(3).unwrap();
    // The body ends with its empty tagged section (a count of zero): two copies of tag 1
    // (FinalizedFeaturesEpoch, an int64) instead, the first whole, the second two bytes long.
    assert_eq!(bytes.pop(), Some(0));
    bytes.extend_from_slice(&[2, 1, 8]);
    bytes.extend_from_slice(&5i64.to_be_bytes());
    bytes.extend_from_slice(&[1, 2, 0, 0]);
    let bytes = Bytes::from(bytes);
    let owned = ApiVersionsResponse::decode(&mut bytes.clone(), 3);
    let error = owned
        .as_ref()
        .expect_err("the owned decoder accepted it")
        .to_string();
    assert!(error.contains("tagged field 1 appears twice"), "{error}");
    check::<ApiVersionsResponse>(&bytes, 3, true, true).unwrap();
    let view = view_message::<<ApiVersionsResponse as Viewable>::View<'_>>(&bytes, 3);
    assert_eq!(view.err(), owned.err());
}
