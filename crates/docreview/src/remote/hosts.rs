//! Credentials per server, kept in `$XDG_CONFIG_HOME/docreview/hosts.toml` (mode 0600).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::{Failure, Outcome};

const DEFAULT_URL: &str = "http://127.0.0.1:8080";

/// One server's credentials, as `hosts.toml` keeps them.
#[derive(Serialize, Deserialize, Clone)]
pub struct Host {
    pub token: String,
    pub token_id: String,
    pub user: String,
    pub scopes: Vec<String>,
    pub expires_at: String,
}

#[derive(Serialize, Deserialize, Default)]
pub struct Hosts {
    /// The server signed in to last, used when no `--base-url` or `DOCREVIEW_URL` names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    #[serde(default)]
    pub hosts: BTreeMap<String, Host>,
}

fn path() -> Result<PathBuf, Failure> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
        .ok_or_else(|| Failure::error("set HOME or XDG_CONFIG_HOME to keep credentials"))?;
    Ok(config.join("docreview").join("hosts.toml"))
}

pub fn load() -> Result<Hosts, Failure> {
    let path = path()?;
    match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text).map_err(|error| {
            Failure::error(format!("{} is not readable: {error}", path.display()))
        }),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Hosts::default()),
        Err(error) => Err(Failure::error(format!(
            "reading {}: {error}",
            path.display()
        ))),
    }
}

/// Writes `hosts.toml` readable by its owner only (it holds tokens), in a folder only its owner
/// can enter, whatever the umask. The new text goes to a temporary file first and replaces the
/// old one whole, so a failure midway never leaves half a file.
pub fn save(hosts: &Hosts) -> Outcome {
    let path = path()?;
    let text = toml::to_string(hosts).map_err(|error| Failure::error(error.to_string()))?;
    let failed =
        |error: std::io::Error| Failure::error(format!("writing {}: {error}", path.display()));
    let temporary = path.with_extension("toml.tmp");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    if let Some(dir) = path.parent() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
            builder.mode(0o700);
            builder.create(dir).map_err(failed)?;
            // A folder made before (by an older client, or under a loose umask) is closed too.
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(failed)?;
        }
        #[cfg(not(unix))]
        builder.create(dir).map_err(failed)?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        if temporary.exists() {
            std::fs::set_permissions(&temporary, std::fs::Permissions::from_mode(0o600))
                .map_err(failed)?;
        }
    }
    let mut file = options.open(&temporary).map_err(failed)?;
    file.write_all(text.as_bytes()).map_err(failed)?;
    file.sync_all().map_err(failed)?;
    std::fs::rename(&temporary, &path).map_err(failed)
}

/// The server to talk to: `--base-url`, else `DOCREVIEW_URL`, else the current one.
pub fn base_url(given: Option<&str>, hosts: &Hosts) -> String {
    given
        .map(str::to_string)
        .or_else(|| std::env::var("DOCREVIEW_URL").ok())
        .or_else(|| hosts.current.clone())
        .unwrap_or_else(|| DEFAULT_URL.to_string())
        .trim_end_matches('/')
        .to_string()
}
