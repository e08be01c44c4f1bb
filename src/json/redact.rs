//! Secrets kept out of logs: a [`JsonSink`] adapter that replaces every secret value of a
//! message's JSON with a marker giving its length, driven by one table of secret fields.
//!
//! ```
//! use kafka_codec::json::redact::{Direction, Form, Redactor};
//! use kafka_codec::json::{JsonOptions, JsonWriter};
//! use kafka_codec::messages::SaslAuthenticateRequest;
//! use kafka_codec::{ApiKey, RequestFrame};
//!
//! let body = SaslAuthenticateRequest::default()
//!     .with_auth_bytes(b"\0alice\0s3cr3t-password".to_vec().into());
//! let frame = RequestFrame::new(body, 2, 7);
//! let mut text = Vec::new();
//! let mut writer = JsonWriter::compact(&mut text);
//! let mut redactor = Redactor::new(ApiKey::SaslAuthenticate, Direction::Request, Form::Frame, &mut writer);
//! frame.write_json(&JsonOptions::default(), &mut redactor).unwrap();
//! let redacted = redactor.into_redacted();
//! writer.finish().unwrap();
//! let text = String::from_utf8(text).unwrap();
//! assert!(text.ends_with(r#""body":{"authBytes":"<redacted: 22 bytes>"}}"#));
//! assert_eq!(redacted, ["body.authBytes"]);
//! ```
//!
//! **The table.** [`SECRETS`] names each field that can carry a secret by API, direction and
//! path in the JSON's own keys (`resources[].configs[].value`), with the reason and the
//! condition ([`When`]): always, or for config values only when the config's name is a secret
//! one ([`is_secret_config_name`]: Kafka's PASSWORD-typed configs, from Kafka's jars, under any
//! prefix, and a fallback on the name's words), or for records only in KRaft's metadata log.
//! [`NOT_SECRETS`] lists the fields reviewed and found harmless, with their reasons; a test
//! holds every schema's `bytes` and `records` fields, and every field whose name suggests a
//! credential, to one list or the other.
//!
//! **The marker.** A secret string becomes `"<redacted: N bytes>"` (its UTF-8 length), and
//! secret `bytes` or `records` the same with their raw length, not their base64's (also when a
//! writer hands them over as base64 text). A value that is neither, such as records that a
//! [`RecordsJson`](super::RecordsJson) hook shows as a structure, becomes
//! `"<redacted: N bytes of JSON>"`, the length of its compact JSON text. A marker is still a
//! JSON string, and its `<`, `:` and spaces are in neither base64 alphabet. `null` stays `null`
//! and is not reported: there is nothing to hide. An empty value is a marker of 0 bytes, so
//! that a secret field shows either `null` or a marker, never a value. [`marker`] makes the
//! same text for secrets outside Kafka frames (the raw SASL tokens after a SaslHandshake v0).
//!
//! **Order.** A config value's condition needs the `name` beside it, which Kafka's schemas
//! (and so every writer of this crate) put first; if the value comes first anyway, or the name
//! is not a string, the value is redacted. The same holds for the topic of Fetch records.
//!
//! **Cost.** [`has_secrets`] says whether an API and direction have any entry; most have
//! none, and [`write_redacted`] then writes straight to the sink. Otherwise the adapter follows
//! only the parts of the message that lead to a secret field and passes every other subtree
//! through at the cost of a depth counter (measured in `benches/README.md`).

use super::JsonSink;
use crate::wire::Uuid;
use crate::ApiKey;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io;
use std::sync::OnceLock;

mod configs;
mod table;

pub use configs::{is_secret_config_name, password_configs};
pub use table::{NOT_SECRETS, SECRETS};

/// Which message of an API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// The request body.
    Request,
    /// The response body.
    Response,
}

/// Where the message body is in the JSON written through a [`Redactor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// The frame form, `{"header": …, "body": …}` (with `apiKey` and `apiVersion` first for a
    /// response), as `RequestFrame::write_json` and `ResponseFrame::write_json` write it.
    /// Reported paths start with `body.`.
    Frame,
    /// The body alone, as `Message::write_json_with` writes it.
    Body,
}

/// One field that can carry a secret.
#[derive(Debug, Clone, Copy)]
pub struct Secret {
    /// The API.
    pub api: ApiKey,
    /// Request or response.
    pub direction: Direction,
    /// The path from the body in the JSON's keys; `[]` stands for every element of an array:
    /// `resources[].configs[].value`.
    pub path: &'static str,
    /// The field's type in the schema.
    pub ty: Type,
    /// When its value is redacted.
    pub when: When,
    /// Why it is a secret.
    pub reason: &'static str,
}

/// The schema type of a secret field: what its marker's length counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// `string`: UTF-8 bytes.
    String,
    /// `bytes`: raw bytes, also when they arrive as base64 text.
    Bytes,
    /// `records`: raw bytes, also when they arrive as base64 text.
    Records,
}

/// When a secret field's value is redacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Always.
    Always,
    /// When the string field `key` of the same object names a secret config
    /// ([`is_secret_config_name`]), or was not seen before the value, or was not a string.
    SecretConfigName {
        /// The key of the config's name: `name`, or `key` in Streams' key-value pairs.
        key: &'static str,
    },
    /// Records of KRaft's metadata log: when the object at the path prefix `element` has
    /// `topic` `__cluster_metadata` or `topicId` equal to Kafka's metadata topic id
    /// ([`METADATA_TOPIC_ID`]), or has neither before the value.
    MetadataTopic {
        /// The array element that names the topic, a prefix of the path: `responses[]`.
        element: &'static str,
    },
}

/// Fields reviewed and found not to be secrets, and why.
#[derive(Debug, Clone, Copy)]
pub struct NotSecret {
    /// Why none of them is a secret.
    pub reason: &'static str,
    /// Each field as (schema name, path in the JSON's keys).
    pub fields: &'static [(&'static str, &'static str)],
}

/// The name of KRaft's metadata log.
pub const METADATA_TOPIC: &str = "__cluster_metadata";

/// The topic id of KRaft's metadata log (Kafka's `Uuid.METADATA_TOPIC_ID`, the UUID 1).
pub const METADATA_TOPIC_ID: Uuid =
    Uuid::from_bytes([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);

/// [`METADATA_TOPIC_ID`] in Kafka's text form.
const METADATA_TOPIC_ID_TEXT: &str = "AAAAAAAAAAAAAAAAAAAAAQ";

/// The marker that stands for a secret string of `len` UTF-8 bytes or secret bytes of `len`
/// bytes: `<redacted: 22 bytes>`.
pub fn marker(len: usize) -> String {
    format!("<redacted: {len} bytes>")
}

/// The marker that stands for any other secret value, whose compact JSON text is `len` bytes
/// long: `<redacted: 120 bytes of JSON>`.
pub fn json_marker(len: usize) -> String {
    format!("<redacted: {len} bytes of JSON>")
}

/// The entries of [`SECRETS`] for one API and direction.
pub fn secrets(api: ApiKey, direction: Direction) -> impl Iterator<Item = &'static Secret> {
    SECRETS
        .iter()
        .filter(move |secret| secret.api == api && secret.direction == direction)
}

/// Whether the API's request or response has any secret field: if not, its JSON needs no
/// [`Redactor`].
pub fn has_secrets(api: ApiKey, direction: Direction) -> bool {
    compiled().contains_key(&(api, direction))
}

/// Writes a message's JSON to `out` through a [`Redactor`] if its API and direction have
/// secret fields, else straight to `out`; returns the paths it redacted.
pub fn write_redacted<E>(
    api: ApiKey,
    direction: Direction,
    form: Form,
    out: &mut dyn JsonSink,
    write: impl FnOnce(&mut dyn JsonSink) -> Result<(), E>,
) -> Result<Vec<String>, E> {
    if !has_secrets(api, direction) {
        write(out)?;
        return Ok(Vec::new());
    }
    let mut redactor = Redactor::new(api, direction, form, out);
    write(&mut redactor)?;
    Ok(redactor.into_redacted())
}

/// One step of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Key(&'static str),
    Element,
}

/// A [`Secret`] made ready to match for one [`Form`]: its path as steps from the root of what
/// the redactor sees (`body` first in the frame form), its condition at a depth.
#[derive(Debug)]
struct Rule {
    steps: Vec<Step>,
    when: Condition,
    /// `bytes` or `records`: text at this path is base64 of the value.
    base64: bool,
}

/// A [`When`] with the depth of the object it looks at (the number of steps to it).
#[derive(Debug, Clone, Copy)]
enum Condition {
    Always,
    ConfigName { key: &'static str, at: usize },
    MetadataTopic { at: usize },
}

fn parse_path(path: &'static str) -> Vec<Step> {
    let mut steps = Vec::new();
    for part in path.split('.').filter(|part| !part.is_empty()) {
        let mut key = part;
        let mut elements = 0;
        while let Some(rest) = key.strip_suffix("[]") {
            key = rest;
            elements += 1;
        }
        if !key.is_empty() {
            steps.push(Step::Key(key));
        }
        steps.extend(std::iter::repeat_n(Step::Element, elements));
    }
    steps
}

/// Rule masks are `u32`s: at most this many entries per API and direction (a test holds the
/// table to it).
const MAX_RULES: usize = 32;

/// The rules of each API and direction, for the body form and the frame form.
type Compiled = HashMap<(ApiKey, Direction), [Vec<Rule>; 2]>;

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let mut map = Compiled::new();
        for secret in SECRETS {
            let forms = map.entry((secret.api, secret.direction)).or_default();
            for (form, rules) in forms.iter_mut().enumerate() {
                if rules.len() == MAX_RULES {
                    continue;
                }
                // The frame form (1) has `body` before the body's steps.
                let mut steps = vec![Step::Key("body"); form];
                steps.extend(parse_path(secret.path));
                let when = match secret.when {
                    When::Always => Condition::Always,
                    When::SecretConfigName { key } => Condition::ConfigName {
                        key,
                        at: steps.len() - 1,
                    },
                    When::MetadataTopic { element } => Condition::MetadataTopic {
                        at: form + parse_path(element).len(),
                    },
                };
                rules.push(Rule {
                    steps,
                    when,
                    base64: secret.ty != Type::String,
                });
            }
        }
        map
    })
}

/// What the next scalar value of an object tells a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Capture {
    None,
    ConfigName,
    TopicName,
    TopicId,
}

/// A container on the way to a secret field.
#[derive(Debug)]
struct Level {
    array: bool,
    /// Rules whose paths lead through this container.
    alive: u32,
    /// Rules whose paths lead through the next value (set by each key; fixed for an array).
    next: u32,
    /// The key of the current value (objects), for reported paths.
    key: &'static str,
    /// Values begun so far (arrays); the current one is `count - 1`.
    count: usize,
    capture: Capture,
    /// Whether the config named here is a secret one, once its name was seen.
    config_name: Option<bool>,
    /// Whether the topic named here is KRaft's metadata log, once its topic was seen.
    metadata_topic: Option<bool>,
}

impl Level {
    fn new(array: bool, alive: u32) -> Self {
        Level {
            array,
            alive,
            next: 0,
            key: "",
            count: 0,
            capture: Capture::None,
            config_name: None,
            metadata_topic: None,
        }
    }
}

/// What to do with a value that begins.
enum Begin {
    /// Write it through; nothing below it is secret.
    Pass,
    /// Write it through and follow it: the rules in the mask continue below.
    Follow(u32),
    /// Replace it with a marker; the rule says whether text there is base64.
    Redact { base64: bool },
}

/// A secret container being swallowed: its compact JSON length, for the marker.
#[derive(Debug)]
struct Hidden {
    path: String,
    depth: usize,
    length: JsonLength,
}

/// A [`JsonSink`] that writes the JSON of one message to another sink, with each secret value
/// replaced by a marker (see the [module docs](self)), and lists the paths it replaced.
///
/// It relies only on the token protocol of [`JsonSink`], so it works the same behind the
/// generated writers, a streaming transcoder or a [`Value`]. One `Redactor` per message.
pub struct Redactor<'a> {
    inner: &'a mut dyn JsonSink,
    rules: &'static [Rule],
    /// The containers on the way to a secret field, outermost first; the next value's path
    /// has `stack.len()` steps.
    stack: Vec<Level>,
    /// How deep the writer is inside a subtree that holds no secret.
    passing: usize,
    hidden: Option<Hidden>,
    redacted: Vec<String>,
}

impl std::fmt::Debug for Redactor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("rules", &self.rules.len())
            .field("depth", &(self.stack.len() + self.passing))
            .field("redacted", &self.redacted)
            .finish()
    }
}

impl<'a> Redactor<'a> {
    /// Redacts the secrets of `api`'s requests or responses on their way to `inner`. For an
    /// API without secrets ([`has_secrets`]) it passes everything through; writing straight
    /// to `inner` is cheaper ([`write_redacted`] chooses).
    pub fn new(api: ApiKey, direction: Direction, form: Form, inner: &'a mut dyn JsonSink) -> Self {
        let form = match form {
            Form::Body => 0,
            Form::Frame => 1,
        };
        let rules = compiled()
            .get(&(api, direction))
            .map_or(&[][..], |forms| forms[form].as_slice());
        Redactor {
            inner,
            rules,
            stack: Vec::new(),
            passing: 0,
            hidden: None,
            redacted: Vec::new(),
        }
    }

    /// The concrete paths redacted so far, in order: `body.resources[0].configs[2].value`.
    pub fn redacted(&self) -> &[String] {
        &self.redacted
    }

    /// The concrete paths redacted.
    pub fn into_redacted(self) -> Vec<String> {
        self.redacted
    }

    fn all_rules(&self) -> u32 {
        if self.rules.len() >= 32 {
            u32::MAX
        } else {
            (1u32 << self.rules.len()) - 1
        }
    }

    /// The rules of `mask` whose step `index` is `step`.
    fn matching(&self, mask: u32, index: usize, step: Step) -> u32 {
        let mut out = 0;
        for (i, rule) in self.rules.iter().enumerate() {
            if mask & (1 << i) != 0 && rule.steps.get(index) == Some(&step) {
                out |= 1 << i;
            }
        }
        out
    }

    /// Whether `rule`, which ends at the value now beginning, redacts it.
    fn holds(&self, rule: &Rule) -> bool {
        match rule.when {
            Condition::Always => true,
            Condition::ConfigName { .. } => {
                self.stack.last().and_then(|level| level.config_name) != Some(false)
            }
            Condition::MetadataTopic { at } => {
                self.stack.get(at).and_then(|level| level.metadata_topic) != Some(false)
            }
        }
    }

    /// A value begins: counts it in its array and decides its fate.
    fn begin(&mut self) -> Begin {
        let depth = self.stack.len();
        let candidates = match self.stack.last_mut() {
            None => self.all_rules(),
            Some(level) => {
                if level.array {
                    level.count += 1;
                }
                level.next
            }
        };
        if candidates == 0 {
            return Begin::Pass;
        }
        let mut below = 0;
        for (i, rule) in self.rules.iter().enumerate() {
            if candidates & (1 << i) == 0 {
                continue;
            }
            let len = rule.steps.len();
            if len == depth {
                if self.holds(rule) {
                    return Begin::Redact {
                        base64: rule.base64,
                    };
                }
            } else if len > depth {
                below |= 1 << i;
            }
        }
        if below == 0 {
            Begin::Pass
        } else {
            Begin::Follow(below)
        }
    }

    /// The concrete path of the current value.
    fn path(&self) -> String {
        let mut path = String::new();
        for level in &self.stack {
            if level.array {
                let _ = write!(path, "[{}]", level.count.saturating_sub(1));
            } else {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(level.key);
            }
        }
        path
    }

    fn redact_scalar(&mut self, marker: String) {
        self.redacted.push(self.path());
        self.inner.str(&marker);
    }

    /// A scalar value: written through, or replaced by the marker `redacted` makes (told
    /// whether text there is base64).
    fn scalar(
        &mut self,
        write: impl FnOnce(&mut dyn JsonSink),
        redacted: impl FnOnce(bool) -> String,
    ) {
        if let Some(hidden) = &mut self.hidden {
            write(&mut hidden.length);
            return;
        }
        if self.passing > 0 {
            write(self.inner);
            return;
        }
        match self.begin() {
            Begin::Redact { base64 } => {
                let marker = redacted(base64);
                self.redact_scalar(marker);
            }
            Begin::Pass | Begin::Follow(_) => write(self.inner),
        }
    }

    /// Takes what a scalar just written tells the condition waiting for it.
    fn captured(&mut self) -> Option<(Capture, &mut Level)> {
        if self.hidden.is_some() || self.passing > 0 {
            return None;
        }
        let level = self.stack.last_mut()?;
        let capture = std::mem::replace(&mut level.capture, Capture::None);
        (capture != Capture::None).then_some((capture, level))
    }

    fn begin_container(&mut self, array: bool) {
        if let Some(hidden) = &mut self.hidden {
            hidden.depth += 1;
            if array {
                hidden.length.begin_array();
            } else {
                hidden.length.begin_object();
            }
            return;
        }
        let begin = if self.passing > 0 {
            Begin::Pass
        } else {
            self.begin()
        };
        match begin {
            Begin::Pass => {
                self.passing += 1;
                if array {
                    self.inner.begin_array();
                } else {
                    self.inner.begin_object();
                }
            }
            Begin::Follow(alive) => {
                if array {
                    self.inner.begin_array();
                } else {
                    self.inner.begin_object();
                }
                let mut level = Level::new(array, alive);
                if array {
                    level.next = self.matching(alive, self.stack.len(), Step::Element);
                }
                self.stack.push(level);
            }
            Begin::Redact { .. } => {
                let mut length = JsonLength::default();
                if array {
                    length.begin_array();
                } else {
                    length.begin_object();
                }
                self.hidden = Some(Hidden {
                    path: self.path(),
                    depth: 1,
                    length,
                });
            }
        }
    }

    fn end_container(&mut self, array: bool) {
        if let Some(hidden) = &mut self.hidden {
            if array {
                hidden.length.end_array();
            } else {
                hidden.length.end_object();
            }
            hidden.depth -= 1;
            if hidden.depth == 0 {
                if let Some(hidden) = self.hidden.take() {
                    self.inner.str(&json_marker(hidden.length.len));
                    self.redacted.push(hidden.path);
                }
            }
            return;
        }
        if self.passing > 0 {
            self.passing -= 1;
        } else {
            self.stack.pop();
        }
        if array {
            self.inner.end_array();
        } else {
            self.inner.end_object();
        }
    }
}

impl JsonSink for Redactor<'_> {
    fn begin_object(&mut self) {
        self.begin_container(false);
    }

    fn key(&mut self, key: &str) {
        if let Some(hidden) = &mut self.hidden {
            hidden.length.key(key);
            return;
        }
        self.inner.key(key);
        if self.passing > 0 {
            return;
        }
        let index = self.stack.len().saturating_sub(1);
        let Some(level) = self.stack.last() else {
            return;
        };
        if level.array {
            return;
        }
        let alive = level.alive;
        let mut next = 0;
        let mut step_key = "";
        let mut capture = Capture::None;
        for (i, rule) in self.rules.iter().enumerate() {
            if alive & (1 << i) == 0 {
                continue;
            }
            if let Some(Step::Key(name)) = rule.steps.get(index) {
                if *name == key {
                    next |= 1 << i;
                    step_key = name;
                }
            }
            capture = match rule.when {
                Condition::ConfigName { key: name_key, at } if at == index && key == name_key => {
                    Capture::ConfigName
                }
                Condition::MetadataTopic { at } if at == index => match key {
                    "topic" => Capture::TopicName,
                    "topicId" => Capture::TopicId,
                    _ => capture,
                },
                _ => capture,
            };
        }
        if let Some(level) = self.stack.last_mut() {
            level.next = next;
            level.key = step_key;
            level.capture = capture;
        }
    }

    fn end_object(&mut self) {
        self.end_container(false);
    }

    fn begin_array(&mut self) {
        self.begin_container(true);
    }

    fn end_array(&mut self) {
        self.end_container(true);
    }

    fn null(&mut self) {
        // A secret that is null hides nothing: it stays null and is not reported.
        if let Some(hidden) = &mut self.hidden {
            hidden.length.null();
            return;
        }
        if self.passing == 0 {
            let _ = self.begin();
        }
        self.inner.null();
        self.captured();
    }

    fn bool(&mut self, value: bool) {
        self.scalar(
            |out| out.bool(value),
            |_| json_marker(if value { 4 } else { 5 }),
        );
        self.captured();
    }

    fn i64(&mut self, value: i64) {
        self.scalar(|out| out.i64(value), |_| json_marker(json_len(&value)));
        self.captured();
    }

    fn u64(&mut self, value: u64) {
        self.scalar(|out| out.u64(value), |_| json_marker(json_len(&value)));
        self.captured();
    }

    fn f64(&mut self, value: f64) {
        self.scalar(|out| out.f64(value), |_| json_marker(json_len(&value)));
        self.captured();
    }

    fn str(&mut self, value: &str) {
        self.scalar(
            |out| out.str(value),
            |base64| {
                marker(
                    base64
                        .then(|| base64_len(value))
                        .flatten()
                        .unwrap_or(value.len()),
                )
            },
        );
        if let Some((capture, level)) = self.captured() {
            match capture {
                Capture::ConfigName => level.config_name = Some(is_secret_config_name(value)),
                Capture::TopicName => {
                    level.metadata_topic =
                        Some(level.metadata_topic == Some(true) || value == METADATA_TOPIC);
                }
                Capture::TopicId => {
                    level.metadata_topic =
                        Some(level.metadata_topic == Some(true) || value == METADATA_TOPIC_ID_TEXT);
                }
                Capture::None => {}
            }
        }
    }

    fn bytes(&mut self, value: &[u8]) {
        self.scalar(|out| out.bytes(value), |_| marker(value.len()));
        self.captured();
    }

    fn uuid(&mut self, value: &Uuid) {
        self.scalar(|out| out.uuid(value), |_| json_marker(24));
        if let Some((Capture::TopicId, level)) = self.captured() {
            level.metadata_topic =
                Some(level.metadata_topic == Some(true) || *value == METADATA_TOPIC_ID);
        }
    }

    fn value(&mut self, value: &Value) {
        // A whole value at a secret path (records shown by a hook) is measured, not walked.
        let whole = match value {
            Value::Array(_) | Value::Object(_) => {
                self.hidden.is_none() && self.passing == 0 && self.redacts_next()
            }
            _ => false,
        };
        if whole {
            let _ = self.begin();
            let marker = json_marker(json_len(value));
            self.redact_scalar(marker);
            return;
        }
        super::write_value(self, value);
    }
}

impl Redactor<'_> {
    /// Whether the next value will be redacted, without counting it.
    fn redacts_next(&self) -> bool {
        let depth = self.stack.len();
        let candidates = match self.stack.last() {
            None => self.all_rules(),
            Some(level) => level.next,
        };
        self.rules.iter().enumerate().any(|(i, rule)| {
            candidates & (1 << i) != 0 && rule.steps.len() == depth && self.holds(rule)
        })
    }
}

/// The length of what `text` encodes, if it is standard base64 with padding (what this
/// crate writes for `bytes` and `records`); checked by shape, not decoded.
fn base64_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.len() % 4 != 0 {
        return None;
    }
    let padding = bytes.iter().rev().take_while(|b| **b == b'=').count();
    if padding > 2 {
        return None;
    }
    let body = &bytes[..bytes.len() - padding];
    if !body
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/')
    {
        return None;
    }
    Some(bytes.len() / 4 * 3 - padding)
}

/// Counts bytes written.
#[derive(Default)]
struct Count(usize);

impl io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The length of `value`'s compact JSON text.
fn json_len<T: serde::Serialize + ?Sized>(value: &T) -> usize {
    let mut count = Count::default();
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// A [`JsonSink`] that only measures the compact JSON text it would write.
#[derive(Debug, Default)]
struct JsonLength {
    len: usize,
    /// Per open container: whether it has a value yet.
    open: Vec<bool>,
    after_key: bool,
}

impl JsonLength {
    fn before_value(&mut self) {
        if std::mem::take(&mut self.after_key) {
            return;
        }
        if let Some(has_value) = self.open.last_mut() {
            if std::mem::replace(has_value, true) {
                self.len += 1;
            }
        }
    }
    fn begin(&mut self) {
        self.before_value();
        self.len += 1;
        self.open.push(false);
    }
    fn end(&mut self) {
        self.open.pop();
        self.len += 1;
    }
}

impl JsonSink for JsonLength {
    fn begin_object(&mut self) {
        self.begin();
    }
    fn key(&mut self, key: &str) {
        if let Some(has_value) = self.open.last_mut() {
            if std::mem::replace(has_value, true) {
                self.len += 1;
            }
        }
        self.len += json_len(key) + 1;
        self.after_key = true;
    }
    fn end_object(&mut self) {
        self.end();
    }
    fn begin_array(&mut self) {
        self.begin();
    }
    fn end_array(&mut self) {
        self.end();
    }
    fn null(&mut self) {
        self.before_value();
        self.len += 4;
    }
    fn bool(&mut self, value: bool) {
        self.before_value();
        self.len += if value { 4 } else { 5 };
    }
    fn i64(&mut self, value: i64) {
        self.before_value();
        self.len += json_len(&value);
    }
    fn u64(&mut self, value: u64) {
        self.before_value();
        self.len += json_len(&value);
    }
    fn f64(&mut self, value: f64) {
        self.before_value();
        self.len += json_len(&value);
    }
    fn str(&mut self, value: &str) {
        self.before_value();
        self.len += json_len(value);
    }
    fn bytes(&mut self, value: &[u8]) {
        self.before_value();
        self.len += 2 + value.len().div_ceil(3) * 4;
    }
    fn uuid(&mut self, _value: &Uuid) {
        self.before_value();
        self.len += 24;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::JsonWriter;

    #[test]
    fn metadata_topic_id_text_is_kafkas() {
        assert_eq!(METADATA_TOPIC_ID.to_string(), METADATA_TOPIC_ID_TEXT);
    }

    #[test]
    fn paths_parse_into_steps() {
        assert_eq!(
            parse_path("resources[].configs[].value"),
            [
                Step::Key("resources"),
                Step::Element,
                Step::Key("configs"),
                Step::Element,
                Step::Key("value")
            ]
        );
        assert_eq!(parse_path("responses[]").len(), 2);
    }

    #[test]
    fn json_length_measures_what_the_writer_writes() {
        let value = serde_json::json!({
            "a": [1, -2, 3.5, true, false, null, "x\"y\u{1}é"],
            "b": {},
            "c": [],
            "d": [{"e": {"f": [[]]}}],
        });
        let mut length = JsonLength::default();
        length.value(&value);
        let mut text = Vec::new();
        let mut writer = JsonWriter::compact(&mut text);
        writer.value(&value);
        writer.finish().unwrap();
        assert_eq!(length.len, text.len());
        assert_eq!(json_len(&value), text.len());

        let mut length = JsonLength::default();
        length.begin_array();
        for bytes in [&b""[..], b"a", b"ab", b"abc", b"abcd"] {
            length.bytes(bytes);
        }
        length.uuid(&METADATA_TOPIC_ID);
        length.end_array();
        let mut text = Vec::new();
        let mut writer = JsonWriter::compact(&mut text);
        writer.begin_array();
        for bytes in [&b""[..], b"a", b"ab", b"abc", b"abcd"] {
            writer.bytes(bytes);
        }
        writer.uuid(&METADATA_TOPIC_ID);
        writer.end_array();
        writer.finish().unwrap();
        assert_eq!(length.len, text.len());
    }

    #[test]
    fn base64_lengths_are_read_from_the_shape() {
        use base64::engine::general_purpose::STANDARD;
        use base64::Engine;
        for len in 0..10 {
            let text = STANDARD.encode(vec![0xfbu8; len]);
            assert_eq!(base64_len(&text), Some(len), "{text}");
        }
        for text in ["abc", "ab=c", "a===", "ab-_", "<redacted: 1 bytes>"] {
            assert_eq!(base64_len(text), None, "{text}");
        }
    }

    #[test]
    fn markers_are_not_base64() {
        use base64::engine::general_purpose::{STANDARD, URL_SAFE};
        use base64::Engine;
        for text in [marker(0), marker(22), json_marker(120)] {
            assert!(STANDARD.decode(&text).is_err());
            assert!(URL_SAFE.decode(&text).is_err());
        }
    }

    #[test]
    fn every_api_and_direction_fits_the_rule_masks() {
        for [body, frame] in compiled().values() {
            assert!(body.len() <= MAX_RULES);
            assert_eq!(body.len(), frame.len());
        }
        assert_eq!(
            compiled()
                .values()
                .map(|[body, _]| body.len())
                .sum::<usize>(),
            SECRETS.len(),
            "no entry was dropped"
        );
    }
}
