//! `walk` (every field handed to a visitor in wire order) against the owned decoder: a visitor
//! that writes what it is handed as Kafka's JSON form ([`JsonSink`]), compared with the JSON
//! of the owned decode of the same bytes (`Message::to_json`, the generated writer of the
//! owned types): the same value for every field the version has, nested structs and arrays
//! included. Tagged fields come at the end of their struct's fields in a walk and in schema
//! order in the owned JSON; a JSON object does not keep its keys' order, so the comparison
//! does not see it. Unknown tagged fields, which the JSON form leaves out, are compared one by
//! one, by where they are (the path of field names and array indexes to their struct), tag
//! and bytes, against the owned decode's `unknown_tagged_fields` of every struct, read from
//! the owned message's derived `Debug` form ([`owned_unknown`]).

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
    /// Where the visitor is: each open struct's or array's label (a field name, normalised,
    /// or an element's index), with the next element's index for an array.
    path: Vec<(String, Option<usize>)>,
    /// The unknown tagged fields handed over, as [`unknown_entry`] writes them.
    unknown_tagged: Vec<String>,
}

/// A field name as both sides compare it: the schema's `PartitionData` and the owned
/// struct's `partition_data` (or a raw identifier, `r#type`) are `partitiondata`.
fn normalise(field: &str) -> String {
    let field = field.strip_prefix("r#").unwrap_or(field);
    field
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// One unknown tagged field where it was found: `path tag data`, the data as `Bytes`'s
/// `Debug` writes it.
fn unknown_entry<'p>(path: impl Iterator<Item = &'p str>, tag: &str, data: &str) -> String {
    let path: Vec<&str> = path.collect();
    format!("/{} tag {tag} data {data}", path.join("/"))
}

/// The owned message's unknown tagged fields, each as [`unknown_entry`] writes it, read from
/// its pretty `Debug` form (derived for every generated struct: one field per line, the
/// struct's `unknown_tagged_fields` a list of `RawTaggedField { tag, data }`). Each line that
/// opens a struct, list or `Some(` is labelled by its field name or, in a list, by its index.
fn owned_unknown(debug: &str) -> Result<Vec<String>, String> {
    struct Open {
        label: Option<String>,
        list: bool,
        next: usize,
    }
    let is_ident = |name: &str| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '#')
    };
    let mut open: Vec<Open> = Vec::new();
    let mut found = Vec::new();
    let mut tag: Option<String> = None;
    for line in debug.lines() {
        let text = line.trim();
        let text = text.strip_suffix(',').unwrap_or(text);
        if matches!(text, "}" | "]" | ")") {
            open.pop()
                .ok_or_else(|| format!("unbalanced Debug form at {line:?}"))?;
            continue;
        }
        let (name, rest) = match text.split_once(": ") {
            Some((name, rest)) if is_ident(name) => (Some(name), rest),
            _ => (None, text),
        };
        let depth = open.len();
        // Inside one of a struct's unknown tagged fields: its tag, then its data.
        if depth >= 2 && open[depth - 2].label.as_deref() == Some("unknowntaggedfields") {
            match name {
                Some("tag") => tag = Some(rest.to_string()),
                Some("data") => {
                    let tag = tag.take().ok_or("a tagged field's data before its tag")?;
                    let path = open[..depth - 2].iter().filter_map(|o| o.label.as_deref());
                    found.push(unknown_entry(path, &tag, rest));
                }
                _ => return Err(format!("unexpected line in a tagged field: {line:?}")),
            }
            continue;
        }
        let label = match (name, open.last_mut()) {
            (Some(name), _) => Some(normalise(name)),
            (None, Some(list)) if list.list => {
                list.next += 1;
                Some((list.next - 1).to_string())
            }
            (None, _) => None,
        };
        if let Some(last @ ('{' | '[' | '(')) = rest.chars().last() {
            open.push(Open {
                label,
                list: last == '[',
                next: 0,
            });
        }
    }
    if !open.is_empty() {
        return Err("unbalanced Debug form at its end".into());
    }
    Ok(found)
}

impl ToJson {
    fn new() -> Self {
        let mut out = ValueSink::new();
        out.begin_object();
        ToJson {
            out,
            in_array: vec![false],
            not_finite: false,
            path: Vec::new(),
            unknown_tagged: Vec::new(),
        }
    }

    /// Opens a struct or an array named `field`: labelled by its index in an open array.
    fn open(&mut self, field: &str, array: bool) {
        let label = match self.path.last_mut() {
            Some((_, Some(next))) => {
                *next += 1;
                (*next - 1).to_string()
            }
            _ => normalise(field),
        };
        self.path.push((label, array.then_some(0)));
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
        self.open(field, true);
    }
    fn end_array(&mut self, _: &'static str) {
        self.in_array.pop();
        self.out.end_array();
        self.path.pop();
    }
    fn begin_struct(&mut self, field: &'static str) {
        self.key(field);
        self.out.begin_object();
        self.in_array.push(false);
        self.open(field, false);
    }
    fn end_struct(&mut self, _: &'static str) {
        self.in_array.pop();
        self.out.end_object();
        self.path.pop();
    }
    fn null(&mut self, field: &'static str) {
        self.key(field);
        self.out.null();
    }
    fn unknown_tagged(&mut self, tag: u32, value: &'a [u8]) {
        let data = format!("{:?}", Bytes::copy_from_slice(value));
        let path = self.path.iter().map(|(label, _)| label.as_str());
        let entry = unknown_entry(path, &tag.to_string(), &data);
        self.unknown_tagged.push(entry);
    }
}

/// What a walk of `view` handed its visitor, as JSON, and its unknown tagged fields.
fn walk<'a, V: StructView<'a>>(view: &V) -> (<V::Mode as kafka_codec::ViewMode>::Out<()>, ToJson) {
    let mut json = ToJson::new();
    let out = view.walk_struct(&mut json);
    (out, json)
}

/// The JSON of the owned message, `None` where JSON cannot hold it (a float that is not
/// finite), and its unknown tagged fields (see [`owned_unknown`]), sorted.
fn owned_json<M: MessageCodec + Viewable + 'static>(
    owned: &M,
    version: i16,
) -> Result<Option<(Value, Vec<String>)>, String> {
    let Ok(json) = owned.to_json(version) else {
        return Ok(None);
    };
    // Most messages have none: the Debug form is read only when clearing them changes it.
    let mut cleared = owned.clone();
    cleared.clear_unknown_tagged_fields();
    let mut unknown = if &cleared == owned {
        Vec::new()
    } else {
        owned_unknown(&format!("{owned:#?}"))?
    };
    unknown.sort();
    Ok(Some((json, unknown)))
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
    let compare = |what: &str, mut json: ToJson| -> Result<(), String> {
        let Some((expected, unknown)) = &expected else {
            return Ok(());
        };
        if json.not_finite {
            return Ok(());
        }
        let mut got_unknown = std::mem::take(&mut json.unknown_tagged);
        got_unknown.sort();
        let got = json.finish();
        if &got != expected || got_unknown != *unknown {
            return Err(format!(
                "{what} walk handed over {got} (unknown tagged: {got_unknown:?}), the owned decode is {expected} ({unknown:?})"
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
