//! HTTPS: rustls on the ring provider, trusting what the operating system trusts.
//!
//! The client hands reqwest a complete rustls configuration, so it never asks rustls for a
//! process-wide default provider. reqwest is built with `rustls-no-provider`, and cargo turns
//! that feature on for every reqwest in the same binary: a program that also builds plain
//! `reqwest::Client`s must install a provider first ([`install_default_provider`]), or reqwest
//! panics when it builds them.

use std::sync::Arc;

use rustls::ClientConfig;
use rustls::crypto::CryptoProvider;
use rustls_platform_verifier::BuilderVerifierExt;

/// The TLS settings of every connection: TLS 1.2 and 1.3 with rustls' safe defaults, the
/// platform's trust store (on Linux the system certificates, or `SSL_CERT_FILE` /
/// `SSL_CERT_DIR` when set), and HTTP/2 or HTTP/1.1 offered by ALPN.
///
/// A client of an `http://` server trusts nothing: it never makes a TLS connection (a redirect
/// to HTTPS fails), and it works on a machine without system certificates.
pub fn client_config(https: bool) -> Result<ClientConfig, rustls::Error> {
    let builder =
        ClientConfig::builder_with_provider(provider()).with_safe_default_protocol_versions()?;
    let mut config = if https {
        builder.with_platform_verifier()?.with_no_client_auth()
    } else {
        builder
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth()
    };
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// Makes ring the process's default rustls provider, unless one is installed already; for
/// programs that build other reqwest clients beside this one.
pub fn install_default_provider() {
    // An error only says that a provider is installed already, which is what we want.
    let _ = CryptoProvider::install_default(rustls::crypto::ring::default_provider());
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}
