//! TLS failures in words: what is wrong and what to do, on either end of a connection. One
//! place turns rustls's errors (and a handshake the peer cut short) into the sentence every
//! command logs or prints, so that the tap, `quorum serve` and `quorum describe` say the same
//! thing about the same failure.

use crate::other_protocol::OtherProtocol;
use rustls::pki_types::{ServerName, UnixTime};
use rustls::{AlertDescription, CertificateError, Error, PeerIncompatible};
use std::io;
use std::time::{Duration, SystemTime};

/// The flags of a command's client side, named in the advice.
#[derive(Debug)]
pub struct ClientFlags {
    /// What the peer is called: "the upstream", "the controller".
    pub peer: &'static str,
    pub tls: &'static str,
    pub ca: &'static str,
    pub server_name: &'static str,
    pub cert: &'static str,
    pub key: &'static str,
}

/// The tap's upstream.
pub const UPSTREAM: ClientFlags = ClientFlags {
    peer: "the upstream",
    tls: "--upstream-tls",
    ca: "--upstream-ca",
    server_name: "--upstream-server-name",
    cert: "--upstream-tls-cert",
    key: "--upstream-tls-key",
};

/// A quorum command's controller.
pub const CONTROLLER: ClientFlags = ClientFlags {
    peer: "the controller",
    tls: "--tls",
    ca: "--tls-ca",
    server_name: "--tls-server-name",
    cert: "--tls-cert",
    key: "--tls-key",
};

/// Which end of the connection the tool is.
#[derive(Debug, Clone, Copy)]
pub enum Side {
    /// The tool connected to a server; `client_cert` says whether it has one to present.
    Client {
        flags: &'static ClientFlags,
        client_cert: bool,
    },
    /// A client connected to the tool's TLS listener.
    Server,
}

/// A date as RFC 3339 (UTC, seconds).
fn date(time: UnixTime) -> String {
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(time.as_secs());
    humantime::format_rfc3339_seconds(at).to_string()
}

/// A variant's name split into lower-case words joined by `separator`:
/// `BadCertificate` → `bad_certificate`, `NoCipherSuitesInCommon` → `no cipher suites in
/// common`.
fn words(variant: &str, separator: char) -> String {
    let mut words = String::new();
    let mut after_lower = false;
    for c in variant.chars() {
        if c.is_ascii_uppercase() && after_lower {
            words.push(separator);
        }
        after_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        words.push(c.to_ascii_lowercase());
    }
    words
}

/// An alert as the TLS specification names it (`bad_certificate`).
fn alert_name(alert: &AlertDescription) -> String {
    words(&format!("{alert:?}"), '_')
}

/// A name as the certificate has it: webpki presents them as `DnsName("kafka.example")` and
/// `IpAddress(10.1.2.3)`.
fn bare_name(presented: &str) -> &str {
    for (start, end) in [("DnsName(\"", "\")"), ("IpAddress(", ")")] {
        if let Some(name) = presented
            .strip_prefix(start)
            .and_then(|rest| rest.strip_suffix(end))
        {
            return name;
        }
    }
    presented
}

/// A certificate's failure, said of `whose` ("the upstream's certificate").
fn certificate(error: &CertificateError, whose: &str, side: Side) -> String {
    let trust = match side {
        Side::Client { flags, .. } => format!(
            "give {} a PEM file with the CA that signed it (or the certificate itself, if it \
             is self-signed)",
            flags.ca
        ),
        Side::Server => "--listen-tls-client-ca must hold the CA that signed it (or \
                                the certificate itself, if it is self-signed)"
            .to_owned(),
    };
    match error {
        CertificateError::ExpiredContext { time, not_after } => format!(
            "{whose} expired on {} (it is now {}): renew it",
            date(*not_after),
            date(*time)
        ),
        CertificateError::Expired => format!("{whose} has expired: renew it"),
        CertificateError::NotValidYetContext { time, not_before } => format!(
            "{whose} is not valid before {} (it is now {}): check the clocks, or wait",
            date(*not_before),
            date(*time)
        ),
        CertificateError::NotValidYet => {
            format!("{whose} is not valid yet: check the clocks, or wait")
        }
        CertificateError::NotValidForNameContext {
            expected,
            presented,
        } => {
            let asked = match expected {
                ServerName::DnsName(name) => name.as_ref().to_owned(),
                ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
                other => format!("{other:?}"),
            };
            let names = if presented.is_empty() {
                "no DNS name or IP address (subjectAltName)".to_owned()
            } else {
                presented
                    .iter()
                    .map(|name| bare_name(name))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let fix = match side {
                Side::Client { flags, .. } => format!(
                    "connect by one of its names, or give {} with one of them",
                    flags.server_name
                ),
                Side::Server => "give it a certificate for that name".to_owned(),
            };
            format!("{whose} is not for {asked}: it names {names}; {fix}")
        }
        CertificateError::NotValidForName => format!(
            "{whose} is not for the name connected to: connect by one of its names{}",
            match side {
                Side::Client { flags, .. } => format!(", or give {}", flags.server_name),
                Side::Server => String::new(),
            }
        ),
        CertificateError::UnknownIssuer => {
            format!("{whose} is not signed by a trusted certificate authority: {trust}")
        }
        CertificateError::BadSignature => format!(
            "{whose}'s signature does not verify with its issuer's key (a certificate of \
             another CA with the same name?): {trust}"
        ),
        CertificateError::BadEncoding => format!("{whose} is not a well-formed certificate"),
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
            let usage = match side {
                Side::Client { .. } => "serverAuth",
                Side::Server => "clientAuth",
            };
            format!(
                "{whose} is not for this use: its extended key usage lacks {usage}; issue \
                 one that allows it"
            )
        }
        CertificateError::UnhandledCriticalExtension => format!(
            "{whose} carries a critical extension this tool does not know, so it cannot be \
             trusted"
        ),
        CertificateError::Revoked => format!("{whose} has been revoked"),
        CertificateError::Other(other) => match other.0.downcast_ref::<webpki::Error>() {
            Some(webpki::Error::CaUsedAsEndEntity) => match side {
                Side::Client { flags, .. } => format!(
                    "{whose} is a CA certificate (basic constraints CA:TRUE), not a \
                         server certificate, and it is not itself in {}: put that very \
                         certificate in {0} to trust it as it is, or give the server a \
                         certificate signed by a CA",
                    flags.ca
                ),
                Side::Server => format!(
                    "{whose} is a CA certificate (basic constraints CA:TRUE), not a \
                         client certificate, and it is not itself in --listen-tls-client-ca: \
                         put that very certificate there, or give the client a certificate \
                         signed by a CA"
                ),
            },
            Some(e) => format!("{whose} is refused: {}", words(&format!("{e:?}"), ' ')),
            None => format!("{whose} is refused: {other}"),
        },
        other => format!("{whose} is refused: {other}"),
    }
}

/// What went wrong with the peer over TLS, and what to do.
pub fn explain(error: &Error, side: Side) -> String {
    let (peer, whose) = match side {
        Side::Client { flags, .. } => (flags.peer, format!("{}'s certificate", flags.peer)),
        Side::Server => ("the client", "the client's certificate".to_owned()),
    };
    match (error, side) {
        (Error::InvalidCertificate(e), _) => certificate(e, &whose, side),
        (Error::NoCertificatesPresented, Side::Server) => "the client sent no \
            certificate, and --listen-tls-client-ca requires one: give the client a \
            certificate signed by a CA in that file (Java: ssl.keystore.location; \
            librdkafka: ssl.certificate.location and ssl.key.location)"
            .to_owned(),
        (Error::NoCertificatesPresented, Side::Client { .. }) => {
            format!("{peer} sent no certificate")
        }
        (
            Error::AlertReceived(AlertDescription::CertificateRequired),
            Side::Client { flags, .. },
        ) => format!(
            "{peer} requires a client certificate: give {} and {}",
            flags.cert, flags.key
        ),
        (Error::AlertReceived(alert), side) if refuses_certificate(alert) => match side {
            Side::Client {
                flags,
                client_cert: true,
            } => format!(
                "{peer} refused the tool's client certificate ({} alert): {} must be signed \
                 by a CA {peer} trusts (Kafka: ssl.truststore.location), and be valid now",
                alert_name(alert),
                flags.cert
            ),
            Side::Client {
                flags,
                client_cert: false,
            } => format!(
                "{peer} refused the handshake ({} alert): it may require a client \
                 certificate (give {} and {})",
                alert_name(alert),
                flags.cert,
                flags.key
            ),
            Side::Server => format!(
                "the client refused the tool's certificate ({} alert): the client must trust \
                 the CA that signed --listen-tls-cert (Java: ssl.truststore.location; \
                 librdkafka: ssl.ca.location), and the certificate must name the host the \
                 client connects to",
                alert_name(alert)
            ),
        },
        (Error::AlertReceived(AlertDescription::HandshakeFailure), Side::Client { flags, .. }) => {
            format!(
                "{peer} ended the handshake (handshake_failure alert): it shares no TLS \
                 version or cipher suite with the tool, or it requires a client certificate{}",
                if let Side::Client {
                    client_cert: false, ..
                } = side
                {
                    format!(" (give {} and {})", flags.cert, flags.key)
                } else {
                    " and refused this one".to_owned()
                }
            )
        }
        (Error::AlertReceived(alert), _) => {
            format!("{peer} ended the handshake ({} alert)", alert_name(alert))
        }
        (Error::InvalidMessage(_) | Error::InappropriateMessage { .. }, side) => match side {
            Side::Client { flags, .. } => format!(
                "{peer} does not answer with TLS: is this a plaintext listener? Connect to \
                 its TLS (SSL, SASL_SSL) port, or leave out {}",
                flags.tls
            ),
            Side::Server => not_tls_client(None),
        },
        (Error::PeerIncompatible(why), _) => format!(
            "{peer} and the tool share no TLS version or cipher suite ({}); the tool speaks \
             TLS 1.2 and 1.3 with current cipher suites",
            incompatible(why)
        ),
        (e, _) => format!("{peer}: {e}"),
    }
}

/// Why the peers could not agree, in words (rustls names each reason as a variant).
fn incompatible(why: &PeerIncompatible) -> String {
    words(&format!("{why:?}"), ' ')
}

/// Alerts a peer sends when it does not accept a certificate.
fn refuses_certificate(alert: &AlertDescription) -> bool {
    matches!(
        alert,
        AlertDescription::BadCertificate
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::CertificateRevoked
            | AlertDescription::CertificateExpired
            | AlertDescription::CertificateUnknown
            | AlertDescription::UnknownCA
            | AlertDescription::AccessDenied
            | AlertDescription::DecryptError
    )
}

/// A client that did not start TLS at a TLS listener; `first` its first bytes, if known.
pub fn not_tls_client(first: Option<&[u8]>) -> String {
    let what = match first.and_then(OtherProtocol::recognise) {
        Some(OtherProtocol::HttpRequest | OtherProtocol::HttpResponse) => "it spoke HTTP",
        _ if first.is_some_and(|b| b.len() >= 4 && b[0] == 0) => {
            "it sent plaintext Kafka, a size prefix"
        }
        _ => "its first bytes are not a TLS handshake",
    };
    format!(
        "the client did not start TLS ({what}): set the client's security.protocol to SSL \
         (or SASL_SSL), or leave out --listen-tls-cert"
    )
}

/// The rustls error inside an I/O error from a TLS stream, if there is one.
pub fn tls_error(error: &io::Error) -> Option<&Error> {
    error.get_ref()?.downcast_ref::<Error>()
}

/// An I/O error on a TLS connection in words: rustls's own errors explained, a handshake the
/// peer cut short named as such, anything else as it is.
pub fn explain_io(error: &io::Error, side: Side, handshake: bool) -> String {
    if let Some(tls) = tls_error(error) {
        return explain(tls, side);
    }
    let cut_short = handshake
        && matches!(
            error.kind(),
            io::ErrorKind::UnexpectedEof
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::BrokenPipe
        );
    match (cut_short, side) {
        (true, Side::Client { flags, .. }) => format!(
            "{} closed the connection during the TLS handshake: a plaintext listener does \
             that (connect to its TLS port, or leave out {}), and so does a server that \
             requires a client certificate it did not get ({} and {})",
            flags.peer, flags.tls, flags.cert, flags.key
        ),
        (true, Side::Server) => "the client closed the connection during the TLS \
            handshake: it may not trust the tool's certificate (--listen-tls-cert; see the \
            client's own log)"
            .to_owned(),
        (false, _) => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIENT: Side = Side::Client {
        flags: &UPSTREAM,
        client_cert: false,
    };

    #[test]
    fn alerts_are_named_as_the_specification_names_them() {
        assert_eq!(alert_name(&AlertDescription::UnknownCA), "unknown_ca");
        assert_eq!(
            alert_name(&AlertDescription::BadCertificate),
            "bad_certificate"
        );
    }

    #[test]
    fn an_incompatible_peer_is_said_in_words() {
        let error = Error::PeerIncompatible(PeerIncompatible::NoCipherSuitesInCommon);
        assert_eq!(
            explain(&error, Side::Server),
            "the client and the tool share no TLS version or cipher suite (no cipher suites \
             in common); the tool speaks TLS 1.2 and 1.3 with current cipher suites"
        );
    }

    #[test]
    fn names_are_shown_bare() {
        assert_eq!(bare_name("DnsName(\"kafka.example\")"), "kafka.example");
        assert_eq!(bare_name("IpAddress(10.1.2.3)"), "10.1.2.3");
        assert_eq!(bare_name("URI"), "URI");
    }

    #[test]
    fn expiry_names_the_dates() {
        let error = Error::InvalidCertificate(CertificateError::ExpiredContext {
            time: UnixTime::since_unix_epoch(Duration::from_secs(1_800_000_000)),
            not_after: UnixTime::since_unix_epoch(Duration::from_secs(1_700_000_000)),
        });
        assert_eq!(
            explain(&error, CLIENT),
            "the upstream's certificate expired on 2023-11-14T22:13:20Z (it is now \
             2027-01-15T08:00:00Z): renew it"
        );
    }

    #[test]
    fn a_missing_client_certificate_says_which_flags() {
        let error = Error::AlertReceived(AlertDescription::CertificateRequired);
        assert_eq!(
            explain(&error, CLIENT),
            "the upstream requires a client certificate: give --upstream-tls-cert and \
             --upstream-tls-key"
        );
    }
}
