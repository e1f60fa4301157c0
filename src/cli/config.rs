//! Default flags from a config file, found through `CANONURL_CONFIG_PATH`
//! (ripgrep's convention), so that a team can fix its profile, rules file
//! and format once.
//!
//! The file holds one argument per line, exactly as it would be given on
//! the command line but without shell quoting: `--profile=aggressive`, or
//! `--rules` and the path on the next line. Blank lines and lines whose
//! first non-blank character is `#` are ignored; spaces around an argument
//! are removed. The arguments go before the command line's, so a flag given
//! on the command line wins over the same flag in the file. `--no-config`
//! ignores the file.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variable naming the config file.
pub const ENV: &str = "CANONURL_CONFIG_PATH";

/// The flag that turns the config file off.
pub const NO_CONFIG: &str = "--no-config";

/// A config file that was read: its path and its arguments.
#[derive(Debug, Default)]
pub struct Config {
    pub path: Option<PathBuf>,
    pub args: Vec<OsString>,
}

/// Reads the config file named by `CANONURL_CONFIG_PATH`, unless it is
/// unset or empty, or `--no-config` is among the command line's `args`
/// (before a `--`). A file that cannot be read is an error naming it: a
/// team's defaults silently ignored would change every run's output.
pub fn load(args: &[OsString]) -> Result<Config, String> {
    let off = args
        .iter()
        .skip(1)
        .take_while(|a| a.as_os_str() != "--")
        .any(|a| a.as_os_str() == NO_CONFIG);
    let path = match std::env::var_os(ENV) {
        Some(p) if !p.is_empty() && !off => PathBuf::from(p),
        _ => return Ok(Config::default()),
    };
    let bytes = std::fs::read(&path).map_err(|e| {
        format!(
            "{}: cannot read the config file ({ENV}): {e}",
            path.display()
        )
    })?;
    Ok(Config {
        args: parse(&bytes),
        path: Some(path),
    })
}

/// The arguments of a config file's text.
pub fn parse(bytes: &[u8]) -> Vec<OsString> {
    bytes
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l).trim_ascii())
        .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
        .map(os_string)
        .collect()
}

#[cfg(unix)]
fn os_string(bytes: &[u8]) -> OsString {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(bytes).to_os_string()
}

#[cfg(not(unix))]
fn os_string(bytes: &[u8]) -> OsString {
    OsString::from(String::from_utf8_lossy(bytes).into_owned())
}

/// The full argument list: the program name, the config file's
/// arguments, then the command line's.
pub fn merge(config: &Config, args: Vec<OsString>) -> Vec<OsString> {
    let mut all = Vec::with_capacity(config.args.len() + args.len());
    let mut args = args.into_iter();
    all.extend(args.next());
    all.extend(config.args.iter().cloned());
    all.extend(args);
    all
}

/// Names the config file in an error about its arguments.
pub fn describe(path: &Path) -> String {
    format!("{ENV}={}", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_argument_per_line_comments_and_blanks_ignored() {
        let args = parse(
            b"# team defaults\n--profile=aggressive\n\n  --rules \r\n/etc/x y.toml\n  # -q\n",
        );
        assert_eq!(args, ["--profile=aggressive", "--rules", "/etc/x y.toml"]);
    }

    #[test]
    fn config_arguments_go_between_the_program_and_the_command_line() {
        let config = Config {
            path: None,
            args: vec!["--stats".into()],
        };
        let all = merge(&config, vec!["canonurl".into(), "a.log".into()]);
        assert_eq!(all, ["canonurl", "--stats", "a.log"]);
    }
}
