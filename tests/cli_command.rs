//! The command's conveniences: short and long help, shell completions, the
//! man page, the config file of default flags, `-q`, `--header`, `--base`
//! checks and the `--surt` note.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::run_canonurl;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_canonurl")
}

fn sample_log() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sample-access.log")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Runs with `CANONURL_CONFIG_PATH` set to `config` (or unset).
fn with_config(config: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args).stdin(Stdio::null());
    match config {
        Some(p) => cmd.env("CANONURL_CONFIG_PATH", p),
        None => cmd.env_remove("CANONURL_CONFIG_PATH"),
    };
    cmd.output().expect("run canonurl")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("canonurl-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The long flags a help text documents: the `--name` tokens that start
/// its entries (`-f, --log-format <FORMAT>`, `--surt[=<FORM>]`).
fn long_flags(help: &str) -> Vec<String> {
    let mut flags: Vec<String> = help
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .flat_map(|l| l.split([' ', ',']).take(3))
        .filter_map(|t| {
            let name: String = t
                .strip_prefix("--")?
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            (!name.is_empty()).then(|| format!("--{name}"))
        })
        .collect();
    flags.sort();
    flags.dedup();
    flags
}

#[test]
fn short_help_is_grouped_with_examples_and_value_lists() {
    let short = ok(&run_canonurl(&["-h"], b""));
    let long = ok(&run_canonurl(&["--help"], b""));
    for heading in [
        "Input:",
        "Format:",
        "Profile and rules:",
        "Output:",
        "Filters:",
        "Threads and memory:",
        "Diagnostics:",
        "Examples:",
    ] {
        // -j, --memory and --temp-dir are tuning: --help only.
        assert!(
            heading == "Threads and memory:" || short.lines().any(|l| l == heading),
            "-h has no {heading:?} group:\n{short}"
        );
        assert!(
            long.lines().any(|l| l == heading),
            "--help has no {heading:?}"
        );
    }
    assert!(
        short.lines().count() * 2 < long.lines().count(),
        "-h ({} lines) should be much shorter than --help ({} lines)",
        short.lines().count(),
        long.lines().count()
    );
    // Every value list of a flag it shows is in the short help: formats,
    // profiles, fields, output formats; --help has the others' too.
    let line_of = |help: &str, flag: &str| -> String {
        let mut found = String::new();
        let mut lines = help.lines().peekable();
        while let Some(l) = lines.next() {
            if l.contains(flag) {
                found.push_str(l);
                // A wrapped entry goes on, indented, until the next flag.
                while let Some(next) = lines.peek() {
                    if next.trim_start().starts_with('-') || next.trim().is_empty() {
                        break;
                    }
                    found.push_str(lines.next().unwrap());
                }
                break;
            }
        }
        found
    };
    let formats: Vec<&str> = std::iter::once("auto")
        .chain(canonurl::log::LogFormat::ALL.iter().map(|f| f.name()))
        .collect();
    for (flag, values) in [
        ("--log-format", &formats[..]),
        ("--profile <", &["whatwg", "rfc3986", "safe", "aggressive"]),
        ("--field", &["request", "referer", "both"]),
        ("--format <", &["plain", "tsv", "jsonl"]),
    ] {
        let entry = line_of(&short, flag);
        for v in values {
            assert!(entry.contains(v), "-h's {flag} does not list {v}: {entry}");
        }
    }
    for (flag, values) in [
        ("--progress", &["auto", "always", "never"][..]),
        (
            "--json-preset",
            &[
                "nginx",
                "caddy",
                "traefik",
                "gcp",
                "cloudflare",
                "azure-appgw",
                "azure-frontdoor",
                "aws-waf",
                "akamai",
                "zeek",
            ],
        ),
    ] {
        // --help's entry: from the flag to the next flag's entry.
        let at = long.find(flag).expect(flag);
        let rest = &long[at..];
        let end = rest.find("\n  -").unwrap_or(rest.len());
        let entry = &rest[..end];
        for v in values {
            assert!(
                entry.contains(v),
                "--help's {flag} does not list {v}: {entry}"
            );
        }
    }
    // The long help documents each value.
    assert!(long.contains("aggressive: safe plus every default dedup rule"));
    // -h shows the common flags, --help all of them.
    let (short_flags, long_flags) = (long_flags(&short), long_flags(&long));
    for flag in &short_flags {
        assert!(long_flags.contains(flag), "{flag} is in -h only");
    }
    assert!(short_flags.len() > 15, "{short_flags:?}");
    assert!(long_flags.len() > 50, "{long_flags:?}");
}

#[test]
fn format_names_are_case_insensitive() {
    let log = sample_log();
    let a = run_canonurl(&["-f", "COMBINED", "-q", log.to_str().unwrap()], b"");
    let b = run_canonurl(&["-f", "combined", "-q", log.to_str().unwrap()], b"");
    assert_eq!(ok(&a), ok(&b));
    let bad = run_canonurl(&["-f", "apache2"], b"");
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("combined"),
        "{}",
        text(&bad.stderr)
    );
}

#[test]
fn completions_for_every_shell() {
    let help = ok(&run_canonurl(&["--help"], b""));
    let flags = long_flags(&help);
    for (shell, marker) in [
        ("bash", "complete -F _canonurl"),
        ("zsh", "#compdef canonurl"),
        ("fish", "complete -c canonurl"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let script = ok(&run_canonurl(&["completions", shell], b""));
        assert!(script.contains(marker), "{shell}: no {marker:?}");
        for flag in &flags {
            let bare = flag.trim_start_matches('-');
            assert!(script.contains(bare), "{shell} completion lacks {flag}");
        }
    }
    let bad = run_canonurl(&["completions", "tcsh"], b"");
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn bash_completion_completes_flags_and_values() {
    if Command::new("bash").arg("-c").arg("true").status().is_err() {
        eprintln!("skipping: no bash");
        return;
    }
    let dir = temp_dir("completion");
    let script = dir.join("canonurl.bash");
    std::fs::write(&script, run_canonurl(&["completions", "bash"], b"").stdout).unwrap();
    let complete = |words: &str| -> String {
        let program = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
             COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}; \
             _canonurl canonurl \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let out = Command::new("bash")
            .arg("-c")
            .arg(&program)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let flags = complete("canonurl --prof");
    assert!(flags.lines().any(|l| l == "--profile"), "{flags}");
    let values = complete("canonurl --profile ag");
    assert_eq!(values.trim(), "aggressive");
    let sub = complete("canonurl completions ''");
    for shell in ["bash", "zsh", "fish", "powershell"] {
        assert!(sub.lines().any(|l| l == shell), "{sub}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn man_page_documents_every_flag() {
    let help = ok(&run_canonurl(&["--help"], b""));
    let page = ok(&run_canonurl(&["man"], b""));
    assert!(
        page.contains(".TH canonurl 1"),
        "{}",
        &page[..page.len().min(300)]
    );
    for flag in long_flags(&help) {
        // roff escapes each `-`.
        let escaped = flag.replace('-', "\\-");
        assert!(page.contains(&escaped), "man page lacks {flag}");
    }
    // When a man renderer is here, the page renders without warnings.
    let groff = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    match groff {
        Err(_) => eprintln!("groff not found: the page's rendering is not checked"),
        Ok(mut child) => {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(page.as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success());
            assert!(out.stderr.is_empty(), "groff: {}", text(&out.stderr));
        }
    }
}

#[test]
fn config_file_sets_defaults_that_the_command_line_overrides() {
    let dir = temp_dir("config");
    let log = sample_log();
    let log = log.to_str().unwrap();
    let config = dir.join("canonurl.conf");
    std::fs::write(
        &config,
        "# team defaults\n--profile=aggressive\n\n  -q\n--format\ntsv\n",
    )
    .unwrap();
    let plain = with_config(
        None,
        &["--profile", "aggressive", "-q", "--format", "tsv", log],
    );
    let configured = with_config(Some(&config), &[log]);
    assert_eq!(ok(&configured), ok(&plain));
    assert!(configured.stderr.is_empty(), "{}", text(&configured.stderr));
    // The command line wins.
    let overridden = with_config(
        Some(&config),
        &["--format", "plain", "--profile", "whatwg", log],
    );
    let expected = with_config(
        None,
        &["--format", "plain", "--profile", "whatwg", "-q", log],
    );
    assert_eq!(ok(&overridden), ok(&expected));
    // --no-config ignores it.
    let ignored = with_config(Some(&config), &["--no-config", log]);
    let defaults = with_config(None, &[log]);
    assert_eq!(ok(&ignored), ok(&defaults));
    // An empty variable means no config.
    let mut cmd = Command::new(bin());
    let empty = cmd
        .arg(log)
        .env("CANONURL_CONFIG_PATH", "")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(ok(&empty), ok(&defaults));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn config_file_errors_name_the_file() {
    let dir = temp_dir("config-errors");
    let missing = dir.join("nope.conf");
    let out = with_config(Some(&missing), &[sample_log().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("nope.conf") && err.contains("CANONURL_CONFIG_PATH"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    let bad = dir.join("bad.conf");
    std::fs::write(&bad, "--profile=fastest\n").unwrap();
    let out = with_config(Some(&bad), &[sample_log().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("fastest") && err.contains("bad.conf"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn quiet_keeps_fatal_errors_and_stats() {
    let log = sample_log();
    let log = log.to_str().unwrap();
    let loud = run_canonurl(&["--stats", log], b"");
    let quiet = run_canonurl(&["-q", "--stats", log], b"");
    assert_eq!(ok(&loud), ok(&quiet));
    let (loud_err, quiet_err) = (text(&loud.stderr), text(&quiet.stderr));
    assert!(loud_err.contains("sample-access.log:933:"), "{loud_err}");
    assert!(!quiet_err.contains("sample-access.log:9"), "{quiet_err}");
    assert!(!quiet_err.contains("more rejected lines"), "{quiet_err}");
    assert!(quiet_err.contains("canonurl statistics"), "{quiet_err}");
    // The stats are the same; only the per-line lines went.
    let tail = |s: &str| s[s.find("canonurl statistics").unwrap()..].lines().count();
    assert_eq!(tail(&loud_err), tail(&quiet_err));
    // An input that cannot be read is still reported.
    let out = run_canonurl(&["-q", "/nonexistent/access.log"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("/nonexistent/access.log"));
}

/// TSV rows of `out`, split into columns.
fn rows(out: &str) -> Vec<Vec<&str>> {
    out.lines().map(|l| l.split('\t').collect()).collect()
}

#[test]
fn header_names_the_columns_as_json_lines_does() {
    let log = sample_log();
    let log = log.to_str().unwrap();
    for extra in [
        &[][..],
        &["--field", "both"][..],
        &["--dedup-key", "--explain"][..],
        &[
            "--field",
            "both",
            "--dedup-key",
            "--explain",
            "--profile",
            "safe",
        ][..],
    ] {
        let mut args = vec!["--format", "tsv", "--header", "-q", log];
        args.extend_from_slice(extra);
        let with = ok(&run_canonurl(&args, b""));
        args.retain(|a| *a != "--header");
        let without = ok(&run_canonurl(&args, b""));
        let (header, rest) = with.split_once('\n').unwrap();
        assert_eq!(rest, without, "{extra:?}: --header changed the rows");
        let names: Vec<&str> = header.split('\t').collect();
        for row in rows(&without) {
            assert_eq!(row.len(), names.len(), "{extra:?}: {row:?} vs {names:?}");
        }
        // The names are the JSON Lines keys (the target-or-reason column
        // is `target` or `reason` there).
        args.retain(|a| *a != "tsv");
        let pos = args.iter().position(|a| *a == "--format").unwrap();
        args.insert(pos + 1, "jsonl");
        let jsonl = ok(&run_canonurl(&args, b""));
        let mut keys = std::collections::BTreeSet::new();
        for line in jsonl.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            keys.extend(v.as_object().unwrap().keys().cloned());
        }
        for name in &names {
            let present = match *name {
                "target_or_reason" => keys.contains("target") && keys.contains("reason"),
                n => keys.contains(n),
            };
            assert!(
                present,
                "{extra:?}: column {name} is no JSON key of {keys:?}"
            );
        }
    }
    for (mode, field, expected) in [
        ("--count", "request", &["url", "key", "count"][..]),
        ("--unique", "request", &["url", "key"][..]),
        ("--count", "both", &["url", "key", "count", "field"][..]),
        ("--unique", "both", &["url", "key", "field"][..]),
    ] {
        let out = ok(&run_canonurl(
            &[
                "--format", "tsv", "--header", mode, "--field", field, "-q", log,
            ],
            b"",
        ));
        let mut lines = out.lines();
        let names: Vec<&str> = lines.next().unwrap().split('\t').collect();
        assert_eq!(names, expected);
        assert!(lines.all(|l| l.split('\t').count() == names.len()));
        // The names are the keys of the JSON Lines rows.
        let jsonl = ok(&run_canonurl(
            &["--format", "jsonl", mode, "--field", field, "-q", log],
            b"",
        ));
        let first: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
        let mut keys: Vec<&str> = first
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut sorted = expected.to_vec();
        keys.sort_unstable();
        sorted.sort_unstable();
        assert_eq!(keys, sorted, "{mode} --field {field}");
    }
}

#[test]
fn header_needs_tsv_and_no_pipe() {
    for args in [
        &["--header"][..],
        &["--header", "--format", "jsonl"][..],
        &["--header", "--format", "tsv", "--pipe"][..],
    ] {
        let out = run_canonurl(args, b"/a\n");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        assert!(
            text(&out.stderr).contains("--header"),
            "{}",
            text(&out.stderr)
        );
    }
}

/// A combined log line of `target`, without a host.
fn combined_line(target: &str) -> String {
    format!(
        "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET {target} HTTP/1.1\" 200 5 \"-\" \"ua\"\n"
    )
}

#[test]
fn base_takes_any_absolute_url() {
    // Hosts or not, opaque or not: the URL Standard's bases.
    for (base, input, want) in [
        ("file:///srv/", "a", "file:///srv/a"),
        ("file:///tmp/mock/path", "../x", "file:///tmp/x"),
        ("sc:/a/b", "c", "sc:/a/c"),
        ("about:blank", "#f", "about:blank#f"),
        ("mailto:x@x.com", "#top", "mailto:x@x.com#top"),
        ("data:,", "#a", "data:,#a"),
        ("https://Example.com", "/a", "https://example.com/a"),
    ] {
        let args = [
            "--profile",
            "whatwg",
            "--base",
            base,
            "-f",
            "plain",
            "--pipe",
        ];
        let out = run_canonurl(&args, format!("{input}\n").as_bytes());
        assert_eq!(
            ok(&out),
            format!("{want}\n"),
            "--base {base}, input {input}"
        );
    }
    // An opaque base takes no path (the Standard's failure): an empty line.
    let out = run_canonurl(
        &["--base", "about:blank", "-f", "plain", "--pipe"],
        b"x\n#f\n",
    );
    assert_eq!(ok(&out), "\nabout:blank#f\n");

    // Not absolute: the hint; refused by the Standard: why.
    let out = run_canonurl(&["--base", "example.com", "-f", "plain", "--pipe"], b"/a\n");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("--base https://example.com"), "{err}");
    for base in ["https://[::1", "http://exa mple.com/", "/relative"] {
        let out = run_canonurl(&["--base", base, "-f", "plain", "--pipe"], b"a\n");
        assert_eq!(out.status.code(), Some(2), "--base {base}");
        let err = text(&out.stderr);
        assert!(
            err.starts_with("canonurl: invalid --base") && err.contains("absolute URL"),
            "{err}"
        );
    }
}

#[test]
fn base_without_a_host_for_log_records() {
    let dir = temp_dir("base-records");
    let log = dir.join("access.log");
    std::fs::write(&log, combined_line("/x?q") + &combined_line("/y")).unwrap();
    let log = log.to_str().unwrap();
    // `file:///dir/` and `/x`: the base's scheme and (empty) authority, as
    // the Standard resolves `/x` against it; `--scheme` has no host to carry
    // over to (`https:///x` would make `x` the host).
    for extra in [&[][..], &["--scheme", "https"]] {
        let mut args = vec!["-f", "combined", "--base", "file:///dir/"];
        args.extend(extra);
        args.push(log);
        let out = run_canonurl(&args, b"");
        assert_eq!(ok(&out), "file:///x?q\nfile:///y\n", "{args:?}");
    }
    // An opaque base resolves no path: each record rejected, saying why,
    // never `about:/x`.
    let rejects = dir.join("rejects.txt");
    let out = run_canonurl(
        &[
            "-f",
            "combined",
            "--base",
            "about:blank",
            "--rejects",
            rejects.to_str().unwrap(),
            log,
        ],
        b"",
    );
    assert_eq!(ok(&out), "");
    let err = text(&out.stderr);
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("cannot resolve against a --base with an opaque path"))
        .collect();
    assert_eq!(said.len(), 2, "{err}");
    assert!(
        said[0].contains("access.log:1:") && said[1].contains("access.log:2:"),
        "{err}"
    );
    let listed = std::fs::read_to_string(&rejects).unwrap();
    assert_eq!(listed.lines().count(), 2, "{listed}");
    assert!(
        listed.lines().all(|l| l.contains("\topaque-base\t")),
        "{listed}"
    );
    // The reason in words, in --stats.
    let out = run_canonurl(
        &["-f", "combined", "--base", "mailto:a@b", "--stats", log],
        b"",
    );
    let err = text(&out.stderr);
    assert!(err.contains("opaque-base"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn surt_says_once_when_it_wrote_paths_only() {
    let log = sample_log();
    let log = log.to_str().unwrap();
    let out = run_canonurl(&["--surt", "-q", log], b"");
    ok(&out);
    let err = text(&out.stderr);
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("--surt")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(notes[0].contains("--base"), "{}", notes[0]);
    let paths = text(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('/'))
        .count();
    assert!(
        notes[0].contains(&format!(": {paths} URLs had no host")),
        "{} (paths written: {paths})",
        notes[0]
    );
    // With a base every target has a host: no note, and SURT keys.
    let out = run_canonurl(&["--surt", "-q", "--base", "https://example.com", log], b"");
    let stdout = ok(&out);
    assert!(
        !text(&out.stderr).contains("--surt"),
        "{}",
        text(&out.stderr)
    );
    assert!(stdout.lines().all(|l| !l.starts_with('/')));
    assert!(stdout.lines().any(|l| l.starts_with("com,example)/")));
}

#[test]
fn files_named_like_subcommands_are_read_with_a_path() {
    // `canonurl man` is the man page; a log file called `man` is `./man`.
    let dir = temp_dir("subcommand-file");
    std::fs::copy(sample_log(), dir.join("man")).unwrap();
    let out = Command::new(bin())
        .arg("./man")
        .current_dir(&dir)
        .env_remove("CANONURL_CONFIG_PATH")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let expected = run_canonurl(&[sample_log().to_str().unwrap()], b"");
    assert_eq!(ok(&out), ok(&expected));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-o -` is stdout, for the command and its subcommands: what they write
/// without `-o`, and no file named `-`.
#[test]
fn output_dash_is_stdout() {
    let dir = temp_dir("output-dash");
    let log = sample_log();
    let log = log.to_str().unwrap();
    for args in [
        &["--count", log][..],
        &["summarize", log],
        &["mine", "--learn", "1", log],
    ] {
        let run = |extra: &[&str]| {
            Command::new(bin())
                .args(args)
                .args(extra)
                .current_dir(&dir)
                .env_remove("CANONURL_CONFIG_PATH")
                .stdin(Stdio::null())
                .output()
                .unwrap()
        };
        let (dash, plain) = (run(&["-o", "-"]), run(&[]));
        assert_eq!(dash.status.code(), plain.status.code(), "{args:?}");
        assert!(!plain.stdout.is_empty(), "{args:?}");
        assert_eq!(dash.stdout, plain.stdout, "{args:?}");
        assert!(!dir.join("-").exists(), "{args:?} wrote a file named -");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--rejects` escapes what `--format tsv` escapes and every other control
/// byte: one rejected line per line, nothing a terminal would act on.
#[test]
fn rejects_file_escapes_control_bytes() {
    let dir = temp_dir("rejects-escaped");
    let rejects = dir.join("rejects.txt");
    // Rejected (bad IPv6 hosts), with ESC, a lone CR, a backslash, a tab
    // and a NUL inside the line; then a good URL.
    let input = b"http://[\x1b[31m]/\rx\n\
                  http://[1::\\\tz\x00]/\n\
                  http://ok.example/\n";
    let out = run_canonurl(
        &["-f", "plain", "--rejects", rejects.to_str().unwrap(), "-q"],
        input,
    );
    assert_eq!(ok(&out), "http://ok.example/\n");
    let listed = std::fs::read(&rejects).unwrap();
    let bad: Vec<u8> = listed
        .iter()
        .copied()
        .filter(|&b| (b < 0x20 && b != b'\t' && b != b'\n') || b == 0x7f)
        .collect();
    assert!(
        bad.is_empty(),
        "raw control bytes {bad:?} in {}",
        text(&listed)
    );
    let listed = text(&listed);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "one rejected line per line: {listed}");
    // INPUT:LINE, REASON, BYTE, then the line, escaped.
    let last = |l: &str| l.splitn(4, '\t').nth(3).unwrap().to_string();
    assert_eq!(last(lines[0]), "http://[\\x1B[31m]/\\rx");
    assert_eq!(last(lines[1]), "http://[1::\\\\\\tz\\x00]/");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--stats` in binary units, as the progress bar; no spill line when the
/// table stayed in memory; a failed input's reason on its own line.
#[test]
fn stats_are_for_people() {
    let log = sample_log();
    let out = run_canonurl(&["--count", "--stats", "-q", log.to_str().unwrap()], b"");
    ok(&out);
    let err = text(&out.stderr);
    let bytes = err
        .lines()
        .find(|l| l.trim_start().starts_with("bytes"))
        .unwrap_or_else(|| panic!("no bytes line: {err}"));
    // 440,547 bytes: 430.2 KiB.
    let size = std::fs::metadata(&log).unwrap().len();
    let kib = format!("{:.1} KiB", size as f64 / 1024.0);
    assert!(bytes.contains(&kib) && bytes.contains("iB/s"), "{bytes}");
    assert!(!bytes.contains(" MB"), "{bytes}");
    assert!(!err.contains("spilled"), "nothing spilled: {err}");

    // A table of 64 KiB spills this log: the line says so, in units.
    let out = run_canonurl(
        &[
            "--count",
            "--stats",
            "-q",
            "--memory",
            "64K",
            log.to_str().unwrap(),
        ],
        b"",
    );
    ok(&out);
    let err = text(&out.stderr);
    let spilled = err
        .lines()
        .find(|l| l.trim_start().starts_with("spilled"))
        .unwrap_or_else(|| panic!("no spill line: {err}"));
    assert!(
        spilled.contains("runs") && spilled.contains("of 64.0 KiB"),
        "{spilled}"
    );

    // A gzip input cut short: read until it fails, the reason apart.
    let dir = temp_dir("stats-failed");
    let gz = dir.join("cut.log.gz");
    let mut bytes = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    bytes.extend_from_slice(b"\xff\xfe not deflate data");
    std::fs::write(&gz, &bytes).unwrap();
    let out = run_canonurl(&["--stats", "-q", gz.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with("input ") && l.contains("cut.log.gz"))
        .unwrap_or_else(|| panic!("no input line: {err}"));
    assert!(!lines[at].contains("ERROR"), "{}", lines[at]);
    let next = lines[at + 1].trim_start();
    assert!(
        next.starts_with("failed: ") && next.len() > "failed: ".len(),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--field both` on `-f plain` input: each line's one URL is a request, and
/// the `field` column says so (it was empty).
#[test]
fn field_both_on_plain_input_names_the_field() {
    let out = run_canonurl(
        &["-f", "plain", "--field", "both", "--format", "tsv"],
        b"http://a.example/\n",
    );
    let row = ok(&out);
    let cols: Vec<&str> = row.trim_end_matches('\n').split('\t').collect();
    assert_eq!(cols.len(), 5, "{row:?}");
    assert_eq!(
        (cols[1], cols[4]),
        ("http://a.example/", "request"),
        "{row:?}"
    );
    let out = run_canonurl(
        &["-f", "plain", "--field", "both", "--format", "jsonl"],
        b"http://a.example/\n",
    );
    let v: serde_json::Value = serde_json::from_str(ok(&out).trim()).unwrap();
    assert_eq!(v["field"], "request", "{v}");
    // As in the distinct rows, which said so already.
    let out = run_canonurl(
        &["-f", "plain", "--field", "both", "--count"],
        b"http://a.example/\n",
    );
    assert_eq!(ok(&out), "http://a.example/\t1\trequest\n");
}

/// `-h` fits a screen or two at 80 columns; `--help` has everything.
#[test]
fn short_help_is_short() {
    let help = |flag: &str| {
        let out = Command::new(bin())
            .arg(flag)
            .env("COLUMNS", "80")
            .env_remove("CANONURL_CONFIG_PATH")
            .stdin(Stdio::null())
            .output()
            .expect("run canonurl");
        ok(&out)
    };
    let short = help("-h");
    let long = help("--help");
    let rows = short.lines().count();
    assert!(rows <= 60, "-h is {rows} rows at 80 columns:\n{short}");
    assert!(short.lines().all(|l| l.chars().count() <= 80), "{short}");
    // What it leaves out, --help has, and -h says so.
    for flag in [
        "--json-target",
        "--json-client",
        "--max-line-len",
        "--temp-dir",
    ] {
        assert!(!short.contains(flag), "-h shows {flag}");
        assert!(long.contains(flag), "--help lacks {flag}");
    }
    assert!(
        short.contains("--help"),
        "-h does not point to --help:\n{short}"
    );
    // Filters under their own heading, in both.
    for text in [&short, &long] {
        let at = text.lines().position(|l| l == "Filters:");
        let at = at.unwrap_or_else(|| panic!("no Filters heading:\n{text}"));
        let group: Vec<&str> = text
            .lines()
            .skip(at + 1)
            .take_while(|l| l.is_empty() || l.starts_with(' '))
            .collect();
        let group = group.join("\n");
        assert!(
            group.contains("--status") && group.contains("--method"),
            "{group}"
        );
    }
}

/// Values named after the server, and slips, get a hint; usage errors look
/// like every other error of the command.
#[test]
fn usage_errors_hint_and_look_like_run_errors() {
    for (args, hint) in [
        (&["-f", "nginx"][..], "-f combined"),
        (&["-f", "Apache"][..], "-f combined"),
        (&["--log-format", "iis"][..], "-f w3c"),
        (&["--rule", "+fragmnt"][..], "did you mean 'fragment'"),
    ] {
        let out = run_canonurl(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(hint), "{args:?}: {err}");
        assert!(err.starts_with("canonurl: "), "{args:?}: {err}");
        assert!(!err.contains("error:"), "{args:?}: {err}");
    }
    // clap's own errors too, and a run error.
    for args in [&["--no-such-flag"][..], &["/no/such/file"][..]] {
        let out = run_canonurl(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.starts_with("canonurl: "), "{args:?}: {err}");
    }
}

/// The shipped binary carries no debug info: 32.5 MB with it, a few MB
/// without (`[profile.profiling]` keeps it for perf and callgrind).
#[test]
#[cfg(not(debug_assertions))]
fn release_binary_is_lean() {
    let path = Path::new(bin());
    // Only the release profile's binary (not `--profile profiling`'s).
    if path.parent().and_then(|p| p.file_name()) != Some("release".as_ref()) {
        eprintln!("skipping: {} is not a release build", path.display());
        return;
    }
    let size = std::fs::metadata(path).unwrap().len();
    assert!(
        size <= 12 * 1024 * 1024,
        "{}: {:.1} MiB",
        path.display(),
        size as f64 / (1024.0 * 1024.0)
    );
}
