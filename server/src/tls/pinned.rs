//! Certificates trusted as they are: a certificate in the CA file that a peer presents as its
//! own. OpenSSL- and Java-based clients accept a self-signed server certificate that is in
//! their trust store even when it says `CA:TRUE` (as `openssl req -x509` makes it); webpki
//! refuses it (`CaUsedAsEndEntity`), since a trust anchor is not an end-entity certificate.
//! The verifiers here run webpki's verification first and, only when it refuses a
//! certificate byte-identical to one in the file, check that certificate by itself: its
//! validity period, the name (server side), its extended key usage and that it carries no
//! critical extension left unread. The handshake's signatures are always checked with the
//! provider's algorithms, against the presented certificate's key.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::{ParsedCertificate, WebPkiClientVerifier};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, Error, SignatureScheme};
use std::sync::Arc;
use std::time::Duration;
use x509_parser::prelude::{FromDer, X509Certificate};

/// What a certificate is presented for: its extended key usage must allow it.
#[derive(Debug, Clone, Copy)]
enum Purpose {
    Server,
    Client,
}

/// The certificates of a CA file, each trusted as itself.
#[derive(Debug)]
struct Pins(Vec<CertificateDer<'static>>);

impl Pins {
    fn holds(&self, presented: &CertificateDer<'_>) -> bool {
        self.0.iter().any(|pin| pin.as_ref() == presented.as_ref())
    }
}

/// Checks a pinned certificate by itself, at `now`, for `purpose` (and `name`, for a server).
fn check_pinned(
    der: &CertificateDer<'_>,
    now: UnixTime,
    purpose: Purpose,
    name: Option<&ServerName<'_>>,
) -> Result<(), Error> {
    let (_, cert) = X509Certificate::from_der(der.as_ref())
        .map_err(|_| Error::InvalidCertificate(CertificateError::BadEncoding))?;
    let at = |seconds: i64| {
        UnixTime::since_unix_epoch(Duration::from_secs(u64::try_from(seconds).unwrap_or(0)))
    };
    let validity = cert.validity();
    let (not_before, not_after) = (
        validity.not_before.timestamp(),
        validity.not_after.timestamp(),
    );
    let seconds = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
    if seconds < not_before {
        return Err(CertificateError::NotValidYetContext {
            time: now,
            not_before: at(not_before),
        }
        .into());
    }
    if seconds > not_after {
        return Err(CertificateError::ExpiredContext {
            time: now,
            not_after: at(not_after),
        }
        .into());
    }
    if cert
        .extensions()
        .iter()
        .any(|extension| extension.critical && extension.parsed_extension().unsupported())
    {
        return Err(CertificateError::UnhandledCriticalExtension.into());
    }
    let usage = cert
        .extended_key_usage()
        .map_err(|_| Error::InvalidCertificate(CertificateError::BadEncoding))?;
    if let Some(usage) = usage {
        let allowed = usage.value.any
            || match purpose {
                Purpose::Server => usage.value.server_auth,
                Purpose::Client => usage.value.client_auth,
            };
        if !allowed {
            return Err(CertificateError::InvalidPurpose.into());
        }
    }
    if let Some(name) = name {
        // The name check webpki runs on every server certificate (DNS names with wildcards,
        // IP addresses), through rustls.
        let parsed = ParsedCertificate::try_from(der)?;
        rustls::client::verify_server_name(&parsed, name)?;
    }
    Ok(())
}

/// A server certificate verifier: webpki's, and the pins when webpki refuses one of them.
#[derive(Debug)]
pub struct ServerVerifier {
    webpki: Arc<WebPkiServerVerifier>,
    pins: Pins,
    provider: Arc<CryptoProvider>,
}

impl ServerVerifier {
    pub fn new(
        webpki: Arc<WebPkiServerVerifier>,
        pins: Vec<CertificateDer<'static>>,
        provider: Arc<CryptoProvider>,
    ) -> ServerVerifier {
        ServerVerifier {
            webpki,
            pins: Pins(pins),
            provider,
        }
    }
}

impl ServerCertVerifier for ServerVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let refused = match self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Ok(verified) => return Ok(verified),
            Err(refused) => refused,
        };
        if !self.pins.holds(end_entity) {
            return Err(refused);
        }
        check_pinned(end_entity, now, Purpose::Server, Some(server_name))?;
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A client certificate verifier (client certificates required): webpki's, and the pins
/// when webpki refuses one of them (a self-signed client certificate with `CA:TRUE`).
#[derive(Debug)]
pub struct ClientVerifier {
    webpki: Arc<dyn ClientCertVerifier>,
    pins: Pins,
    provider: Arc<CryptoProvider>,
}

impl ClientVerifier {
    pub fn new(
        webpki: Arc<dyn ClientCertVerifier>,
        pins: Vec<CertificateDer<'static>>,
        provider: Arc<CryptoProvider>,
    ) -> ClientVerifier {
        ClientVerifier {
            webpki,
            pins: Pins(pins),
            provider,
        }
    }
}

impl ClientCertVerifier for ClientVerifier {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.webpki.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        let refused = match self
            .webpki
            .verify_client_cert(end_entity, intermediates, now)
        {
            Ok(verified) => return Ok(verified),
            Err(refused) => refused,
        };
        if !self.pins.holds(end_entity) {
            return Err(refused);
        }
        check_pinned(end_entity, now, Purpose::Client, None)?;
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// Builds the client-certificate verifier for a CA file's certificates.
pub fn client_verifier(
    roots: rustls::RootCertStore,
    pins: Vec<CertificateDer<'static>>,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<ClientVerifier>, rustls::server::VerifierBuilderError> {
    let webpki =
        WebPkiClientVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider))
            .build()?;
    Ok(Arc::new(ClientVerifier::new(webpki, pins, provider)))
}

/// The subject of a certificate in the text form OpenSSL prints (`CN=…, O=…`), if it parses.
pub fn subject(der: &CertificateDer<'_>) -> Option<String> {
    let (_, cert) = X509Certificate::from_der(der.as_ref()).ok()?;
    Some(cert.subject().to_string())
}
