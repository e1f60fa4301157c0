//! README.md and docs/ against the command they describe, so that the two
//! cannot drift apart again (issue 33: the intro said 17 dedup rules where
//! `--list-rules` showed 21, and listed 6 of the 15 formats).
//!
//! - The README's shell examples that touch `data/` run with this build's
//!   binary, in a scratch directory where `data` links to the repository's,
//!   and each exits 0 and writes something.
//! - The formats tables (README.md, docs/formats.md) list exactly the
//!   formats `-f` takes, and every "N log formats" says how many there are.
//! - Every "N dedup rules" in README.md and docs/ is the number of rules
//!   `--list-rules` lists.
//! - The README's profiles table shows what each profile makes of its URL.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use canonurl::canon::rules::Rule;
use canonurl::log::LogFormat;
use common::run_canonurl;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const BIN: &str = env!("CARGO_BIN_EXE_canonurl");

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(rel))
        .unwrap_or_else(|e| panic!("cannot read {rel}: {e}"))
}

/// The Markdown files whose counts must hold: the README and every page of
/// docs/ (BENCHMARKS.md is a dated history and says what was true then).
fn doc_files() -> Vec<String> {
    let mut files = vec!["README.md".to_string()];
    let mut pages: Vec<String> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("docs/ entry").file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    pages.sort();
    files.extend(pages);
    files
}

/// The fenced blocks of `lang` (```sh, ```toml) in `md`: the line number
/// of the opening fence and the lines inside.
fn blocks(md: &str, lang: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, bool, Vec<String>)> = None;
    for (i, line) in md.lines().enumerate() {
        if let Some(info) = line.strip_prefix("```") {
            match open.take() {
                None => open = Some((i + 1, info.trim() == lang, Vec::new())),
                Some((start, wanted, lines)) => {
                    if wanted {
                        out.push((start, lines));
                    }
                }
            }
        } else if let Some((_, _, lines)) = open.as_mut() {
            lines.push(line.to_string());
        }
    }
    assert!(open.is_none(), "a fenced block is not closed");
    out
}

/// The commands of a shell block: comment lines dropped, lines ending in
/// `\` joined with the next.
fn commands(lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in lines {
        let t = line.trim();
        if cur.is_empty() && (t.is_empty() || t.starts_with('#')) {
            continue;
        }
        match t.strip_suffix('\\') {
            Some(part) => {
                cur.push_str(part);
                cur.push(' ');
            }
            None => {
                cur.push_str(t);
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    assert!(cur.is_empty(), "a shell block ends in a continuation");
    out
}

/// Each file of `dir` (not following `data`) with its size and time.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, SystemTime)> {
    let mut files = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let meta = std::fs::symlink_metadata(e.path()).unwrap();
        if meta.is_file() {
            files.insert(e.path(), (meta.len(), meta.modified().unwrap()));
        }
    }
    files
}

fn has_python3() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The README's shell examples that name a file in `data/` (or one an
/// earlier example wrote, such as `site.log` or `mined.toml`), run as
/// written but for the program: `canonurl` and `cargo run --release --` are
/// this build's binary. A ```toml block whose first line is `# NAME.toml` is
/// written to NAME.toml first, so that `--rules NAME.toml` finds it.
#[test]
fn readme_shell_examples_on_data_run() {
    let readme = read("README.md");
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    std::os::unix::fs::symlink(Path::new(ROOT).join("data"), dir.join("data")).unwrap();
    let mut files = 0;
    for (line, block) in blocks(&readme, "toml") {
        if let Some(name) = block[0].strip_prefix("# ").filter(|n| n.ends_with(".toml")) {
            std::fs::write(dir.join(name), block.join("\n") + "\n").unwrap();
            files += 1;
        } else {
            eprintln!("README.md:{line}: toml block without a '# NAME.toml' line: not written");
        }
    }
    assert!(files > 0, "the README's rules file example is written");
    let python = has_python3();
    let mut ran = 0;
    for (line, block) in blocks(&readme, "sh") {
        for cmd in commands(&block) {
            let written: Vec<String> = snapshot(dir)
                .keys()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect();
            let words: Vec<&str> = cmd.split_whitespace().collect();
            if !cmd.contains("data/") && !written.iter().any(|w| words.contains(&w.as_str())) {
                continue;
            }
            let program = if let Some(rest) = cmd.strip_prefix("canonurl ") {
                format!("'{BIN}' {rest}")
            } else if let Some(rest) = cmd.strip_prefix("cargo run --release -- ") {
                format!("'{BIN}' {rest}")
            } else if cmd.starts_with("python3 ") {
                if !python {
                    eprintln!("skipping the rest of README.md:{line}: python3 not runnable");
                    break;
                }
                cmd.clone()
            } else {
                panic!("README.md:{line}: `{cmd}`: this test runs canonurl and python3 only");
            };
            let before = snapshot(dir);
            let out = Command::new("sh")
                .arg("-c")
                .arg(&program)
                .current_dir(dir)
                .env_remove("CANONURL_CONFIG_PATH")
                .output()
                .expect("run sh");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "README.md:{line}: `{cmd}` exited {}:\n{stderr}",
                out.status
            );
            let after = snapshot(dir);
            let wrote_file = after
                .iter()
                .any(|(p, meta)| meta.0 > 0 && before.get(p) != Some(meta));
            assert!(
                !out.stdout.is_empty() || wrote_file,
                "README.md:{line}: `{cmd}` wrote nothing:\n{stderr}"
            );
            eprintln!(
                "README.md:{line}: ok: {cmd} ({} bytes of output)",
                out.stdout.len()
            );
            ran += 1;
        }
    }
    assert!(ran >= 5, "only {ran} README commands on data/ were found");
}

/// The first column of the table that follows `marker` in `md`, each cell
/// without its backquotes.
fn first_column_after(md: &str, marker: &str, file: &str) -> Vec<String> {
    let start = md
        .find(marker)
        .unwrap_or_else(|| panic!("{file} has {marker:?}"));
    md[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.split('|')
                .nth(1)
                .unwrap()
                .trim()
                .trim_matches('`')
                .to_string()
        })
        .collect()
}

/// The values `-f` takes, from the command's own error for one it does not.
fn format_values_of_the_command() -> Vec<String> {
    let out = run_canonurl(&["-f", "no-such-format", "-"], b"");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let list = stderr
        .split("[possible values: ")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .unwrap_or_else(|| panic!("the usage error lists the values of -f:\n{stderr}"));
    list.split(", ").map(str::to_string).collect()
}

/// The formats tables name every format `-f` takes, in its order, and each
/// "N log formats" in the docs counts them.
#[test]
fn format_tables_are_the_formats_of_the_command() {
    let known: Vec<String> = LogFormat::ALL
        .iter()
        .map(|f| f.name().to_string())
        .collect();
    let mut values = format_values_of_the_command();
    assert_eq!(values.remove(0), "auto");
    assert_eq!(values, known, "-f's values are LogFormat::ALL");
    let readme = read("README.md");
    assert_eq!(
        first_column_after(&readme, "<!-- formats:", "README.md"),
        known,
        "README.md's formats table"
    );
    let page = read("docs/formats.md");
    assert_eq!(
        first_column_after(&page, "## The formats", "docs/formats.md"),
        known,
        "docs/formats.md's formats table"
    );
    let counts = counts_before(&["log formats"]);
    assert!(
        counts.iter().any(|(f, _, _)| f == "README.md"),
        "the README says how many log formats there are"
    );
    for (file, line, n) in counts {
        assert_eq!(n, known.len(), "{file}:{line}: {n} log formats");
    }
}

/// Each number written just before one of `phrases` in README.md and
/// docs/*.md: (file, line, number).
fn counts_before(phrases: &[&str]) -> Vec<(String, usize, usize)> {
    let mut found = Vec::new();
    for file in doc_files() {
        for (i, line) in read(&file).lines().enumerate() {
            for phrase in phrases {
                for (at, _) in line.match_indices(phrase) {
                    let before = line[..at].trim_end();
                    let word = before.rsplit(' ').next().unwrap_or("");
                    if let Ok(n) = word.parse::<usize>() {
                        found.push((file.clone(), i + 1, n));
                    }
                }
            }
        }
    }
    found
}

/// `--list-rules` lists `Rule::ALL`, and every "N dedup rules" (or "N
/// switchable dedup rules", "the N rules") in the docs is that number.
#[test]
fn rule_counts_in_the_docs_are_the_rules_the_command_lists() {
    let out = run_canonurl(&["--list-rules"], b"");
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let listed = stdout.lines().skip(1).take_while(|l| !l.is_empty()).count();
    assert_eq!(listed, Rule::ALL.len(), "--list-rules:\n{stdout}");
    let counts = counts_before(&["switchable dedup rules", "dedup rules", "rules fires"]);
    assert!(
        counts.iter().any(|(f, _, _)| f == "README.md"),
        "the README says how many dedup rules there are"
    );
    for (file, line, n) in counts {
        assert_eq!(
            n, listed,
            "{file}:{line}: {n} rules, --list-rules lists {listed}"
        );
    }
}

/// The README's profiles table: each row's last cell is what that profile
/// makes of the URL in the header.
#[test]
fn readme_profiles_table_is_what_each_profile_writes() {
    let readme = read("README.md");
    let start = readme
        .find("## Profiles")
        .expect("README.md has ## Profiles");
    let rows: Vec<Vec<String>> = readme[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    let url = rows[0][2].trim_matches('`');
    let mut profiles = Vec::new();
    for row in &rows[2..] {
        let profile = row[0].split('`').nth(1).expect("profile in backquotes");
        let out = run_canonurl(
            &["-f", "plain", "--profile", profile],
            format!("{url}\n").as_bytes(),
        );
        assert!(out.status.success(), "--profile {profile}");
        assert_eq!(
            String::from_utf8(out.stdout).unwrap().trim_end(),
            row[2].trim_matches('`'),
            "--profile {profile} on {url}"
        );
        profiles.push(profile.to_string());
    }
    assert_eq!(profiles, ["whatwg", "rfc3986", "safe", "aggressive"]);
}

/// GitHub's anchor for a heading: lower case, punctuation but `-` and `_`
/// dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The lines of `md` outside fenced blocks.
fn prose(md: &str) -> Vec<&str> {
    let mut fence = false;
    md.lines()
        .filter(|l| {
            if l.starts_with("```") {
                fence = !fence;
                return false;
            }
            !fence
        })
        .collect()
}

/// Every relative link of the Markdown files names a file that exists, and
/// a `#anchor` names a heading of it: the README's sections moved to docs/,
/// and the links into them moved with them.
#[test]
fn relative_links_resolve() {
    let mut files = doc_files();
    files.extend(
        [
            "BENCHMARKS.md",
            "data/README.md",
            "fuzz/README.md",
            "python/README.md",
        ]
        .map(String::from),
    );
    let mut checked = 0;
    for file in &files {
        let md = read(file);
        let dir = Path::new(file).parent().unwrap();
        for line in prose(&md) {
            for (at, _) in line.match_indices("](") {
                let rest = &line[at + 2..];
                let Some(end) = rest.find(')') else { continue };
                let target = &rest[..end];
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
                let resolved = if path.is_empty() {
                    PathBuf::from(file)
                } else {
                    dir.join(path)
                };
                let full = Path::new(ROOT).join(&resolved);
                assert!(full.exists(), "{file}: link {target:?}: no such file");
                if !anchor.is_empty() {
                    let text = std::fs::read_to_string(&full).unwrap();
                    let anchors: Vec<String> = prose(&text)
                        .into_iter()
                        .filter(|l| l.starts_with('#'))
                        .map(|l| slug(l.trim_start_matches('#')))
                        .collect();
                    assert!(
                        anchors.iter().any(|a| a == anchor),
                        "{file}: link {target:?}: no heading #{anchor} in {}",
                        resolved.display()
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 20, "only {checked} links checked");
}
