//! An API's own answer to a request, failing it with one error code placed where that API
//! carries errors, for every API and version, with nothing written per API: the places come
//! from the schemas ([`ApiKey::error_code_fields`]), the response's structs from their
//! generated defaults ([`ApiKey::response_struct_default`]), and the entries (topics,
//! partitions, groups, resources) from the request, mirrored into the response through
//! Kafka's JSON form.
//!
//! How an entry of the request is found for an array of the response: the request's array
//! of the same key, else its first array (schema order) at that level (`topicData` answers to
//! `responses`, `partitionData` to `partitionResponses`). The fields that name an entry
//! (strings, and numbers keyed as an index, id or type) are copied from the request's entry
//! to the response's by key, a key and the same key with `Index` added counting as one
//! (Fetch's `partition` is the response's `partitionIndex`); the others (offsets, timestamps)
//! keep the schema's default. An entry that is a bare string (DescribeGroups' group ids)
//! fills the response entry's first string field.

use crate::{ApiKey, ErrorCode, Request, Response};
use serde_json::{Map, Value};

/// Why no error response could be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorResponseError {
    /// The response has no error code this request's entries reach at this version (a
    /// Metadata v0 for all topics, say: its only error codes are per topic).
    #[error("{api} v{version}'s response has no place for an error code for this request")]
    NoPlace {
        /// The API.
        api: ApiKey,
        /// The version.
        version: i16,
    },
    /// The request or the response built does not go through the JSON form at this version
    /// (a version the API does not have, or an API that is not compiled).
    #[error("{api} v{version}: {reason}")]
    Json {
        /// The API.
        api: ApiKey,
        /// The version.
        version: i16,
        /// What failed.
        reason: String,
    },
}

/// The response to `request` at `version` failing it with `error`: in every per-entry error
/// code the response has for the entries the request names (per topic, per partition, per
/// group, per resource), or, where it has none that the request reaches, in the top-level
/// `ErrorCode`. `message`, if given, goes into the `ErrorMessage` field beside each code
/// placed, where the response has one. Every other field keeps the schema's default, apart
/// from the fields copied from the request's entries to name them (topic names and ids,
/// partition indexes, group ids).
pub fn error_response(
    request: &Request,
    version: i16,
    error: ErrorCode,
    message: Option<&str>,
) -> Result<Response, ErrorResponseError> {
    let api = request.api_key();
    let json_error = |reason: String| ErrorResponseError::Json {
        api,
        version,
        reason,
    };
    let paths: Vec<&str> = api
        .error_code_fields()
        .iter()
        .filter(|(_, versions)| versions.contains(version))
        .map(|(path, _)| *path)
        .collect();
    let asked = request
        .to_json(version)
        .map_err(|e| json_error(format!("the request: {e}")))?;
    let mut root = api
        .response_struct_default("", version)
        .ok_or_else(|| json_error("no response at this version".to_owned()))?;
    let placer = Placer {
        api,
        version,
        error,
        message,
        paths: &paths,
    };
    let mut placed = 0;
    if let (Some(out), Some(asked)) = (root.as_object_mut(), asked.as_object()) {
        placed = placer.nested(out, "", asked);
        if placed == 0 && paths.contains(&"errorCode") {
            placer.set_error(out);
            placed = 1;
        }
    }
    if placed == 0 {
        return Err(ErrorResponseError::NoPlace { api, version });
    }
    Response::from_json(api, &root, version).map_err(|e| json_error(format!("the response: {e}")))
}

struct Placer<'a> {
    api: ApiKey,
    version: i16,
    error: ErrorCode,
    message: Option<&'a str>,
    /// The error code fields at this version.
    paths: &'a [&'a str],
}

impl Placer<'_> {
    /// Fills the arrays and structs below `prefix` (`""` or `responses[].`) that lead to
    /// error codes, mirroring `asked`, the request's object at the same level; the codes
    /// placed. The level's own `errorCode` is set by the caller (the top level) or here (an
    /// entry).
    fn nested(
        &self,
        out: &mut Map<String, Value>,
        prefix: &str,
        asked: &Map<String, Value>,
    ) -> usize {
        // The next segments of the error paths below this level, each once, in order.
        let mut segments: Vec<&str> = Vec::new();
        for path in self.paths {
            let Some(rest) = path.strip_prefix(prefix) else {
                continue;
            };
            if let Some((segment, _)) = rest.split_once('.') {
                if !segments.contains(&segment) {
                    segments.push(segment);
                }
            }
        }
        let mut placed = 0;
        for segment in segments {
            let path = format!("{prefix}{segment}");
            let Some(template) = self.api.response_struct_default(&path, self.version) else {
                continue;
            };
            let below = format!("{path}.");
            match segment.strip_suffix("[]") {
                Some(key) => {
                    let Some(entries) = counterpart(asked, key) else {
                        continue;
                    };
                    let mut filled = Vec::with_capacity(entries.len());
                    for entry in entries {
                        let mut element = template.clone();
                        let Some(object) = element.as_object_mut() else {
                            continue;
                        };
                        let empty = Map::new();
                        let entry_object = match entry {
                            Value::Object(fields) => {
                                copy_names(object, fields);
                                fields
                            }
                            Value::String(_) | Value::Number(_) => {
                                name_with(object, entry);
                                &empty
                            }
                            _ => &empty,
                        };
                        placed += self.nested(object, &below, entry_object);
                        if self.paths.contains(&format!("{below}errorCode").as_str()) {
                            self.set_error(object);
                            placed += 1;
                        }
                        filled.push(element);
                    }
                    out.insert(key.to_owned(), Value::Array(filled));
                }
                None => {
                    let mut element = match out.get(segment) {
                        Some(Value::Object(_)) => out[segment].clone(),
                        _ => template,
                    };
                    let Some(object) = element.as_object_mut() else {
                        continue;
                    };
                    let empty = Map::new();
                    let entry_object = match asked.get(segment) {
                        Some(Value::Object(fields)) => fields,
                        _ => &empty,
                    };
                    let inner = self.nested(object, &below, entry_object);
                    // A struct below is filled only on the way to an entry's code; a code of
                    // its own (`error.errorCode`) counts as the level's.
                    if inner > 0 || self.paths.contains(&format!("{below}errorCode").as_str()) {
                        if inner == 0 {
                            self.set_error(object);
                        }
                        placed += inner.max(1);
                        out.insert(segment.to_owned(), element);
                    }
                }
            }
        }
        placed
    }

    fn set_error(&self, object: &mut Map<String, Value>) {
        object.insert("errorCode".to_owned(), Value::from(self.error.code()));
        if let (Some(message), Some(slot)) = (self.message, object.get_mut("errorMessage")) {
            *slot = Value::from(message);
        }
    }
}

/// The request's entries answering to the response's array `key` at one level: its array of
/// the same key, else its first array.
fn counterpart<'a>(asked: &'a Map<String, Value>, key: &str) -> Option<&'a Vec<Value>> {
    if let Some(Value::Array(entries)) = asked.get(key) {
        return Some(entries);
    }
    asked.values().find_map(|value| match value {
        Value::Array(entries) => Some(entries),
        _ => None,
    })
}

/// Whether a numeric field of a response entry names the entry (a partition index, a
/// broker or producer id, a resource type) rather than saying something about it (an
/// offset, a timestamp, a count), which an error answer leaves at its default.
fn names_the_entry(key: &str) -> bool {
    key == "index"
        || key == "partition"
        || key.ends_with("Index")
        || key.ends_with("Id")
        || key.ends_with("Type")
}

/// Copies the request entry's fields that name it (strings: names and ids; numbers: see
/// [`names_the_entry`]) to the response entry's field of the same key (or the key with
/// `Index` added on either side), where the JSON types agree.
fn copy_names(out: &mut Map<String, Value>, asked: &Map<String, Value>) {
    for (key, slot) in out.iter_mut() {
        if key == "errorCode" || key == "errorMessage" {
            continue;
        }
        if slot.is_number() && !names_the_entry(key) {
            continue;
        }
        let found = asked.get(key.as_str()).or_else(|| {
            key.strip_suffix("Index")
                .and_then(|short| asked.get(short))
                .or_else(|| asked.get(format!("{key}Index").as_str()))
        });
        let Some(value) = found else { continue };
        let fits = matches!(
            (&*slot, value),
            (Value::Number(_), Value::Number(_))
                | (Value::Bool(_), Value::Bool(_))
                | (Value::String(_) | Value::Null, Value::String(_))
        );
        if fits {
            *slot = value.clone();
        }
    }
}

/// Names a response entry after a request entry that is a bare value (a group id): the
/// first field of the same JSON type that is not the error's.
fn name_with(out: &mut Map<String, Value>, value: &Value) {
    let slot = out.iter_mut().find(|(key, slot)| {
        *key != "errorCode"
            && *key != "errorMessage"
            && match value {
                Value::String(_) => matches!(slot, Value::String(_) | Value::Null),
                _ => slot.is_number(),
            }
    });
    if let Some((_, slot)) = slot {
        *slot = value.clone();
    }
}
