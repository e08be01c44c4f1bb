//! What the control surface does to one request on its way through
//! [`dispatch`](crate::dispatch::dispatch): the broker's latency, the first matching rule's
//! action around the handler, and the request log's entry.

use super::{Action, Caller};
use crate::dispatch::Reply;
use crate::Shared;
use kafka_codec::bytes::{Bytes, BytesMut};
use kafka_codec::conn::IncomingRequest;
use kafka_codec::{Response, ResponseFrame};
use std::future::Future;
// tokio's clock: paused in a deterministic test, so the log's times are simulated.
use tokio::time::Instant;

/// Answers `request` through `handle` (the version checks and the handler), as the rules
/// and the broker's latency say, and logs it.
pub async fn intercept<F, Fut>(
    shared: &Shared,
    caller: &Caller,
    request: &IncomingRequest,
    handle: F,
) -> Reply
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Reply>,
{
    let received = Instant::from_std(crate::clock::now());
    let control = &shared.control;
    // A request read just as its broker was stopped: a stopped broker answers nothing.
    if !control.is_up(caller.node_id) {
        let reply = Reply::Close("the broker is stopped".to_owned());
        control
            .log
            .record(caller, request, received, describe(&reply));
        return reply;
    }
    let latency = control.latency(caller.node_id);
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let (reply, outcome) = match control.action_for(caller, request) {
        None => {
            let reply = handle().await;
            let outcome = describe(&reply);
            (reply, outcome)
        }
        Some((id, action)) => {
            let label = format!("rule {id}: {}", name(&action));
            (act(request, action, handle).await, label)
        }
    };
    control.log.record(caller, request, received, outcome);
    reply
}

/// How the log names what the cluster did without a rule.
fn describe(reply: &Reply) -> String {
    match reply {
        Reply::Respond(_) => "answered".to_owned(),
        Reply::Nothing => "no answer".to_owned(),
        Reply::Close(why) => format!("closed: {why}"),
    }
}

/// How the log names an action.
fn name(action: &Action) -> String {
    match action {
        Action::Pass => "pass".to_owned(),
        Action::Error(code) => format!("error {}", code.name().unwrap_or("?")),
        Action::Delay(delay) => format!("delay {} ms", delay.as_millis()),
        Action::DelayThen(delay, then) => {
            format!("delay {} ms, then {}", delay.as_millis(), name(then))
        }
        Action::Disconnect => "disconnect".to_owned(),
        Action::Silence => "silence".to_owned(),
        Action::CorruptRecords => "corrupt records".to_owned(),
        Action::ApplyThen(then) => format!("apply, then {}", name(then)),
        Action::Respond(_) | Action::RespondJson(_) => "respond".to_owned(),
    }
}

async fn act<F, Fut>(request: &IncomingRequest, action: Action, handle: F) -> Reply
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Reply>,
{
    // Unrolled, so that the nesting an action allows (delay then, apply then) needs no
    // recursion of async functions.
    let mut action = action;
    loop {
        match action {
            Action::Pass => return handle().await,
            Action::Delay(delay) => {
                tokio::time::sleep(delay).await;
                return handle().await;
            }
            Action::DelayThen(delay, then) => {
                tokio::time::sleep(delay).await;
                action = *then;
            }
            Action::Error(code) => return error_reply(request, code),
            Action::Disconnect => return Reply::Close("disconnected by a fault rule".to_owned()),
            Action::Silence => return Reply::Nothing,
            Action::CorruptRecords => return corrupt(handle().await),
            Action::Respond(body) => return respond(request, *body),
            Action::RespondJson(body) => return respond_json(request, &body),
            Action::ApplyThen(then) => {
                let applied = handle().await;
                return after_applied(request, applied, *then).await;
            }
        }
    }
}

/// What the client gets of a request that took effect (`applied`), as `then` says.
async fn after_applied(request: &IncomingRequest, applied: Reply, then: Action) -> Reply {
    let mut then = then;
    loop {
        match then {
            Action::Pass | Action::ApplyThen(_) => return applied,
            Action::Delay(delay) => {
                tokio::time::sleep(delay).await;
                return applied;
            }
            Action::DelayThen(delay, next) => {
                tokio::time::sleep(delay).await;
                then = *next;
            }
            Action::Error(code) => return error_reply(request, code),
            Action::Disconnect => {
                return Reply::Close("disconnected by a fault rule after applying".to_owned())
            }
            Action::Silence => return Reply::Nothing,
            Action::CorruptRecords => return corrupt(applied),
            Action::Respond(body) => return respond(request, *body),
            Action::RespondJson(body) => return respond_json(request, &body),
        }
    }
}

/// The API's own answer failing the request with `code` where the API carries errors; a
/// request that expects no answer (acks 0) gets none, and one whose response has no place
/// for an error this request reaches has its connection closed, which every client takes as
/// a failed request.
fn error_reply(request: &IncomingRequest, code: kafka_codec::ErrorCode) -> Reply {
    if !request.expects_response() {
        return Reply::Nothing;
    }
    match kafka_codec::error_response(
        &request.body,
        request.api_version,
        code,
        Some("injected by a kafka-codec-cluster fault rule"),
    ) {
        Ok(body) => Reply::Respond(Box::new(request.respond(body))),
        Err(e) => Reply::Close(format!("fault rule: {e}")),
    }
}

fn respond(request: &IncomingRequest, body: Response) -> Reply {
    if body.api_key() != request.api_key() {
        return Reply::Close(format!(
            "fault rule: a {} response to a {} request",
            body.api_key(),
            request.api_key()
        ));
    }
    Reply::Respond(Box::new(request.respond(body)))
}

fn respond_json(request: &IncomingRequest, body: &kafka_codec::serde_json::Value) -> Reply {
    match Response::from_json(request.api_key(), body, request.api_version) {
        Ok(body) => respond(request, body),
        Err(e) => Reply::Close(format!(
            "fault rule: the response given does not read as {} v{}: {e}",
            request.api_key(),
            request.api_version
        )),
    }
}

/// `reply` with every record batch of a Fetch answer given a wrong CRC.
fn corrupt(reply: Reply) -> Reply {
    let Reply::Respond(mut frame) = reply else {
        return reply;
    };
    let ResponseFrame { body, .. } = &mut *frame;
    if let Response::Fetch(fetch) = body {
        for topic in &mut fetch.responses {
            for partition in &mut topic.partitions {
                if let Some(records) = &mut partition.records {
                    *records = corrupt_batches(records);
                }
            }
        }
    }
    Reply::Respond(frame)
}

/// Where a v2 batch keeps its CRC (over everything after it): in the batch
/// header, after base offset (8), length (4), leader epoch (4) and magic (1).
const CRC_AT: usize = 17;

/// The batches of `records` with each one's CRC field inverted: the framing (offsets,
/// lengths) is as it was, so a client reads every batch and finds each one corrupt.
pub(crate) fn corrupt_batches(records: &Bytes) -> Bytes {
    let mut out = BytesMut::from(&records[..]);
    let mut at = 0;
    while at + CRC_AT + 4 <= out.len() {
        let length = i32::from_be_bytes([out[at + 8], out[at + 9], out[at + 10], out[at + 11]]);
        let Ok(length) = usize::try_from(length) else {
            break;
        };
        let end = at + 12 + length;
        if end > out.len() {
            break;
        }
        for byte in &mut out[at + CRC_AT..at + CRC_AT + 4] {
            *byte = !*byte;
        }
        at = end;
    }
    out.freeze()
}
