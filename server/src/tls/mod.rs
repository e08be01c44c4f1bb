//! TLS on either side of a server command, with rustls: a listener that serves TLS with a
//! certificate and key from PEM files (and may require client certificates), and an upstream
//! (or controller) reached over TLS, verified against a CA file or the system's roots, with a
//! client certificate if asked for. A certificate in the CA file is trusted as it is
//! (`pinned`); failures are said in words (`explain`).

pub mod explain;
mod pinned;

use crate::error::SetupError;
pub use explain::{ClientFlags, Side, CONTROLLER, UPSTREAM};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `--listen-tls-cert`, `--listen-tls-key`, `--listen-tls-client-ca`.
#[derive(Debug, Clone, clap::Args)]
pub struct ListenTls {
    /// Serve TLS on the listener (and, with --rewrite-brokers, on every broker listener) with
    /// this certificate chain: a PEM file, the server's certificate first. Clients must
    /// trust its issuer, since they talk TLS to the tool, not to the broker.
    #[arg(long, value_name = "FILE", requires = "listen_tls_key")]
    pub listen_tls_cert: Option<PathBuf>,
    /// The private key of --listen-tls-cert: a PEM file (PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE", requires = "listen_tls_cert")]
    pub listen_tls_key: Option<PathBuf>,
    /// Require a client certificate of every client (mutual TLS), signed by a certificate
    /// authority in this PEM file or itself in it; its subject is logged on the connection.
    #[arg(long, value_name = "FILE", requires = "listen_tls_cert")]
    pub listen_tls_client_ca: Option<PathBuf>,
}

/// `--upstream-tls`, `--upstream-ca`, `--upstream-server-name`, `--upstream-tls-cert`,
/// `--upstream-tls-key`.
#[derive(Debug, Clone, clap::Args)]
pub struct UpstreamTls {
    /// Connect upstream with TLS (an SSL or SASL_SSL listener).
    #[arg(long)]
    pub upstream_tls: bool,
    /// Trust the certificate authorities in this PEM file for upstream certificates, instead
    /// of the system's roots; a certificate in it is also trusted as the upstream's own (a
    /// self-signed one, even with CA:TRUE), its name and dates still checked.
    #[arg(long, value_name = "FILE", requires = "upstream_tls")]
    pub upstream_ca: Option<PathBuf>,
    /// The name the upstream certificate must carry, when it is not the host of the upstream
    /// address (an IP address is checked against the certificate's IP addresses).
    #[arg(long, value_name = "NAME", requires = "upstream_tls")]
    pub upstream_server_name: Option<String>,
    /// Present this client certificate to the upstream (mutual TLS, ssl.client.auth): a PEM
    /// file, the certificate first.
    #[arg(long, value_name = "FILE", requires_all = ["upstream_tls", "upstream_tls_key"])]
    pub upstream_tls_cert: Option<PathBuf>,
    /// The private key of --upstream-tls-cert: a PEM file (PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE", requires = "upstream_tls_cert")]
    pub upstream_tls_key: Option<PathBuf>,
}

/// The crypto every config here uses: the process's default provider, which
/// `ClientConfig::builder` installs from rustls's crate features (ring, the one this crate
/// turns on) unless the program installed its own. `rustls::crypto::ring::default_provider`
/// is deprecated from rustls 0.23.48; these two calls are in every 0.23 release.
fn provider() -> Result<Arc<CryptoProvider>, SetupError> {
    drop(ClientConfig::builder());
    CryptoProvider::get_default()
        .map(Arc::clone)
        .ok_or_else(|| SetupError::Usage("TLS: no rustls crypto provider installed".to_owned()))
}

fn unreadable(flag: &str, path: &Path, e: impl std::fmt::Display) -> SetupError {
    SetupError::Input(format!("{flag} {}: {e}", path.display()))
}

fn certificates(flag: &str, path: &Path) -> Result<Vec<CertificateDer<'static>>, SetupError> {
    let certificates = CertificateDer::pem_file_iter(path)
        .map_err(|e| unreadable(flag, path, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| unreadable(flag, path, e))?;
    if certificates.is_empty() {
        return Err(unreadable(
            flag,
            path,
            "no certificate in the file (expected PEM: -----BEGIN CERTIFICATE-----)",
        ));
    }
    Ok(certificates)
}

/// A certificate chain and its private key, each read from its flag's PEM file.
fn identity(
    (cert_flag, cert): (&str, &Path),
    (key_flag, key): (&str, &Path),
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), SetupError> {
    let chain = certificates(cert_flag, cert)?;
    let private = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| unreadable(key_flag, key, format!("{e} (expected a PEM private key)")))?;
    Ok((chain, private))
}

/// A certificate and key rustls refused together, in words.
fn mismatched(
    (cert_flag, cert): (&str, &Path),
    (key_flag, key): (&str, &Path),
    e: rustls::Error,
) -> SetupError {
    // Java's keytool stores EC keys without their public half, which the key loader needs;
    // the fix is one command.
    let why = match e {
        rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => {
            "the private key is not the certificate's (the file's first certificate must be \
             the one the key belongs to)"
                .to_owned()
        }
        e if e.to_string().contains("failed to parse private key") => format!(
            "{e} (an EC key exported from a Java keystore lacks its public key: rewrite it \
             with `openssl ec -in {0} | openssl pkcs8 -topk8 -nocrypt -out KEY.pem`)",
            key.display()
        ),
        e => e.to_string(),
    };
    SetupError::Input(format!(
        "{cert_flag} {} / {key_flag} {}: {why}",
        cert.display(),
        key.display()
    ))
}

/// The certificates of a CA file: as roots for webpki, and each as itself (pinned).
fn trusted(
    flag: &str,
    path: &Path,
) -> Result<(RootCertStore, Vec<CertificateDer<'static>>), SetupError> {
    let pins = certificates(flag, path)?;
    let mut roots = RootCertStore::empty();
    for certificate in &pins {
        roots
            .add(certificate.clone())
            .map_err(|e| unreadable(flag, path, e))?;
    }
    Ok((roots, pins))
}

impl ListenTls {
    /// The server side of TLS, if asked for.
    pub fn config(&self) -> Result<Option<Arc<ServerConfig>>, SetupError> {
        let (Some(cert), Some(key)) = (&self.listen_tls_cert, &self.listen_tls_key) else {
            return Ok(None);
        };
        let cert = ("--listen-tls-cert", cert.as_path());
        let key = ("--listen-tls-key", key.as_path());
        let (chain, private) = identity(cert, key)?;
        let provider = provider()?;
        let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| SetupError::Input(format!("TLS: {e}")))?;
        let builder = match &self.listen_tls_client_ca {
            None => builder.with_no_client_auth(),
            Some(path) => {
                let flag = "--listen-tls-client-ca";
                let (roots, pins) = trusted(flag, path)?;
                let verifier = pinned::client_verifier(roots, pins, provider)
                    .map_err(|e| unreadable(flag, path, e))?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let config = builder
            .with_single_cert(chain, private)
            .map_err(|e| mismatched(cert, key, e))?;
        Ok(Some(Arc::new(config)))
    }

    /// The listener's TLS acceptor, if asked for.
    pub fn acceptor(&self) -> Result<Option<Acceptor>, SetupError> {
        Ok(self.config()?.map(|config| Acceptor {
            acceptor: tokio_rustls::TlsAcceptor::from(config),
            side: Side::Server,
        }))
    }
}

/// A TLS listener's side of the handshake.
#[derive(Clone)]
pub struct Acceptor {
    pub acceptor: tokio_rustls::TlsAcceptor,
    /// How to explain its failures.
    pub side: Side,
}

/// The subject of the certificate a TLS client presented (`CN=…, O=…`), if it presented one.
pub fn client_subject(connection: &rustls::ServerConnection) -> Option<String> {
    pinned::subject(connection.peer_certificates()?.first()?)
}

/// How to reach an upstream over TLS.
#[derive(Debug, Clone)]
pub struct Client {
    pub config: Arc<ClientConfig>,
    /// `--upstream-server-name`, if given.
    pub server_name: Option<String>,
    /// How to explain its failures.
    pub side: Side,
}

impl Client {
    /// The name to verify for an upstream at `host`.
    pub fn server_name(&self, host: &str) -> Result<ServerName<'static>, String> {
        let name = self.server_name.as_deref().unwrap_or(host);
        let name = name.trim_start_matches('[').trim_end_matches(']');
        ServerName::try_from(name.to_owned())
            .map_err(|e| format!("{name:?} is not a TLS server name: {e}"))
    }
}

/// `--tls`, `--tls-ca`, `--tls-server-name`, `--tls-cert`, `--tls-key`: a client command
/// (`quorum describe`, `add-controller`, `remove-controller`) talking TLS to a controller
/// listener. The same settings as the tap's `--upstream-*` ones, named for a command with
/// one side.
#[derive(Debug, Clone, clap::Args)]
pub struct ClientTls {
    /// Connect with TLS (an SSL or SASL_SSL controller listener).
    #[arg(long)]
    pub tls: bool,
    /// Trust the certificate authorities in this PEM file, instead of the system's roots; a
    /// certificate in it is also trusted as the server's own (a self-signed one, even with
    /// CA:TRUE), its name and dates still checked.
    #[arg(long, value_name = "FILE", requires = "tls")]
    pub tls_ca: Option<PathBuf>,
    /// The name the server's certificate must carry, when it is not the host connected to.
    #[arg(long, value_name = "NAME", requires = "tls")]
    pub tls_server_name: Option<String>,
    /// Present this client certificate (mutual TLS): a PEM file, the certificate first.
    #[arg(long, value_name = "FILE", requires_all = ["tls", "tls_key"])]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert: a PEM file (PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

impl ClientTls {
    pub fn client(&self) -> Result<Option<Client>, SetupError> {
        if !self.tls {
            return Ok(None);
        }
        client(
            &CONTROLLER,
            self.tls_ca.as_deref(),
            self.tls_server_name.as_deref(),
            self.tls_cert.as_deref().zip(self.tls_key.as_deref()),
        )
        .map(Some)
    }
}

impl UpstreamTls {
    /// The client side of TLS, if asked for.
    pub fn client(&self) -> Result<Option<Client>, SetupError> {
        if !self.upstream_tls {
            return Ok(None);
        }
        client(
            &UPSTREAM,
            self.upstream_ca.as_deref(),
            self.upstream_server_name.as_deref(),
            self.upstream_tls_cert
                .as_deref()
                .zip(self.upstream_tls_key.as_deref()),
        )
        .map(Some)
    }
}

/// A TLS client trusting the CA file (its certificates also pinned), or the system's roots,
/// presenting `identity` (certificate and key files) if given; `flags` names the flags in
/// errors.
fn client(
    flags: &'static ClientFlags,
    ca: Option<&Path>,
    server_name: Option<&str>,
    identity_files: Option<(&Path, &Path)>,
) -> Result<Client, SetupError> {
    let (roots, pins) = match ca {
        Some(path) => trusted(flags.ca, path)?,
        None => {
            let mut roots = RootCertStore::empty();
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(SetupError::Input(format!(
                    "TLS: no trusted roots found on this system{}; give {} FILE",
                    found
                        .errors
                        .first()
                        .map(|e| format!(" ({e})"))
                        .unwrap_or_default(),
                    flags.ca
                )));
            }
            // The system's roots are authorities, not certificates to trust as they are.
            (roots, Vec::new())
        }
    };
    if let Some(name) = server_name {
        ServerName::try_from(name.to_owned()).map_err(|e| {
            SetupError::Usage(format!(
                "{} {name:?} is not a server name: {e}",
                flags.server_name
            ))
        })?;
    }
    let provider = provider()?;
    let webpki =
        WebPkiServerVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider))
            .build()
            .map_err(|e| SetupError::Input(format!("TLS: {e}")))?;
    let verifier = pinned::ServerVerifier::new(webpki, pins, Arc::clone(&provider));
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| SetupError::Input(format!("TLS: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier));
    let config = match identity_files {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let cert = (flags.cert, cert);
            let key = (flags.key, key);
            let (chain, private) = identity(cert, key)?;
            builder
                .with_client_auth_cert(chain, private)
                .map_err(|e| mismatched(cert, key, e))?
        }
    };
    Ok(Client {
        config: Arc::new(config),
        server_name: server_name.map(str::to_owned),
        side: Side::Client {
            flags,
            client_cert: identity_files.is_some(),
        },
    })
}
