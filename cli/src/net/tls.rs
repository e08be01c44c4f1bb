//! TLS on either side of a server command, with rustls: a listener that serves TLS with a
//! certificate and key from PEM files, and an upstream (or controller) reached over TLS,
//! verified against a CA file or the system's roots.

use crate::common::Failure;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `--listen-tls-cert`, `--listen-tls-key`.
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
}

/// `--upstream-tls`, `--upstream-ca`, `--upstream-server-name`.
#[derive(Debug, Clone, clap::Args)]
pub struct UpstreamTls {
    /// Connect upstream with TLS (an SSL or SASL_SSL listener).
    #[arg(long)]
    pub upstream_tls: bool,
    /// Trust the certificate authorities in this PEM file for upstream certificates, instead
    /// of the system's roots.
    #[arg(long, value_name = "FILE", requires = "upstream_tls")]
    pub upstream_ca: Option<PathBuf>,
    /// The name the upstream certificate must carry, when it is not the host of the upstream
    /// address (an IP address is checked against the certificate's IP addresses).
    #[arg(long, value_name = "NAME", requires = "upstream_tls")]
    pub upstream_server_name: Option<String>,
}

/// The crypto every config here uses.
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn unreadable(flag: &str, path: &Path, e: impl std::fmt::Display) -> Failure {
    Failure::Input(format!("{flag} {}: {e}", path.display()))
}

fn certificates(flag: &str, path: &Path) -> Result<Vec<CertificateDer<'static>>, Failure> {
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

impl ListenTls {
    /// The server side of TLS, if asked for.
    pub fn config(&self) -> Result<Option<Arc<ServerConfig>>, Failure> {
        let (Some(cert), Some(key)) = (&self.listen_tls_cert, &self.listen_tls_key) else {
            return Ok(None);
        };
        let chain = certificates("--listen-tls-cert", cert)?;
        let private = PrivateKeyDer::from_pem_file(key).map_err(|e| {
            unreadable(
                "--listen-tls-key",
                key,
                format!("{e} (expected a PEM private key)"),
            )
        })?;
        let config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| Failure::Input(format!("TLS: {e}")))?
            .with_no_client_auth()
            .with_single_cert(chain, private)
            .map_err(|e| {
                // Java's keytool stores EC keys without their public half, which the key
                // loader needs; the fix is one command.
                let hint = if e.to_string().contains("failed to parse private key") {
                    format!(
                        " (an EC key exported from a Java keystore lacks its public key: \
                         rewrite it with `openssl ec -in {0} | openssl pkcs8 -topk8 -nocrypt \
                         -out KEY.pem`)",
                        key.display()
                    )
                } else {
                    String::new()
                };
                Failure::Input(format!(
                    "--listen-tls-cert {} / --listen-tls-key {}: {e}{hint}",
                    cert.display(),
                    key.display()
                ))
            })?;
        Ok(Some(Arc::new(config)))
    }
}

/// How to reach an upstream over TLS.
#[derive(Debug, Clone)]
pub struct Client {
    pub config: Arc<ClientConfig>,
    /// `--upstream-server-name`, if given.
    pub server_name: Option<String>,
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

/// `--tls`, `--tls-ca`, `--tls-server-name`: a client command (`quorum describe`,
/// `add-controller`, `remove-controller`) talking TLS to a controller listener. The same
/// three settings as the tap's `--upstream-*` ones, named for a command with one side.
#[derive(Debug, Clone, clap::Args)]
pub struct ClientTls {
    /// Connect with TLS (an SSL or SASL_SSL controller listener).
    #[arg(long)]
    pub tls: bool,
    /// Trust the certificate authorities in this PEM file, instead of the system's roots.
    #[arg(long, value_name = "FILE", requires = "tls")]
    pub tls_ca: Option<PathBuf>,
    /// The name the server's certificate must carry, when it is not the host connected to.
    #[arg(long, value_name = "NAME", requires = "tls")]
    pub tls_server_name: Option<String>,
}

impl ClientTls {
    pub fn client(&self) -> Result<Option<Client>, Failure> {
        if !self.tls {
            return Ok(None);
        }
        client(
            ("--tls-ca", self.tls_ca.as_deref()),
            ("--tls-server-name", self.tls_server_name.as_deref()),
        )
        .map(Some)
    }
}

impl UpstreamTls {
    /// The client side of TLS, if asked for.
    pub fn client(&self) -> Result<Option<Client>, Failure> {
        if !self.upstream_tls {
            return Ok(None);
        }
        client(
            ("--upstream-ca", self.upstream_ca.as_deref()),
            (
                "--upstream-server-name",
                self.upstream_server_name.as_deref(),
            ),
        )
        .map(Some)
    }
}

/// A TLS client trusting the CA file, or the system's roots; `(flag, value)` pairs name the
/// flags in errors.
fn client(
    (ca_flag, ca): (&str, Option<&Path>),
    (name_flag, server_name): (&str, Option<&str>),
) -> Result<Client, Failure> {
    let mut roots = RootCertStore::empty();
    match ca {
        Some(path) => {
            for certificate in certificates(ca_flag, path)? {
                roots
                    .add(certificate)
                    .map_err(|e| unreadable(ca_flag, path, e))?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(Failure::Input(format!(
                    "TLS: no trusted roots found on this system{}; give {ca_flag} FILE",
                    found
                        .errors
                        .first()
                        .map(|e| format!(" ({e})"))
                        .unwrap_or_default()
                )));
            }
        }
    }
    if let Some(name) = server_name {
        ServerName::try_from(name.to_owned()).map_err(|e| {
            Failure::Usage(format!("{name_flag} {name:?} is not a server name: {e}"))
        })?;
    }
    let config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| Failure::Input(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Client {
        config: Arc::new(config),
        server_name: server_name.map(str::to_owned),
    })
}
