//! The run's inputs: the FILE arguments, then `--files-from`'s lines (stdin
//! when there are none), and `--follow`'s one input, checked up front.
//!
//! Directory arguments, as ripgrep users expect them: read recursively, the
//! files in byte order of their paths, hidden files and directories (a name
//! starting with `.`) skipped, `--glob` filtering the files found. Binary
//! files, and files of no log format detected (error logs, READMEs), are
//! skipped with a warning by the reader, which sees their decompressed
//! start ([`Source::Found`]).
//!
//! Symbolic links: a link to a file is read as the file; a link to a
//! directory is not followed (so no loop can form) and is noted as skipped.

use std::fs;
use std::path::{Path, PathBuf};

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::sync::Arc;

use canonurl::input::Source;
use canonurl::pipeline::stats::SkippedInput;
use canonurl::pipeline::{self, stats::Summary};
use globset::{GlobBuilder, GlobMatcher};

use super::args::Cli;

/// `--glob`s, in order: the last one that matches a path decides.
#[derive(Debug, Default)]
pub struct Globs {
    globs: Vec<Glob>,
    /// True when some glob includes: then a file no glob matches is left out.
    any_include: bool,
}

#[derive(Debug)]
struct Glob {
    matcher: GlobMatcher,
    /// `!GLOB`: matching files (and directories) are left out.
    exclude: bool,
    /// A glob with a `/` matches the path below the directory argument;
    /// one without matches the name alone, at any depth.
    whole_path: bool,
}

impl Globs {
    /// Compiles `--glob` values: `*.gz`, `access.log*`, `!*.1.gz`,
    /// `2024/**/*.log`. `*` and `?` do not match `/`; `**` does.
    pub fn new(list: &[String]) -> Result<Globs, String> {
        let mut globs = Vec::with_capacity(list.len());
        for arg in list {
            let (exclude, pattern) = match arg.strip_prefix('!') {
                Some(p) => (true, p),
                None => (false, arg.as_str()),
            };
            let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
            let glob = GlobBuilder::new(pattern)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|e| format!("--glob {arg:?}: {e}"))?;
            globs.push(Glob {
                matcher: glob.compile_matcher(),
                exclude,
                whole_path: pattern.contains('/'),
            });
        }
        let any_include = globs.iter().any(|g| !g.exclude);
        Ok(Globs { globs, any_include })
    }

    /// The last glob that matches `rel` (a path below the directory
    /// argument), if any.
    fn last_match(&self, rel: &Path) -> Option<&Glob> {
        let name = rel.file_name().map(Path::new).unwrap_or(rel);
        self.globs
            .iter()
            .rev()
            .find(|g| g.matcher.is_match(if g.whole_path { rel } else { name }))
    }

    /// Whether a file found at `rel` is read.
    fn reads_file(&self, rel: &Path) -> bool {
        match self.last_match(rel) {
            Some(g) => !g.exclude,
            None => !self.any_include,
        }
    }

    /// Whether a directory found at `rel` is entered: only an excluding glob
    /// leaves one out.
    fn enters_dir(&self, rel: &Path) -> bool {
        self.last_match(rel).is_none_or(|g| !g.exclude)
    }
}

/// What one directory argument gave.
#[derive(Debug, Default)]
pub struct Walked {
    /// The directory as given.
    pub dir: PathBuf,
    /// The files to read, in byte order of their paths.
    pub files: Vec<PathBuf>,
    /// Entries not read: hidden, symbolic links to directories, special files.
    pub skipped: Vec<SkippedInput>,
    /// Files left out by `--glob`.
    pub excluded: u64,
    /// Directories that could not be listed: the path and the error.
    pub errors: Vec<(String, String)>,
}

impl Walked {
    /// The sources to read.
    pub fn sources(&self) -> impl Iterator<Item = Source> + '_ {
        self.files.iter().cloned().map(Source::Found)
    }
}

/// Lists the files below `dir`.
pub fn walk(dir: &Path, globs: &Globs) -> Walked {
    let mut w = Walked {
        dir: dir.to_path_buf(),
        ..Walked::default()
    };
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let unreadable = |e: std::io::Error| {
            (
                d.display().to_string(),
                format!("cannot read directory: {e}"),
            )
        };
        let entries = match fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) => {
                w.errors.push(unreadable(e));
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    w.errors.push(unreadable(e));
                    continue;
                }
            };
            let path = entry.path();
            let rel = path.strip_prefix(dir).unwrap_or(&path);
            let skip = |reason| SkippedInput {
                name: path.display().to_string(),
                reason,
            };
            if entry.file_name().as_encoded_bytes().starts_with(b".") {
                w.skipped.push(skip("hidden"));
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                w.skipped.push(skip("not-a-file"));
                continue;
            };
            if kind.is_dir() {
                if globs.enters_dir(rel) {
                    pending.push(path);
                }
                continue;
            }
            // A symbolic link is read when it leads to a file.
            let target = match kind.is_symlink() {
                true => fs::metadata(&path).map(|m| m.file_type()),
                false => Ok(kind),
            };
            let reason = match target {
                Ok(t) if t.is_file() => {
                    if globs.reads_file(rel) {
                        w.files.push(path);
                    } else {
                        w.excluded += 1;
                    }
                    continue;
                }
                Ok(t) if t.is_dir() => "symlinked-directory",
                Ok(_) => "not-a-file",
                Err(_) => "broken-symlink",
            };
            w.skipped.push(skip(reason));
        }
    }
    let by_bytes = |a: &Path, b: &Path| {
        a.as_os_str()
            .as_encoded_bytes()
            .cmp(b.as_os_str().as_encoded_bytes())
    };
    w.files.sort_by(|a, b| by_bytes(a, b));
    w.skipped
        .sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    w
}

/// The notice for a directory argument of which no file was read: it was
/// empty, or everything in it was skipped. `not_read`: the reasons of its
/// files the reader skipped (`binary`, `unknown-format`).
pub fn nothing_read(w: &Walked, not_read: &[&str]) -> Option<String> {
    if w.files.len() > not_read.len() {
        return None;
    }
    let mut why = Vec::new();
    for reason in ["binary", "unknown-format"] {
        let n = not_read.iter().filter(|&&r| r == reason).count();
        if n > 0 {
            why.push(format!("{n} {reason}"));
        }
    }
    if w.excluded > 0 {
        why.push(format!("{} left out by --glob", w.excluded));
    }
    for reason in [
        "hidden",
        "symlinked-directory",
        "broken-symlink",
        "not-a-file",
    ] {
        let n = w.skipped.iter().filter(|s| s.reason == reason).count();
        if n > 0 {
            why.push(format!("{n} {reason}"));
        }
    }
    let dir = w.dir.display();
    Some(match why.is_empty() {
        true => format!("canonurl: {dir}: no file to read: the directory is empty"),
        false => format!(
            "canonurl: {dir}: no file read from this directory: skipped {} (--stats lists them)",
            why.join(", ")
        ),
    })
}

/// The inputs: FILE arguments, then `--files-from`'s lines; stdin if none.
pub(crate) fn sources(cli: &Cli) -> Result<Vec<Source>, String> {
    let mut sources: Vec<Source> = cli.files.iter().map(|p| source(p.clone())).collect();
    if let Some(list) = &cli.files_from {
        let reader: Box<dyn BufRead> = if list.as_os_str() == "-" {
            Box::new(BufReader::new(io::stdin()))
        } else {
            Box::new(BufReader::new(File::open(list).map_err(|e| {
                format!("--files-from {}: cannot open: {e}", list.display())
            })?))
        };
        for line in reader.split(b'\n') {
            let line = line.map_err(|e| format!("--files-from: cannot read: {e}"))?;
            let line = line.strip_suffix(b"\r").unwrap_or(&line);
            if line.is_empty() {
                continue;
            }
            sources.push(source(path_from_bytes(line)));
        }
        if sources.is_empty() {
            return Ok(sources);
        }
    }
    if sources.is_empty() {
        sources.push(Source::Stdin);
    }
    if cli
        .files_from
        .as_ref()
        .is_some_and(|f| f.as_os_str() == "-")
        && sources.contains(&Source::Stdin)
    {
        return Err("stdin cannot be both --files-from - and an input".to_string());
    }
    Ok(sources)
}

/// Says on stderr, when stdin is the terminal and is among `sources`, that
/// the run reads log lines typed there (a newcomer who runs the command
/// with no FILE would otherwise see it wait, saying nothing). `what`: the
/// command's name in the message.
pub(crate) fn hint_terminal_stdin(cli: &Cli, sources: &[Source], what: &str) {
    let ttys = super::term::Ttys::detect();
    if sources.contains(&Source::Stdin)
        && ttys.stdin
        && ttys.stderr
        && !cli.quiet
        && cli.files_from.is_none()
    {
        // One write: `eprintln!` writes the name and the rest apart, and
        // text typed meanwhile is echoed between them.
        let hint = format!(
            "{what}: reading log lines from the terminal; end with Ctrl-D, or give a FILE (--help)\n"
        );
        let _ = io::stderr().write_all(hint.as_bytes());
    }
}

/// Directory arguments replaced by the files below them; what each gave.
/// A directory that cannot be listed is named on stderr now.
pub(crate) fn expand_dirs(sources: Vec<Source>, globs: &Globs) -> (Vec<Source>, Vec<Walked>) {
    let mut out = Vec::with_capacity(sources.len());
    let mut walked = Vec::new();
    for s in sources {
        match &s {
            Source::Path(p) if p.is_dir() => {
                let w = walk(p, globs);
                for (path, e) in &w.errors {
                    eprintln!("canonurl: {path}: {e}");
                }
                out.extend(w.sources());
                walked.push(w);
            }
            _ => out.push(s),
        }
    }
    (out, walked)
}

/// After the run: what the directories skipped goes into the summary, each
/// directory that could not be listed is an input with an error (exit 2),
/// and a directory of which no file was read is said so.
pub(crate) fn dirs_read(walked: &[Walked], summary: &mut Summary) {
    // The files the reader skipped (binary, no format detected).
    let not_read: std::collections::HashMap<&str, &'static str> = summary
        .inputs_skipped
        .iter()
        .map(|s| (s.name.as_str(), s.reason))
        .collect();
    let mut notes = Vec::new();
    for w in walked {
        let reasons: Vec<&'static str> = w
            .files
            .iter()
            .filter_map(|f| not_read.get(f.display().to_string().as_str()).copied())
            .collect();
        notes.extend(nothing_read(w, &reasons));
    }
    for w in walked {
        summary.inputs_skipped.extend(w.skipped.iter().cloned());
        for (path, e) in &w.errors {
            summary.files.push(pipeline::stats::FileReport {
                name: path.clone(),
                format: None,
                detected: false,
                json_preset: None,
                compression: "none",
                error: Some(e.clone()),
                stats: Default::default(),
            });
        }
    }
    summary
        .inputs_skipped
        .sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    for note in notes {
        eprintln!("{note}");
    }
}

pub(crate) fn source(path: PathBuf) -> Source {
    if path.as_os_str() == "-" {
        Source::Stdin
    } else {
        Source::Path(path)
    }
}

#[cfg(unix)]
pub(crate) fn path_from_bytes(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
pub(crate) fn path_from_bytes(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

/// `--follow`'s one input, checked now so that a wrong one is a usage error.
pub(crate) fn follow_source(sources: Vec<Source>) -> Result<Source, String> {
    let path = match sources.as_slice() {
        [Source::Path(path)] => path.clone(),
        [Source::Stdin] => {
            return Err(
                "--follow needs a FILE: stdin is read as it arrives without it \
                 (`tail -F access.log | canonurl` works too)"
                    .to_string(),
            )
        }
        _ => {
            return Err(format!(
                "--follow follows exactly one FILE, not {} inputs",
                sources.len()
            ))
        }
    };
    // Opened once to check it (exists, regular, not compressed); the run
    // opens it again.
    canonurl::input::follow::FollowReader::new(&path, Arc::default())
        .map_err(|e| format!("--follow {}: {e}", path.display()))?;
    Ok(Source::Follow(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn globs(list: &[&str]) -> Globs {
        Globs::new(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn the_last_matching_glob_decides() {
        let g = globs(&["*.gz", "!*.1.gz"]);
        assert!(g.reads_file(Path::new("a/access.log.2.gz")));
        assert!(!g.reads_file(Path::new("a/access.log.1.gz")));
        assert!(!g.reads_file(Path::new("access.log")));
        // Excludes only: everything else is read.
        let g = globs(&["!*.tmp"]);
        assert!(g.reads_file(Path::new("x.log")));
        assert!(!g.reads_file(Path::new("d/x.tmp")));
        // A name glob does not match across `/`; a path glob matches the
        // path below the directory.
        let g = globs(&["2024/**/*.log"]);
        assert!(g.reads_file(Path::new("2024/01/a.log")));
        assert!(!g.reads_file(Path::new("2023/01/a.log")));
        assert!(!globs(&["a*"]).reads_file(Path::new("ab/c")));
        // Directories: only excludes prune.
        let g = globs(&["*.log", "!old"]);
        assert!(g.enters_dir(Path::new("new")));
        assert!(!g.enters_dir(Path::new("x/old")));
        assert!(Globs::new(&["a[".to_string()]).is_err());
    }
}
