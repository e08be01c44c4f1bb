//! The control surface over HTTP/1.1, for tests in any language (`kafka-codec cluster
//! --control HOST:PORT`): JSON in, JSON out, one request per connection.
//!
//! | Method and path | What it does |
//! |---|---|
//! | `GET /rules` | the rules in force, in the order they are tried |
//! | `POST /rules` | adds a rule, or an array of them (see [`super::json`]); `{"ids": [...]}` |
//! | `DELETE /rules`, `DELETE /rules/ID` | removes every rule, or one |
//! | `GET /log?api=NAME&after=SEQ` | the request log (filtered by API, after a sequence number) |
//! | `GET /counts` | requests received, by API |
//! | `DELETE /log` | forgets the log and the counts |
//! | `GET /brokers` | each broker's id, address, whether it is up, fenced or catching up, its latency |
//! | `POST /brokers` | `{}` or `{"port": N}`: adds a broker with the next id (on port N, else a free one) |
//! | `DELETE /brokers/ID` | removes a broker as Kafka does (shut down, fenced, unregistered: its partitions keep it among their replicas, those it alone held go offline; one unregistered while running is shut down); the last one is refused (409) |
//! | `POST /brokers/ID/reassign-and-remove` | kfake's `RemoveNode`: its leaderships and coordinatorships move to the brokers left (a reassignment), then it is removed; the last one is refused (409) |
//! | `POST /brokers/ID/stop`, `POST /brokers/ID/restart` | stops or restarts a broker |
//! | `POST /brokers/ID/crash` | stops a broker as a crash: its restart registers it without a clean shutdown (fenced, out of the ELRs, then unfenced) |
//! | `POST /brokers/ID/fence` | fences a stopped broker now; `?running=true`: one that runs (its heartbeats lost) |
//! | `POST /brokers/ID/unfence` | unfences a running broker (its heartbeats back); a stopped one is refused (409) |
//! | `POST /leaders/rebalance` | runs the automatic leader rebalance's check now: the leaders it moved |
//! | `POST /leaders/unclean` | runs the controller's periodic unclean leader election now (every 5 minutes on its own): the leaders it elected |
//! | `GET /topics/T/partitions` | each partition's leader, leader and partition epochs, replicas, ISR, offline replicas |
//! | `PUT /brokers/ID/latency` | `{"ms": N}`: every answer of the broker N ms later |
//! | `POST /leaders` | `{"topic": T, "partition": P, "leader": B}`: moves a leader |
//! | `GET /groups` | each group's coordinator, state, generation, leader and members |
//! | `POST /coordinators` | `{"group": G, "coordinator": B}` or `{"transactionalId": T, "coordinator": B}`: moves a group's or a transaction's coordinator |
//! | `POST /sessions/expire` | `{"group": G, "member": M}`: expires a member's session |
//! | `POST /producers/fence` | `{"producerId": P}`: fences a producer's newest epoch |
//! | `GET /quorum` | the controllers' leader, epoch, high watermark, current and committed voters, observers |
//! | `POST /quorum/voters` | `{"id": N}`: adds controller N to the voters |
//! | `DELETE /quorum/voters/ID` | removes a voter |
//! | `PUT /quorum/fetching` | `{"fetching": false}`: stops (or starts) the followers' timed fetches |
//! | `POST /quorum/fetch` | `{"id": N}`: replica N fetches once from the leader |
//! | `POST /transactions/fence` | `{"transactionalId": T}`: aborts its open transaction, fences its epoch |
//!
//! A body that is not JSON, a key that is not part of the form and a value of the wrong
//! kind are refused with 400 and a message naming them; an unknown path is 404, a wrong
//! method 405. An operation the cluster refuses is 404 when what it names does not exist
//! (a broker, topic, group…) and 409 when the cluster's state refuses it (the last broker,
//! a stopped or running one, a port that cannot be bound again, a refused voter change). Built on the same plumbing as the brokers and the metrics endpoint (accept
//! back-off, a connection cap, the memory budget); why not an HTTP crate: the metrics
//! endpoint's reason holds (one request per connection, a handful of routes).

use super::json::{active_rule_to_json, api_from_json, logged_to_json, rules_from_json};
use super::ControlHandle;
use kafka_codec::serde_json::{json, Value};
use kafka_codec_server::accept::Acceptor;
use kafka_codec_server::registry::Registry;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The longest request head read.
pub const MAX_HEAD: usize = 16 * 1024;
/// The longest request body read (a rule file of a few thousand rules).
pub const MAX_BODY: usize = 1024 * 1024;
/// Control connections open at once; another one closes the one idle longest.
pub const MAX_CONNECTIONS: usize = 32;
/// How long a client may take to send its request, and to take the answer.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Serves the control surface of `control` on `listener` until the cluster is dropped.
pub async fn serve(control: ControlHandle, listener: TcpListener) {
    let mut stop = control.shared.stop.clone();
    let mut acceptor = Acceptor::new(listener);
    let registry = Registry::new(MAX_CONNECTIONS);
    let next = AtomicU64::new(1);
    loop {
        let (tcp, _) = tokio::select! {
            accepted = acceptor.accept(|_line| {}) => accepted,
            _ = stop.changed() => return,
        };
        let (member, _) = registry.join(next.fetch_add(1, Ordering::Relaxed));
        let control = control.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = connection(&control, tcp) => {}
                _ = member.evicted() => {}
            }
        });
    }
}

/// A request as read.
#[derive(Debug)]
struct HttpRequest {
    method: String,
    path: String,
    query: Vec<(String, String)>,
    body: Vec<u8>,
}

async fn connection(control: &ControlHandle, mut tcp: TcpStream) {
    let budget = &control.shared.budget;
    let mut charge = budget.none();
    let read = tokio::time::timeout(TIMEOUT, read_request(&mut tcp, &mut charge)).await;
    let (status, body) = match read {
        Err(_) => return,
        Ok(Err(Some((status, why)))) => (status, json!({ "error": why })),
        Ok(Err(None)) => return,
        Ok(Ok(request)) => route(control, &request),
    };
    let text = body.to_string();
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        text.len() + 1
    );
    let _ = tokio::time::timeout(TIMEOUT, async {
        tcp.write_all(head.as_bytes()).await?;
        tcp.write_all(text.as_bytes()).await?;
        tcp.write_all(b"\n").await?;
        tcp.shutdown().await
    })
    .await;
}

type Failure = Option<(&'static str, String)>;

/// Reads the head and the body (`Content-Length`); an answer to give instead, or `None`
/// when the client went.
async fn read_request(
    tcp: &mut TcpStream,
    charge: &mut kafka_codec_server::budget::Charge,
) -> Result<HttpRequest, Failure> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        if buffer.len() > MAX_HEAD {
            return Err(Some((
                "431 Request Header Fields Too Large",
                format!("the request head is longer than {MAX_HEAD} bytes"),
            )));
        }
        let n = tcp.read(&mut chunk).await.map_err(|_| None)?;
        if n == 0 {
            return Err(None);
        }
        if !charge.try_grow_optional(buffer.len() + n) {
            return Err(Some((
                "503 Service Unavailable",
                "the memory budget has no room now".into(),
            )));
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = std::str::from_utf8(&buffer[..head_end])
        .map_err(|_| Some(("400 Bad Request", "the request head is not UTF-8".into())))?;
    let mut lines = head.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Some((
            "400 Bad Request",
            "not an HTTP/1 request line".into(),
        )));
    };
    if !version.starts_with("HTTP/1.") || !target.starts_with('/') {
        return Err(Some((
            "400 Bad Request",
            "not an HTTP/1 request line".into(),
        )));
    }
    let mut length = 0usize;
    for header in lines {
        if let Some((name, value)) = header.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value
                    .trim()
                    .parse()
                    .map_err(|_| Some(("400 Bad Request", format!("Content-Length {value:?}"))))?;
            } else if name.trim().eq_ignore_ascii_case("transfer-encoding") {
                return Err(Some((
                    "411 Length Required",
                    "send the body with a Content-Length".into(),
                )));
            }
        }
    }
    if length > MAX_BODY {
        return Err(Some((
            "413 Content Too Large",
            format!("the body is longer than {MAX_BODY} bytes"),
        )));
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let request = HttpRequest {
        method: method.to_owned(),
        path: path.to_owned(),
        query: query
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                (key.to_owned(), value.to_owned())
            })
            .collect(),
        body: Vec::new(),
    };
    let mut body = buffer.split_off(head_end);
    while body.len() < length {
        let n = tcp.read(&mut chunk).await.map_err(|_| None)?;
        if n == 0 {
            return Err(None);
        }
        if !charge.try_grow_optional(head_end + body.len() + n) {
            return Err(Some((
                "503 Service Unavailable",
                "the memory budget has no room now".into(),
            )));
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    Ok(HttpRequest { body, ..request })
}

type Answer = (&'static str, Value);

fn bad(why: impl std::fmt::Display) -> Answer {
    ("400 Bad Request", json!({ "error": why.to_string() }))
}

fn not_found(why: impl std::fmt::Display) -> Answer {
    ("404 Not Found", json!({ "error": why.to_string() }))
}

fn conflict(why: impl std::fmt::Display) -> Answer {
    ("409 Conflict", json!({ "error": why.to_string() }))
}

/// An operation the cluster refused: 404 when what it names does not exist, 409 when the
/// cluster's state refuses it (the last broker, a stopped or running one, a port taken, a
/// voter change the leader refused).
fn refused(e: super::OperationError) -> Answer {
    use super::OperationError::*;
    match e {
        NoSuchBroker(_)
        | NoSuchPartition(..)
        | NoSuchGroup(_)
        | NoSuchMember(..)
        | NoSuchProducer(_)
        | NoControllers
        | NoSuchController(_)
        | NoSuchTransactionalId(_)
        | NoSuchTopic(_) => not_found(e),
        VoterChangeRefused(_) | LastBroker(_) | Listen(_) | NodeIdTaken(_) | Stopped(_) | Up(_) => {
            conflict(e)
        }
    }
}

fn ok(body: Value) -> Answer {
    ("200 OK", body)
}

fn json_body(request: &HttpRequest) -> Result<Value, Answer> {
    kafka_codec::serde_json::from_slice(&request.body)
        .map_err(|e| bad(format!("the body is not JSON: {e}")))
}

/// Each partition of `topic` as Metadata shows it, with its partition epoch.
fn topic_partitions(control: &ControlHandle, topic: &str) -> Answer {
    let count = control
        .shared
        .state()
        .topics
        .get(topic)
        .map(|t| t.partitions.len() as i32);
    let Some(count) = count else {
        return not_found(format!("no topic {topic:?}"));
    };
    let mut partitions = Vec::new();
    for partition in 0..count {
        // A topic deleted meanwhile: what is left.
        let Ok(view) = control.partition(topic, partition) else {
            break;
        };
        partitions.push(json!({
            "partition": partition,
            "leader": view.leader.0,
            "leaderEpoch": view.leader.1,
            "partitionEpoch": view.partition_epoch,
            "replicas": view.replicas,
            "isr": view.isr,
            "offlineReplicas": view.offline,
        }));
    }
    ok(json!({ "topic": topic, "partitions": partitions }))
}

/// Answers one request.
fn route(control: &ControlHandle, request: &HttpRequest) -> Answer {
    let segments: Vec<&str> = request.path.trim_matches('/').split('/').collect();
    let method = request.method.as_str();
    let allowed = |methods: &str| {
        (
            "405 Method Not Allowed",
            json!({ "error": format!("{} takes {methods}", request.path) }),
        )
    };
    match segments.as_slice() {
        ["rules"] => match method {
            "GET" => ok(json!(control
                .rules_in_force()
                .iter()
                .map(active_rule_to_json)
                .collect::<Vec<_>>())),
            "POST" => {
                let body = match json_body(request) {
                    Ok(body) => body,
                    Err(answer) => return answer,
                };
                match rules_from_json(&body) {
                    Ok(rules) => {
                        let ids: Vec<u64> =
                            rules.into_iter().map(|rule| control.add(rule)).collect();
                        ("201 Created", json!({ "ids": ids }))
                    }
                    Err(e) => bad(e),
                }
            }
            "DELETE" => {
                let removed = control.rules_in_force().len();
                control.clear();
                ok(json!({ "removed": removed }))
            }
            _ => allowed("GET, POST, DELETE"),
        },
        ["rules", id] => match (method, id.parse::<u64>()) {
            ("DELETE", Ok(id)) if control.remove(id) => ok(json!({ "removed": 1 })),
            ("DELETE", Ok(id)) => not_found(format!("no rule {id}")),
            ("DELETE", Err(_)) => bad(format!("rule id {id:?} is not a number")),
            _ => allowed("DELETE"),
        },
        ["log"] => match method {
            "GET" => log(control, request),
            "DELETE" => {
                control.log().clear();
                ok(json!({}))
            }
            _ => allowed("GET, DELETE"),
        },
        ["counts"] => match method {
            "GET" => ok(json!(control.log().counts())),
            _ => allowed("GET"),
        },
        ["brokers"] => match method {
            "GET" => ok(json!(control
                .brokers()
                .iter()
                .map(|broker| json!({
                    "id": broker.node_id,
                    "address": broker.address.to_string(),
                    "up": control.is_up(broker.node_id),
                    "fenced": control.is_fenced(broker.node_id),
                    "catchingUp": control.is_catching_up(broker.node_id),
                    "latencyMs": control.latency(broker.node_id).as_millis() as u64,
                }))
                .collect::<Vec<_>>())),
            "POST" => {
                let body = match json_body(request) {
                    Ok(body) => body,
                    Err(answer) => return answer,
                };
                add_broker(control, &body)
            }
            _ => allowed("GET, POST"),
        },
        ["brokers", id] => {
            let Ok(node) = id.parse::<i32>() else {
                return bad(format!("broker id {id:?} is not a number"));
            };
            match method {
                "DELETE" => match control.remove_broker(node) {
                    Ok(removed) => ok(json!({
                        "id": removed.node_id,
                        "standIn": removed.stand_in,
                        "movedLeaders": leaders_json(&removed.moved_leaders),
                        "movedGroups": removed.moved_groups,
                    })),
                    Err(e) => refused(e),
                },
                _ => allowed("DELETE"),
            }
        }
        ["brokers", id, operation] => {
            let Ok(node) = id.parse::<i32>() else {
                return bad(format!("broker id {id:?} is not a number"));
            };
            let done = match (*operation, method) {
                ("fence", "POST") => {
                    let running = match request.query.as_slice() {
                        [] => false,
                        [(key, value)] if key == "running" => match value.as_str() {
                            "true" => true,
                            "false" => false,
                            other => {
                                return bad(format!("running: {other:?} is not true or false"))
                            }
                        },
                        other => {
                            let keys: Vec<&str> = other.iter().map(|(k, _)| k.as_str()).collect();
                            return bad(format!("unknown parameters {keys:?} (known: running)"));
                        }
                    };
                    let fenced = if running {
                        control.fence_running_broker(node)
                    } else {
                        control.fence_broker(node)
                    };
                    return match fenced {
                        Ok(fenced) => ok(json!({
                            "id": fenced.node_id,
                            "standIn": fenced.stand_in,
                            "movedLeaders": leaders_json(&fenced.moved_leaders),
                            "movedGroups": fenced.moved_groups,
                        })),
                        Err(e) => refused(e),
                    };
                }
                ("reassign-and-remove", "POST") => {
                    return match control.reassign_and_remove_broker(node) {
                        Ok(removed) => ok(json!({
                            "id": removed.node_id,
                            "successor": removed.successor,
                            "movedLeaders": leaders_json(&removed.moved_leaders),
                            "movedGroups": removed.moved_groups,
                        })),
                        Err(e) => refused(e),
                    };
                }
                ("stop", "POST") => control.stop_broker(node),
                ("crash", "POST") => control.crash_broker(node),
                ("restart", "POST") => control.restart_broker(node),
                ("unfence", "POST") => control.unfence_broker(node),
                ("latency", "PUT") => {
                    let body = match json_body(request) {
                        Ok(body) => body,
                        Err(answer) => return answer,
                    };
                    match latency_from_json(&body) {
                        Ok(latency) => control.set_latency(node, latency),
                        Err(why) => return bad(why),
                    }
                }
                ("stop" | "crash" | "restart" | "fence" | "unfence" | "reassign-and-remove", _) => {
                    return allowed("POST")
                }
                ("latency", _) => return allowed("PUT"),
                _ => return not_found(format!("no operation {operation:?}")),
            };
            match done {
                Ok(()) => ok(json!({ "id": node, "up": control.is_up(node),
                    "fenced": control.is_fenced(node),
                    "catchingUp": control.is_catching_up(node),
                    "crashed": control.is_crashed(node),
                    "latencyMs": control.latency(node).as_millis() as u64 })),
                Err(e) => refused(e),
            }
        }
        ["leaders", "rebalance"] => match method {
            "POST" => ok(json!({ "movedLeaders": leaders_json(&control.rebalance_leaders()) })),
            _ => allowed("POST"),
        },
        ["leaders", "unclean"] => match method {
            "POST" => {
                ok(json!({ "electedLeaders": leaders_json(&control.elect_unclean_leaders()) }))
            }
            _ => allowed("POST"),
        },
        ["topics", topic, "partitions"] => match method {
            "GET" => topic_partitions(control, topic),
            _ => allowed("GET"),
        },
        ["leaders"] => match method {
            "POST" => {
                let body = match json_body(request) {
                    Ok(body) => body,
                    Err(answer) => return answer,
                };
                move_leader(control, &body)
            }
            _ => allowed("POST"),
        },
        ["topics", topic, operation] => {
            let done = match (*operation, method) {
                ("retention", "POST") => control.apply_retention(topic),
                ("compaction", "POST") => control.compact(topic),
                ("retention" | "compaction", _) => return allowed("POST"),
                _ => return not_found(format!("no operation {operation:?}")),
            };
            match done {
                Ok(partitions) => ok(json!({ "topic": topic, "partitions": partitions
                    .iter()
                    .map(|p| json!({
                        "partition": p.partition,
                        "batchesRemoved": p.batches_removed,
                        "recordsRemoved": p.records_removed,
                        "logStartOffset": p.log_start,
                        "highWatermark": p.high_watermark,
                    }))
                    .collect::<Vec<_>>() })),
                Err(e) => refused(e),
            }
        }
        ["groups"] => match method {
            "GET" => ok(groups(control)),
            _ => allowed("GET"),
        },
        ["coordinators"] => match method {
            "POST" => with_body(request, move_coordinator(control)),
            _ => allowed("POST"),
        },
        ["sessions", "expire"] => match method {
            "POST" => with_body(request, expire_session(control)),
            _ => allowed("POST"),
        },
        ["producers", "fence"] => match method {
            "POST" => with_body(request, fence_producer(control)),
            _ => allowed("POST"),
        },
        ["quorum"] => match method {
            "GET" => quorum_answer(control.quorum()),
            _ => allowed("GET"),
        },
        ["quorum", "voters"] => match method {
            "POST" => with_body(request, |body| match node_field(body, "id") {
                Ok(id) => voter_change(control, control.add_voter(id)),
                Err(answer) => answer,
            }),
            _ => allowed("POST"),
        },
        ["quorum", "voters", id] => match (method, id.parse::<i32>()) {
            ("DELETE", Ok(id)) => voter_change(control, control.remove_voter(id)),
            ("DELETE", Err(_)) => bad(format!("voter id {id:?} is not a number")),
            _ => allowed("DELETE"),
        },
        ["quorum", "fetching"] => match method {
            "PUT" => with_body(request, |body| {
                let object = match fields(body, &["fetching"]) {
                    Ok(object) => object,
                    Err(answer) => return answer,
                };
                let Some(fetching) = object.get("fetching").and_then(Value::as_bool) else {
                    return bad("fetching: expected true or false");
                };
                match control.set_quorum_fetching(fetching) {
                    Ok(()) => quorum_answer(control.quorum()),
                    Err(e) => refused(e),
                }
            }),
            _ => allowed("PUT"),
        },
        ["quorum", "fetch"] => match method {
            "POST" => with_body(request, |body| match node_field(body, "id") {
                Ok(id) => quorum_answer(control.quorum_fetch(id)),
                Err(answer) => answer,
            }),
            _ => allowed("POST"),
        },
        ["transactions", "fence"] => match method {
            "POST" => with_body(request, fence_transactional_id(control)),
            _ => allowed("POST"),
        },
        _ => not_found(format!("no route {}", request.path)),
    }
}

/// Reads the body as JSON and hands it to `then`.
/// Partitions and their new leaders, as the operations that move or elect leaders answer
/// them.
fn leaders_json(leaders: &[(String, i32, i32)]) -> Vec<Value> {
    leaders
        .iter()
        .map(|(topic, partition, leader)| {
            json!({ "topic": topic, "partition": partition, "leader": leader })
        })
        .collect()
}

fn with_body(request: &HttpRequest, then: impl FnOnce(&Value) -> Answer) -> Answer {
    match json_body(request) {
        Ok(body) => then(&body),
        Err(answer) => answer,
    }
}

/// The body's fields, when it is an object holding only `known` ones.
fn fields<'a>(
    body: &'a Value,
    known: &[&str],
) -> Result<&'a kafka_codec::serde_json::Map<String, Value>, Answer> {
    let form = || {
        known
            .iter()
            .map(|key| format!("\"{key}\": ..."))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(object) = body.as_object() else {
        return Err(bad(format!("expected {{{}}}", form())));
    };
    if let Some(unknown) = object.keys().find(|key| !known.contains(&key.as_str())) {
        return Err(bad(format!(
            "unknown field {unknown:?} (known: {})",
            known.join(", ")
        )));
    }
    Ok(object)
}

fn string_field<'a>(
    object: &'a kafka_codec::serde_json::Map<String, Value>,
    key: &str,
    what: &str,
) -> Result<&'a str, Answer> {
    object
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| bad(format!("{key}: expected {what}")))
}

fn groups(control: &ControlHandle) -> Value {
    let brokers = control.shared.placement_brokers;
    let groups = control.shared.groups();
    json!(groups
        .groups
        .iter()
        .map(|(id, group)| json!({
            "group": id,
            "coordinator": control.coordinator(id, brokers),
            "state": group.state.name(),
            "generation": group.generation,
            "protocolType": group.protocol_type,
            "protocol": group.protocol_name,
            "leader": group.leader,
            "members": group.members.iter().map(|member| json!({
                "member": member.id,
                "instanceId": member.instance_id,
                "clientId": member.client_id,
                "host": member.client_host,
            })).collect::<Vec<_>>(),
        }))
        .collect::<Vec<_>>())
}

fn move_coordinator(control: &ControlHandle) -> impl FnOnce(&Value) -> Answer + '_ {
    move |body| {
        let object = match fields(body, &["group", "transactionalId", "coordinator"]) {
            Ok(object) => object,
            Err(answer) => return answer,
        };
        let Some(to) = object
            .get("coordinator")
            .and_then(Value::as_i64)
            .and_then(|n| i32::try_from(n).ok())
        else {
            return bad("coordinator: expected a broker id");
        };
        if object.contains_key("transactionalId") {
            if object.contains_key("group") {
                return bad("group, transactionalId: give one of them");
            }
            let id = match string_field(object, "transactionalId", "a transactional id") {
                Ok(id) => id,
                Err(answer) => return answer,
            };
            return match control.move_transaction_coordinator(id, to) {
                Ok(previous) => ok(json!({
                    "transactionalId": id,
                    "coordinator": to,
                    "previous": previous,
                })),
                Err(e) => refused(e),
            };
        }
        let group = match string_field(object, "group", "a group id") {
            Ok(group) => group,
            Err(answer) => return answer,
        };
        match control.move_coordinator(group, to) {
            Ok(previous) => ok(json!({ "group": group, "coordinator": to, "previous": previous })),
            Err(e) => refused(e),
        }
    }
}

fn expire_session(control: &ControlHandle) -> impl FnOnce(&Value) -> Answer + '_ {
    move |body| {
        let object = match fields(body, &["group", "member"]) {
            Ok(object) => object,
            Err(answer) => return answer,
        };
        let (group, member) = match (
            string_field(object, "group", "a group id"),
            string_field(object, "member", "a member id"),
        ) {
            (Ok(group), Ok(member)) => (group, member),
            (Err(answer), _) | (_, Err(answer)) => return answer,
        };
        match control.expire_session(group, member) {
            Ok(()) => ok(json!({ "group": group, "member": member, "expired": true })),
            Err(e) => refused(e),
        }
    }
}

fn fence_producer(control: &ControlHandle) -> impl FnOnce(&Value) -> Answer + '_ {
    move |body| {
        let object = match fields(body, &["producerId"]) {
            Ok(object) => object,
            Err(answer) => return answer,
        };
        let Some(producer_id) = object.get("producerId").and_then(Value::as_i64) else {
            return bad("producerId: expected a producer id");
        };
        match control.fence_producer(producer_id) {
            Ok(epoch) => ok(json!({ "producerId": producer_id, "firstAcceptedEpoch": epoch })),
            Err(e) => refused(e),
        }
    }
}

fn fence_transactional_id(control: &ControlHandle) -> impl FnOnce(&Value) -> Answer + '_ {
    move |body| {
        let object = match fields(body, &["transactionalId"]) {
            Ok(object) => object,
            Err(answer) => return answer,
        };
        let Some(id) = object.get("transactionalId").and_then(Value::as_str) else {
            return bad("transactionalId: expected a string");
        };
        match control.fence_transactional_id(id) {
            Ok((producer_id, epoch)) => ok(json!({
                "transactionalId": id,
                "producerId": producer_id,
                "producerEpoch": epoch,
            })),
            Err(e) => refused(e),
        }
    }
}

fn log(control: &ControlHandle, request: &HttpRequest) -> Answer {
    let mut api = None;
    let mut after = None;
    for (key, value) in &request.query {
        match key.as_str() {
            "api" => match api_from_json(&json!(value), "api") {
                Ok(found) => api = Some(found),
                Err(e) => return bad(e),
            },
            "after" => match value.parse::<u64>() {
                Ok(sequence) => after = Some(sequence),
                Err(_) => return bad(format!("after: {value:?} is not a sequence number")),
            },
            other => {
                return bad(format!(
                    "unknown query parameter {other:?} (known: api, after)"
                ))
            }
        }
    }
    let entries: Vec<Value> = control
        .log()
        .entries()
        .iter()
        .filter(|entry| api.is_none_or(|api| entry.api == api))
        .filter(|entry| after.is_none_or(|after| entry.sequence > after))
        .map(logged_to_json)
        .collect();
    ok(json!(entries))
}

fn latency_from_json(body: &Value) -> Result<Duration, String> {
    let Some(object) = body.as_object() else {
        return Err("expected {\"ms\": N}".into());
    };
    if let Some(unknown) = object.keys().find(|key| *key != "ms") {
        return Err(format!("unknown field {unknown:?} (known: ms)"));
    }
    object
        .get("ms")
        .and_then(Value::as_u64)
        .map(Duration::from_millis)
        .ok_or_else(|| "ms: expected a whole number of milliseconds".into())
}

fn move_leader(control: &ControlHandle, body: &Value) -> Answer {
    let object = match fields(body, &["topic", "partition", "leader"]) {
        Ok(object) => object,
        Err(answer) => return answer,
    };
    let topic = match string_field(object, "topic", "a topic name") {
        Ok(topic) => topic,
        Err(answer) => return answer,
    };
    let number = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_i64)
            .and_then(|n| i32::try_from(n).ok())
    };
    let Some(partition) = number("partition") else {
        return bad("partition: expected a partition index");
    };
    let Some(leader) = number("leader") else {
        return bad("leader: expected a broker id");
    };
    match control.move_leader(topic, partition, leader) {
        Ok(epoch) => ok(json!({ "topic": topic, "partition": partition,
            "leader": leader, "leaderEpoch": epoch })),
        Err(e) => refused(e),
    }
}

/// `{"id": N}`: the node id.
fn node_field(body: &Value, key: &str) -> Result<i32, Answer> {
    let object = fields(body, &[key])?;
    object
        .get(key)
        .and_then(Value::as_i64)
        .and_then(|n| i32::try_from(n).ok())
        .ok_or_else(|| bad(format!("{key}: expected a node id")))
}

fn quorum_answer(view: Result<super::QuorumView, super::OperationError>) -> Answer {
    match view {
        Ok(view) => ok(json!({
            "leader": view.leader,
            "epoch": view.epoch,
            "logEndOffset": view.log_end_offset,
            "highWatermark": view.high_watermark,
            "currentVoters": view.current_voters,
            "committedVoters": view.committed_voters,
            "observers": view.observers,
            "fetching": view.fetching,
        })),
        Err(e) => refused(e),
    }
}

/// A voter change's answer: the offset of the voter set appended and the quorum after it;
/// a change the leader refused is 409 with its reason.
fn voter_change(control: &ControlHandle, appended: Result<i64, super::OperationError>) -> Answer {
    match appended {
        Ok(offset) => {
            let (_, mut body) = quorum_answer(control.quorum());
            if let Some(object) = body.as_object_mut() {
                object.insert("offset".into(), json!(offset));
            }
            ("202 Accepted", body)
        }
        Err(e) => refused(e),
    }
}

/// `POST /brokers`: `{}` or `{"port": N}`.
fn add_broker(control: &ControlHandle, body: &Value) -> Answer {
    let port = match fields(body, &["port"]) {
        Err(answer) => return answer,
        Ok(object) => match object.get("port") {
            None | Some(Value::Null) => None,
            Some(port) => match port.as_u64().and_then(|port| u16::try_from(port).ok()) {
                Some(port) => Some(port),
                None => return bad(format!("port: expected a port number, not {port}")),
            },
        },
    };
    match control.add_broker(port) {
        Ok(broker) => ok(json!({
            "id": broker.node_id,
            "address": broker.address.to_string(),
            "up": control.is_up(broker.node_id),
        })),
        // The port is taken, or the next id is a controller's: the cluster's state refuses.
        Err(e) => refused(e),
    }
}
