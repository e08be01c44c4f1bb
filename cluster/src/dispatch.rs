//! The one place every decoded request passes through on its way to a handler, so that
//! what sits here works in front of every handler at once: the control surface
//! ([`control::intercept`]: fault rules, latency, the request log) and the version limits
//! (next: those of an older Kafka release, `--as-version`), the SASL gate (before a
//! connection has authenticated, only ApiVersions, SaslHandshake and SaslAuthenticate pass)
//! and, with SASL on, the ACLs ([`authorizer`]: what each request needs, and the topics a
//! Metadata answer may list).

use crate::authorizer;
use crate::control::{self, Caller};
use crate::handlers;
use crate::release;
use crate::sasl::{Gate, Session};
use crate::{Served, Shared};
use kafka_codec::conn::IncomingRequest;
use kafka_codec::{ApiKey, ErrorCode, Request, Response, ResponseFrame};
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

/// Answers `request`, received by broker `node_id` on `connection` from `peer` (whose SASL
/// progress is `session`), as the control surface's rules say (see [`control`]), and shows
/// it to the request observer. When `session` has failed after this, the transport closes
/// the connection once the reply is written.
pub async fn dispatch(
    shared: &Shared,
    node_id: i32,
    connection: u64,
    peer: SocketAddr,
    request: &IncomingRequest,
    session: &mut Session,
) -> Reply {
    let started = std::time::Instant::now();
    let caller = Caller {
        node_id,
        connection,
        peer,
    };
    let reply = control::intercept(shared, &caller, request, || {
        decide(shared, node_id, peer, request, session)
    })
    .await;
    if let Some(observer) = &shared.observer {
        (observer.0)(&Served {
            node_id,
            controller: shared.is_controller(node_id),
            peer,
            request,
            reply: &reply,
            elapsed: started.elapsed(),
        });
    }
    reply
}

async fn decide(
    shared: &Shared,
    node_id: i32,
    peer: SocketAddr,
    request: &IncomingRequest,
    session: &mut Session,
) -> Reply {
    if let Some(reply) = sasl_gate(request, session) {
        return reply;
    }
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
    let authority = authorizer::Authority::new(shared, session.user(), peer.ip());
    if let Some(reply) = refuse_whole(shared, &authority, request) {
        return reply;
    }
    let (mut response, finish) =
        match authorizer::split(&request.body, request.api_version, &authority) {
            authorizer::Verdict::Answer(body) => (Some(body), None),
            authorizer::Verdict::Handle {
                request: allowed,
                finish,
            } => {
                let context = handlers::Context {
                    shared,
                    node_id,
                    version: request.api_version,
                    peer,
                };
                let response = match allowed {
                    // The entries the principal may touch, the others answered by `finish`.
                    Some(body) => {
                        let allowed = IncomingRequest {
                            header: request.header.clone(),
                            body,
                            api_version: request.api_version,
                        };
                        handlers::handle(&context, &allowed, session).await
                    }
                    None => handlers::handle(&context, request, session).await,
                };
                (response, finish)
            }
        };
    if let (Some(Response::Metadata(body)), Some(user), Request::Metadata(asked)) =
        (&mut response, session.user(), &request.body)
    {
        // Null topics, or v0's empty list: every topic.
        let every_topic = asked
            .topics
            .as_ref()
            .is_none_or(|topics| topics.is_empty() && request.api_version == 0);
        authorizer::limit_metadata(
            &shared.acls(),
            &shared.super_users,
            &format!("User:{user}"),
            peer.ip(),
            every_topic,
            body,
        );
    }
    let close = match (finish, &mut response) {
        (Some(finish), Some(body)) => finish(&authority, body),
        _ => false,
    };
    if close {
        // Kafka closes the connection of a Produce with acks 0 it refused in part.
        return Reply::Close(format!("{api} is not authorized for every entry"));
    }
    if !request.expects_response() {
        return Reply::Nothing;
    }
    match response {
        Some(body) => Reply::Respond(Box::new(request.respond(body))),
        None => Reply::Close(format!("{api} has no handler")),
    }
}

/// What Kafka's SASL authenticator does with a request the connection may not send yet:
/// before the handshake, anything but ApiVersions (once) and SaslHandshake closes the
/// connection; after a v1 handshake, anything but SaslAuthenticate is answered with
/// ILLEGAL_SASL_STATE and then the connection closes. `None`: the request goes on.
fn sasl_gate(request: &IncomingRequest, session: &mut Session) -> Option<Reply> {
    let api = request.api_key();
    match session.gate() {
        Gate::Open => None,
        Gate::Handshake => match api {
            ApiKey::SaslHandshake => None,
            ApiKey::ApiVersions if session.versions_asked() => None,
            _ => Some(Reply::Close(format!(
                "{api} before SASL authentication (only ApiVersions and SaslHandshake are \
                 served before it)"
            ))),
        },
        Gate::Authenticate if api == ApiKey::SaslAuthenticate => None,
        Gate::Authenticate => {
            session.fail();
            let why = format!("Unexpected Kafka request of type {api} during SASL authentication.");
            match kafka_codec::error_response(
                &request.body,
                request.api_version,
                ErrorCode::ILLEGAL_SASL_STATE,
                Some(&why),
            ) {
                Ok(body) if request.expects_response() => {
                    Some(Reply::Respond(Box::new(request.respond(body))))
                }
                _ => Some(Reply::Close(why)),
            }
        }
        // The transport reads raw tokens itself; a failed session is closing.
        Gate::RawTokens | Gate::Closed => {
            Some(Reply::Close(format!("{api} during SASL authentication")))
        }
    }
}

/// The ACL check of what a request needs as a whole, in front of every handler (see
/// [`authorizer::needs`]; entry by entry: [`authorizer::split`]): with SASL on, a request
/// that needs an operation the connection's principal may not do is answered with the
/// authorization error of the first one denied, in every error field the response has.
/// `None`: allowed (or SASL off).
fn refuse_whole(
    shared: &Shared,
    authority: &authorizer::Authority<'_>,
    request: &IncomingRequest,
) -> Option<Reply> {
    if !authority.enforced() {
        return None;
    }
    let needs = authorizer::needs(&request.body, &shared.state());
    let denied = needs.iter().find(|need| !authority.may(need))?;
    let error = denied.denied();
    let refused = match authorizer::top_level_refusal(&request.body, denied) {
        Some(body) => Ok(body),
        None => kafka_codec::error_response(&request.body, request.api_version, error, None).map(
            |mut body| {
                authorizer::finish_refusal(&request.body, request.api_version, denied, &mut body);
                body
            },
        ),
    };
    Some(match refused {
        Ok(body) if request.expects_response() => Reply::Respond(Box::new(request.respond(body))),
        // Kafka closes the connection of a Produce with acks 0 that it refuses.
        _ => Reply::Close(format!("{} is not authorized: {error}", request.api_key())),
    })
}
