//! Settings from a TOML file named by `--config` (or `DOCREVIEW_CONFIG`), as DESIGN.md §1
//! gives it: the file's keys are the environment variables of the command line's own
//! arguments, so there is one list of settings (the clap definitions, which `serve --help`
//! prints) and the file only supplies their defaults. Precedence: flag, then environment, then
//! file, then the built-in default.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{CommandFactory, FromArgMatches};

use crate::Cli;

/// Parses the command line, with the settings of the config file (if one is named) as
/// defaults. `--help` and usage errors exit here, as clap does.
pub fn parse_cli() -> anyhow::Result<Cli> {
    let args: Vec<OsString> = std::env::args_os().collect();
    let mut command = Cli::command();
    if let Some(path) = config_path(&args) {
        let settings = read(&path)?;
        command = apply(command, &settings)
            .with_context(|| format!("in the config file {}", path.display()))?;
    }
    let matches = command.get_matches_from(args);
    Ok(Cli::from_arg_matches(&matches).unwrap_or_else(|error| error.exit()))
}

/// The file named by `--config FILE` / `--config=FILE`, else by `DOCREVIEW_CONFIG`.
fn config_path(args: &[OsString]) -> Option<PathBuf> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let Some(arg) = arg.to_str() else { continue };
        if arg == "--" {
            break;
        }
        if arg == "--config" {
            return args.next().map(PathBuf::from);
        }
        if let Some(path) = arg.strip_prefix("--config=") {
            return Some(PathBuf::from(path));
        }
    }
    std::env::var_os("DOCREVIEW_CONFIG")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
}

/// The file's settings, as (key, value written as a command-line value).
fn read(path: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let table: toml::Table =
        toml::from_str(&text).with_context(|| format!("{} is not valid TOML", path.display()))?;
    table
        .into_iter()
        .map(|(key, value)| {
            let value = match value {
                toml::Value::String(text) => text,
                toml::Value::Integer(number) => number.to_string(),
                toml::Value::Float(number) => number.to_string(),
                toml::Value::Boolean(flag) => flag.to_string(),
                // A list (e.g. trusted proxies) as the comma-separated form the variable takes.
                toml::Value::Array(items) => items
                    .iter()
                    .map(|item| match item {
                        toml::Value::String(text) => Ok(text.clone()),
                        toml::Value::Integer(number) => Ok(number.to_string()),
                        _ => bail!("`{key}`: list items must be strings or numbers"),
                    })
                    .collect::<anyhow::Result<Vec<_>>>()?
                    .join(","),
                _ => bail!("`{key}` must be a string, a number, a boolean or a list"),
            };
            Ok((key, value))
        })
        .collect()
}

/// The environment variable a file key stands for: `DOCREVIEW_LISTEN`, or `listen` for it.
fn matches_variable(key: &str, variable: &str) -> bool {
    let key = key.to_ascii_uppercase();
    key == variable || variable.strip_prefix("DOCREVIEW_") == Some(key.as_str())
}

/// `command` with every argument whose variable the file sets defaulting to the file's value,
/// in every subcommand that has it. A key no command knows is an error (a typo would
/// otherwise be silently ignored).
fn apply(
    mut command: clap::Command,
    settings: &[(String, String)],
) -> anyhow::Result<clap::Command> {
    let mut known = Vec::new();
    collect_variables(&command, &mut known);
    for (key, _) in settings {
        if !known.iter().any(|variable| matches_variable(key, variable)) {
            known.sort();
            known.dedup();
            bail!(
                "unknown setting `{key}`; the settings are: {}",
                known.join(", ")
            );
        }
    }
    set_defaults(&mut command, settings);
    Ok(command)
}

fn collect_variables(command: &clap::Command, into: &mut Vec<String>) {
    for arg in command.get_arguments() {
        if let Some(variable) = arg.get_env().and_then(|variable| variable.to_str()) {
            // The file cannot name itself.
            if variable != "DOCREVIEW_CONFIG" {
                into.push(variable.to_string());
            }
        }
    }
    for sub in command.get_subcommands() {
        collect_variables(sub, into);
    }
}

fn set_defaults(command: &mut clap::Command, settings: &[(String, String)]) {
    let mut taken = std::mem::take(command);
    let ids: Vec<(clap::Id, String)> = taken
        .get_arguments()
        .filter_map(|arg| {
            let variable = arg.get_env()?.to_str()?;
            let (_, value) = settings
                .iter()
                .rev()
                .find(|(key, _)| matches_variable(key, variable))?;
            Some((arg.get_id().clone(), value.clone()))
        })
        .collect();
    for (id, value) in ids {
        // clap keeps defaults as `&'static str`; the file is read once per process.
        let value: &'static str = Box::leak(value.into_boxed_str());
        taken = taken.mut_arg(id, |arg| {
            // A secret's value must not show in `--help` as its default.
            let hide = arg.is_hide_env_values_set();
            arg.default_value(value).hide_default_value(hide)
        });
    }
    let names: Vec<String> = taken
        .get_subcommands()
        .map(|sub| sub.get_name().to_string())
        .collect();
    for name in names {
        taken = taken.mut_subcommand(name, |mut sub| {
            set_defaults(&mut sub, settings);
            sub
        });
    }
    *command = taken;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_variables_with_or_without_prefix() {
        assert!(matches_variable("DOCREVIEW_LISTEN", "DOCREVIEW_LISTEN"));
        assert!(matches_variable("listen", "DOCREVIEW_LISTEN"));
        assert!(matches_variable("database_url", "DATABASE_URL"));
        assert!(!matches_variable("listen", "DOCREVIEW_LISTENER"));
    }

    #[test]
    fn file_values_become_defaults_and_flags_win() {
        let settings = vec![
            ("listen".to_string(), "127.0.0.1:9999".to_string()),
            ("DOCREVIEW_MAX_HTML_BYTES".to_string(), "1234".to_string()),
        ];
        let command = apply(Cli::command(), &settings).expect("apply");
        let matches = command
            .clone()
            .try_get_matches_from(["docreview", "serve"])
            .expect("parse");
        let Cli {
            command: crate::Command::Serve(args),
        } = Cli::from_arg_matches(&matches).expect("cli")
        else {
            panic!("serve")
        };
        assert_eq!(args.max_html_bytes, 1234);
        let matches = command
            .try_get_matches_from(["docreview", "serve", "--listen", "127.0.0.1:1"])
            .expect("parse");
        let Cli {
            command: crate::Command::Serve(args),
        } = Cli::from_arg_matches(&matches).expect("cli")
        else {
            panic!("serve")
        };
        assert_eq!(args.listen.port(), 1);
    }

    #[test]
    fn unknown_keys_are_refused() {
        let settings = vec![("lisen".to_string(), "x".to_string())];
        let error = apply(Cli::command(), &settings).expect_err("unknown");
        assert!(error.to_string().contains("DOCREVIEW_LISTEN"), "{error}");
    }
}
