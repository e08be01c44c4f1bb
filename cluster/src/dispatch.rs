//! The one place every decoded request passes through on its way to a handler, so that
//! what sits here works in front of every handler at once: the control surface
//! ([`control::intercept`]: fault rules, latency, the request log) and the version limits
//! (next: those of an older Kafka release, `--as-version`).

use crate::control::{self, Caller};
use crate::handlers;
use crate::release;
use crate::{Served, Shared};
use kafka_codec::conn::IncomingRequest;
use kafka_codec::ResponseFrame;
use std::net::SocketAddr;

/// What the transport does with a request.
#[derive(Debug)]
pub enum Reply {
    /// Send this response.
    Respond(Box<ResponseFrame>),
    /// Send nothing (a Produce with `acks = 0`).
    Nothing,
    /// Close the connection, as Kafka does for a request it does not serve.
    Close(String),
}

/// Answers `request`, received by broker `node_id` on `connection` from `peer`, as the
/// control surface's rules say (see [`control`]), and shows it to the request observer.
pub async fn dispatch(
    shared: &Shared,
    node_id: i32,
    connection: u64,
    peer: SocketAddr,
    request: &IncomingRequest,
) -> Reply {
    let caller = Caller {
        node_id,
        connection,
        peer,
    };
    let reply = control::intercept(shared, &caller, request, || {
        decide(shared, node_id, peer, request)
    })
    .await;
    if let Some(observer) = &shared.observer {
        (observer.0)(&Served {
            node_id,
            controller: shared.is_controller(node_id),
            peer,
            request,
            reply: &reply,
        });
    }
    reply
}

async fn decide(
    shared: &Shared,
    node_id: i32,
    peer: SocketAddr,
    request: &IncomingRequest,
) -> Reply {
    // A newer client's ApiVersions (UNSUPPORTED_VERSION at v0, so the client retries lower),
    // and what an older release refused.
    if let Some(reply) = release::intercept(shared, request) {
        return reply;
    }
    let api = request.api_key();
    let advertised = shared
        .advertised_on(node_id)
        .get(api.key())
        .is_some_and(|range| range.contains(request.api_version));
    if !advertised {
        // Kafka closes the connection on an API or version it does not serve.
        return Reply::Close(format!("{api} v{} is not served", request.api_version));
    }
    let context = handlers::Context {
        shared,
        node_id,
        version: request.api_version,
        peer,
    };
    let response = handlers::handle(&context, request).await;
    if !request.expects_response() {
        return Reply::Nothing;
    }
    match response {
        Some(body) => Reply::Respond(Box::new(request.respond(body))),
        None => Reply::Close(format!("{api} has no handler")),
    }
}
