//! The control surface in JSON, as the HTTP control (`--control`) and a rule file
//! (`--faults FILE`) speak it. Strict: a key that is not part of the form, or a value of the
//! wrong kind, is an error naming it (`action.delayMs: expected a whole number of
//! milliseconds`), never dropped.
//!
//! A rule:
//!
//! ```json
//! {"match": {"api": "Produce", "versions": [3, 11], "broker": 0, "connection": 7,
//!            "clientId": "rdkafka", "nth": 2, "request": {"acks": -1}},
//!  "action": {"error": "NOT_LEADER_OR_FOLLOWER"},
//!  "times": 1}
//! ```
//!
//! Every key of `match` is optional (none: every request). `request` is a predicate over the
//! decoded request: its JSON form (Kafka's, as `kafka-codec decode` prints it) must contain
//! this value: an object every key given with a value containing the one given, an array
//! every element given contained by one of its elements, anything else equal. `times` is a
//! count or `"always"` (default 1). An action is `"pass"`, `"disconnect"`, `"silence"`,
//! `"corruptRecords"`, `{"error": NAME or code}`, `{"delayMs": N}`, `{"delayMs": N, "then":
//! ACTION}`, `{"applyThen": ACTION}` or `{"respond": RESPONSE}` (the response body in Kafka's
//! JSON form, read at the request's version).

use super::{Action, ActiveRule, LoggedRequest, Match, Rule, Times};
use kafka_codec::serde_json::{json, Map, Value};
use kafka_codec::{ApiKey, ErrorCode};
use std::time::{Duration, UNIX_EPOCH};

/// A rule in JSON that cannot be read: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonRuleError(pub String);

impl std::fmt::Display for JsonRuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for JsonRuleError {}

fn error(at: &str, why: impl std::fmt::Display) -> JsonRuleError {
    JsonRuleError(format!("{at}: {why}"))
}

/// The object at `at`, with no key outside `keys`.
fn object<'a>(
    value: &'a Value,
    at: &str,
    keys: &[&str],
) -> Result<&'a Map<String, Value>, JsonRuleError> {
    let Value::Object(object) = value else {
        return Err(error(at, "expected an object"));
    };
    if let Some(unknown) = object.keys().find(|key| !keys.contains(&key.as_str())) {
        return Err(error(
            at,
            format!("unknown field {unknown:?} (known: {})", keys.join(", ")),
        ));
    }
    Ok(object)
}

fn whole<T: TryFrom<i64>>(value: &Value, at: &str, what: &str) -> Result<T, JsonRuleError> {
    value
        .as_i64()
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| error(at, format!("expected {what}, found {value}")))
}

/// A rule from its JSON form.
pub fn rule_from_json(value: &Value) -> Result<Rule, JsonRuleError> {
    let rule = object(value, "rule", &["match", "action", "times"])?;
    let matcher = match rule.get("match") {
        Some(value) => match_from_json(value)?,
        None => Match::any(),
    };
    let action = action_from_json(
        rule.get("action")
            .ok_or_else(|| error("rule", "missing field \"action\""))?,
        "action",
    )?;
    let times = match rule.get("times") {
        None => Times::Count(1),
        Some(Value::String(text)) if text == "always" => Times::Always,
        Some(value) => match whole::<u64>(value, "times", "a count of at least 1 or \"always\"")? {
            0 => {
                return Err(error(
                    "times",
                    "expected a count of at least 1 or \"always\"",
                ))
            }
            n => Times::Count(n),
        },
    };
    Ok(Rule {
        matcher,
        action,
        times,
    })
}

/// Rules from JSON: one rule, or an array of them (a `--faults` file).
pub fn rules_from_json(value: &Value) -> Result<Vec<Rule>, JsonRuleError> {
    match value {
        Value::Array(rules) => rules
            .iter()
            .enumerate()
            .map(|(i, rule)| {
                rule_from_json(rule).map_err(|e| JsonRuleError(format!("rule {i}: {}", e.0)))
            })
            .collect(),
        one => Ok(vec![rule_from_json(one)?]),
    }
}

fn match_from_json(value: &Value) -> Result<Match, JsonRuleError> {
    let fields = object(
        value,
        "match",
        &[
            "api",
            "versions",
            "broker",
            "connection",
            "clientId",
            "nth",
            "request",
        ],
    )?;
    let mut matcher = Match::any();
    if let Some(api) = fields.get("api") {
        matcher.api = Some(api_from_json(api, "match.api")?);
    }
    if let Some(versions) = fields.get("versions") {
        let at = "match.versions";
        let pair = versions
            .as_array()
            .filter(|pair| pair.len() == 2)
            .ok_or_else(|| error(at, "expected [min, max]"))?;
        let min = whole::<i16>(&pair[0], at, "a version")?;
        let max = whole::<i16>(&pair[1], at, "a version")?;
        if min > max {
            return Err(error(at, format!("min {min} is above max {max}")));
        }
        matcher.versions = Some((min, max));
    }
    if let Some(broker) = fields.get("broker") {
        matcher.broker = Some(whole(broker, "match.broker", "a node id")?);
    }
    if let Some(connection) = fields.get("connection") {
        matcher.connection = Some(whole(connection, "match.connection", "a connection id")?);
    }
    if let Some(client_id) = fields.get("clientId") {
        matcher.client_id = Some(
            client_id
                .as_str()
                .ok_or_else(|| error("match.clientId", "expected a string"))?
                .to_owned(),
        );
    }
    if let Some(nth) = fields.get("nth") {
        matcher.from_call = match whole::<u64>(nth, "match.nth", "a count of at least 1")? {
            0 => return Err(error("match.nth", "expected a count of at least 1")),
            n => n,
        };
    }
    if let Some(request) = fields.get("request") {
        matcher.request_json = Some(request.clone());
    }
    Ok(matcher)
}

/// An API by name (`Produce`, any case) or key.
pub fn api_from_json(value: &Value, at: &str) -> Result<ApiKey, JsonRuleError> {
    let found = match value {
        Value::String(name) => ApiKey::ALL
            .iter()
            .copied()
            .find(|api| api.name().eq_ignore_ascii_case(name)),
        Value::Number(_) => value
            .as_i64()
            .and_then(|key| i16::try_from(key).ok())
            .and_then(ApiKey::from_key),
        _ => None,
    };
    found.ok_or_else(|| error(at, format!("no API {value}")))
}

fn error_code_from_json(value: &Value, at: &str) -> Result<ErrorCode, JsonRuleError> {
    match value {
        Value::String(name) => ErrorCode::from_name(name)
            .ok_or_else(|| error(at, format!("no error code named {name:?} in Kafka's table"))),
        _ => Ok(ErrorCode::from(whole::<i16>(
            value,
            at,
            "an error name or code",
        )?)),
    }
}

fn action_from_json(value: &Value, at: &str) -> Result<Action, JsonRuleError> {
    if let Value::String(name) = value {
        return match name.as_str() {
            "pass" => Ok(Action::Pass),
            "disconnect" => Ok(Action::Disconnect),
            "silence" => Ok(Action::Silence),
            "corruptRecords" => Ok(Action::CorruptRecords),
            other => Err(error(
                at,
                format!(
                    "no action {other:?} (pass, disconnect, silence, corruptRecords, or an \
                     object: error, delayMs, applyThen, respond)"
                ),
            )),
        };
    }
    let fields = object(
        value,
        at,
        &["error", "delayMs", "then", "applyThen", "respond"],
    )?;
    let one_of = ["error", "delayMs", "applyThen", "respond"]
        .iter()
        .filter(|key| fields.contains_key(**key))
        .count();
    if one_of != 1 {
        return Err(error(
            at,
            "expected exactly one of error, delayMs, applyThen, respond",
        ));
    }
    if fields.contains_key("then") && !fields.contains_key("delayMs") {
        return Err(error(at, "\"then\" goes with \"delayMs\""));
    }
    if let Some(code) = fields.get("error") {
        return Ok(Action::Error(error_code_from_json(
            code,
            &format!("{at}.error"),
        )?));
    }
    if let Some(delay) = fields.get("delayMs") {
        let delay = Duration::from_millis(whole(
            delay,
            &format!("{at}.delayMs"),
            "a whole number of milliseconds",
        )?);
        return Ok(match fields.get("then") {
            None => Action::Delay(delay),
            Some(then) => Action::DelayThen(
                delay,
                Box::new(action_from_json(then, &format!("{at}.then"))?),
            ),
        });
    }
    if let Some(then) = fields.get("applyThen") {
        return Ok(Action::ApplyThen(Box::new(action_from_json(
            then,
            &format!("{at}.applyThen"),
        )?)));
    }
    match fields.get("respond") {
        Some(body @ Value::Object(_)) => Ok(Action::RespondJson(body.clone())),
        _ => Err(error(
            &format!("{at}.respond"),
            "expected the response body as an object in Kafka's JSON form",
        )),
    }
}

/// Whether `value` contains `pattern` (see the module's doc).
pub fn contains(value: &Value, pattern: &Value) -> bool {
    match (value, pattern) {
        (Value::Object(value), Value::Object(pattern)) => pattern
            .iter()
            .all(|(key, want)| value.get(key).is_some_and(|have| contains(have, want))),
        (Value::Array(value), Value::Array(pattern)) => pattern
            .iter()
            .all(|want| value.iter().any(|have| contains(have, want))),
        _ => value == pattern,
    }
}

/// An action's JSON form (a predicate given in Rust shows as `"predicate": true` in its
/// match; a response built in Rust as `"respond": true`).
pub fn action_to_json(action: &Action) -> Value {
    match action {
        Action::Pass => json!("pass"),
        Action::Disconnect => json!("disconnect"),
        Action::Silence => json!("silence"),
        Action::CorruptRecords => json!("corruptRecords"),
        Action::Error(code) => match code.name() {
            Some(name) => json!({ "error": name }),
            None => json!({ "error": code.code() }),
        },
        Action::Delay(delay) => json!({ "delayMs": delay.as_millis() as u64 }),
        Action::DelayThen(delay, then) => {
            json!({ "delayMs": delay.as_millis() as u64, "then": action_to_json(then) })
        }
        Action::ApplyThen(then) => json!({ "applyThen": action_to_json(then) }),
        Action::Respond(_) => json!({ "respond": true }),
        Action::RespondJson(body) => json!({ "respond": body }),
    }
}

/// A rule in force as JSON: its id, the rule, and how often it matched and acted.
pub fn active_rule_to_json(active: &ActiveRule) -> Value {
    let m = &active.rule.matcher;
    let mut matcher = Map::new();
    if let Some(api) = m.api {
        matcher.insert("api".into(), json!(api.name()));
    }
    if let Some((min, max)) = m.versions {
        matcher.insert("versions".into(), json!([min, max]));
    }
    if let Some(broker) = m.broker {
        matcher.insert("broker".into(), json!(broker));
    }
    if let Some(connection) = m.connection {
        matcher.insert("connection".into(), json!(connection));
    }
    if let Some(client_id) = &m.client_id {
        matcher.insert("clientId".into(), json!(client_id));
    }
    if m.from_call > 1 {
        matcher.insert("nth".into(), json!(m.from_call));
    }
    if let Some(request) = &m.request_json {
        matcher.insert("request".into(), request.clone());
    }
    if m.predicate.is_some() {
        matcher.insert("predicate".into(), json!(true));
    }
    json!({
        "id": active.id,
        "match": matcher,
        "action": action_to_json(&active.rule.action),
        "times": match active.rule.times {
            Times::Always => json!("always"),
            Times::Count(n) => json!(n),
        },
        "matched": active.matched,
        "acted": active.acted,
    })
}

/// A logged request as JSON; the request in Kafka's JSON form at its version, its secrets
/// (SaslAuthenticate's tokens, SCRAM credentials, password configs) replaced by the
/// library's redaction markers, so that the log never shows a credential.
pub fn logged_to_json(entry: &LoggedRequest) -> Value {
    use kafka_codec::json::redact::{write_redacted, Direction, Form};
    use kafka_codec::json::{JsonOptions, ValueSink};
    let options = JsonOptions::default();
    let request = ValueSink::collect(|sink| {
        write_redacted(entry.api, Direction::Request, Form::Body, sink, |out| {
            entry
                .request
                .body
                .write_json_with(entry.version, &options, out)
        })
        .map(|_redacted| ())
    })
    .unwrap_or_else(|e| json!({ "notShown": e.to_string() }));
    json!({
        "sequence": entry.sequence,
        "api": entry.api.name(),
        "version": entry.version,
        "correlationId": entry.correlation_id,
        "clientId": entry.client_id,
        "broker": entry.node_id,
        "connection": entry.connection,
        "atMs": entry.at.as_secs_f64() * 1000.0,
        "timeMs": entry.time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
        "outcome": entry.outcome,
        "request": request,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_never_shows_a_sasl_token() {
        use kafka_codec::conn::ServerConnection;
        use kafka_codec::messages::SaslAuthenticateRequest;
        let body = SaslAuthenticateRequest::default()
            .with_auth_bytes(b"\0alice\0alice-secret".to_vec().into());
        let mut frame = kafka_codec::bytes::BytesMut::new();
        kafka_codec::RequestFrame::new(body, 2, 7)
            .encode(&mut frame, kafka_codec::Framing::SizePrefixed)
            .unwrap();
        let request = ServerConnection::new()
            .receive(&mut frame)
            .unwrap()
            .unwrap();
        let entry = LoggedRequest {
            sequence: 0,
            api: ApiKey::SaslAuthenticate,
            version: 2,
            correlation_id: 7,
            client_id: None,
            node_id: 0,
            connection: 1,
            at: std::time::Duration::ZERO,
            time: UNIX_EPOCH,
            request: std::sync::Arc::new(request),
            outcome: "answered".into(),
        };
        let text = logged_to_json(&entry).to_string();
        assert!(
            text.contains(r#""authBytes":"<redacted: 19 bytes>""#),
            "{text}"
        );
        // Neither the password nor its base64.
        assert!(
            !text.contains("alice-secret") && !text.contains("YWxpY2Ut"),
            "{text}"
        );
    }

    #[test]
    fn rules_read_strictly() {
        let rule = rule_from_json(&json!({
            "match": {"api": "produce", "versions": [3, 9], "broker": 1, "nth": 2},
            "action": {"delayMs": 5, "then": {"applyThen": "disconnect"}},
            "times": "always"
        }))
        .unwrap();
        assert_eq!(rule.matcher.api, Some(ApiKey::Produce));
        assert_eq!(rule.matcher.versions, Some((3, 9)));
        assert_eq!(rule.times, Times::Always);
        assert!(matches!(
            rule.action,
            Action::DelayThen(d, ref then)
                if d == Duration::from_millis(5)
                    && matches!(**then, Action::ApplyThen(ref inner) if matches!(**inner, Action::Disconnect))
        ));
        let bad = |value: Value| rule_from_json(&value).unwrap_err().0;
        assert!(bad(json!({"action": "pass", "tims": 2})).contains("unknown field \"tims\""));
        assert!(bad(json!({"match": {"ap": "Fetch"}, "action": "pass"}))
            .starts_with("match: unknown field \"ap\""));
        assert!(bad(json!({"match": {"api": "Fetchh"}, "action": "pass"}))
            .starts_with("match.api: no API"));
        assert!(bad(json!({"action": {"error": "NOT_A_CODE"}}))
            .starts_with("action.error: no error code"));
        assert!(bad(json!({"action": {"delayMs": -1}})).starts_with("action.delayMs"));
        assert!(bad(json!({"action": "explode"})).starts_with("action: no action"));
        assert!(bad(json!({"action": "pass", "times": 0})).starts_with("times"));
        assert!(
            bad(json!({"match": {"versions": [4, 3]}, "action": "pass"}))
                .starts_with("match.versions")
        );
        assert!(bad(json!({"match": {}})).contains("missing field \"action\""));
        assert_eq!(
            rules_from_json(&json!([{"action": "pass"}, {"action": "silence"}]))
                .unwrap()
                .len(),
            2
        );
        assert!(rules_from_json(&json!([{"action": "pass"}, {"action": 3}]))
            .unwrap_err()
            .0
            .starts_with("rule 1: action"));
    }

    #[test]
    fn request_patterns_are_contained() {
        let request = json!({"acks": -1, "topicData": [{"name": "a"}, {"name": "b", "x": 1}]});
        assert!(contains(&request, &json!({"acks": -1})));
        assert!(contains(&request, &json!({"topicData": [{"name": "b"}]})));
        assert!(!contains(&request, &json!({"topicData": [{"name": "c"}]})));
        assert!(!contains(&request, &json!({"acks": 1})));
        assert!(!contains(&request, &json!({"timeoutMs": 1})));
    }
}
