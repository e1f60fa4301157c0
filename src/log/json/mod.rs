//! JSON access logs: one object per line (Caddy, Traefik, hand-written nginx
//! `log_format ... escape=json` layouts, cloud and CDN logs, Zeek's
//! `http.log`, or any layout given as dotted paths).
//!
//! The extractor builds no document. It walks the line once: a member whose
//! key leads toward a wanted path is entered, every other value is skipped by
//! a small validating scanner, and the walk stops as soon as every wanted path
//! has been found or can no longer appear (its enclosing object has closed).
//! Bytes after that point are not checked, so a line cut after its wanted
//! fields still gives a record; invalid JSON before it is an error.
//!
//! What the paths, values and strings of a layout mean is documented on
//! [`JsonPaths`].
//!
//! The parts: this file is the reader the registry uses (a line in, a record
//! out); `path.rs` the path language ([`JsonPaths`] and the parsed paths);
//! `presets.rs` the table of known layouts ([`JsonPreset`]); `walker.rs` the
//! walk that follows the paths into one line's object; `scan.rs` the
//! byte-level scanner under it (strings, escapes, skipped values).

mod path;
mod presets;
mod scan;
mod walker;

use std::cmp::Reverse;

use memchr::{memchr, memmem, memrchr};

pub use path::JsonPaths;
pub use presets::JsonPreset;

use self::path::{Alternative, Slot, MAX_ALTERNATIVES, SLOT_COUNT};
use self::scan::{is_whitespace, read_key, skip_value, skip_whitespace, value_start};
use self::walker::Found;
use super::{Extracted, Field, Line, LineError, LogFormat, LogReader, ReadOptions, Skip};

/// Reads JSON access-log lines: finds the values at the configured paths and
/// copies them, escapes undone, into an [`Extracted`].
#[derive(Clone, Debug)]
pub struct JsonExtractor {
    /// Boxed: read once per line at most, and it keeps the extractor small.
    paths: Box<JsonPaths>,
    /// Bit `i` of every mask below stands for `alternatives[i]`; the
    /// alternatives of one slot are adjacent, best first.
    alternatives: Vec<Alternative>,
    slot_bits: [u64; SLOT_COUNT],
    /// For each object entered on the way to a path, outermost first: the
    /// alternatives that may still be found inside it.
    objects: Vec<u64>,
    /// A key with escapes, undone (keys without escapes are read in place).
    key: Vec<u8>,
    /// The string value being taken, escapes undone.
    value: Vec<u8>,
    found: Found,
    /// True while reading a line whose other fields are wanted
    /// ([`Extracted::want_info`]): their paths are then looked for too.
    info: bool,
}

impl LogReader for JsonExtractor {
    fn new(_: LogFormat, opts: &ReadOptions) -> Self {
        JsonExtractor::new(opts.json_paths.clone().unwrap_or_default())
    }

    /// Reads one line (without its line end) into `out`.
    ///
    /// With `field.request()`, the target comes from the target path, or else
    /// from the request line (`METHOD SP target [SP HTTP/x.y]`); host, scheme
    /// and `connect` come with it. A valid object with neither is
    /// [`Skip::NoRequest`] (Caddy's start-up messages), unless `Field::Both`
    /// found a referer. For `Field::Referer`, a missing referer is
    /// [`Skip::EmptyField`], or `NoRequest` when the target paths are
    /// configured and missing too.
    fn read(&mut self, line: &[u8], field: Field, out: &mut Extracted) -> Line {
        let Some(open) = memchr(b'{', line) else {
            return match line.iter().position(|&b| !is_whitespace(b)) {
                None => Line::Skip(Skip::EmptyLine),
                Some(at) => Line::Error(LineError::Malformed, at),
            };
        };
        self.found.reset();
        self.info = out.want_info;
        if let Err((error, at)) = self.walk(line, open, field, out) {
            return Line::Error(error, at);
        }
        let found = &self.found;
        if self.info {
            let info = &mut out.info;
            info.client = super::info::without_port(line, info.client);
            // A request line's method, when no method path gave one.
            if info.method.is_none() {
                if let Some((start, end)) = found.request_line_raw {
                    let space = memchr(b' ', line.get(start..end).unwrap_or(&[]));
                    info.method = space.filter(|&n| n > 0).map(|n| (start, start + n));
                }
            }
        }
        if field.request() {
            if found.has(Slot::Target) {
                out.has_target = true;
                if self.slot_bits[Slot::Query as usize] != 0 {
                    join_query(out.owned_target(line), found);
                }
            } else if found.has(Slot::RequestLine) {
                let Some((method, target)) = split_request_line(&found.request_line) else {
                    return Line::Error(LineError::BadRequestLine, found.request_line_at);
                };
                out.set_target(target);
                out.has_target = true;
                out.connect = method == b"CONNECT";
            }
            out.connect |= found.method_is_connect;
            out.scheme = found.scheme;
            out.port = found.port;
            if out.scheme.is_none() && out.port.is_none() {
                out.scheme = self.paths.default_scheme;
            }
        }
        if field.referer() {
            out.has_referer = found.has(Slot::Referer);
        }
        let has_request = found.has(Slot::Target) || found.has(Slot::RequestLine);
        match field {
            Field::Request if out.has_target => Line::Record,
            Field::Referer if out.has_referer => Line::Record,
            Field::Both if out.has_target || out.has_referer => Line::Record,
            Field::Referer if has_request || !self.has_request_paths() => {
                Line::Skip(Skip::EmptyField)
            }
            _ => Line::Skip(Skip::NoRequest),
        }
    }

    /// An object first, or after a docker-compose prefix (`web_1  | {`).
    fn shape(line: &[u8]) -> Option<u8> {
        if super::escape::trim_spaces(line).first() == Some(&b'{') {
            return Some(0);
        }
        memmem::find(line, b"| {")
            .filter(|&bar| bar < 64)
            .map(|_| 0)
    }
}

impl JsonExtractor {
    /// An extractor for the layout described by `paths`.
    pub fn new(paths: JsonPaths) -> Self {
        let mut alternatives = Vec::new();
        let mut slot_bits = [0u64; SLOT_COUNT];
        let slots = [
            (Slot::Target, &paths.target),
            (Slot::RequestLine, &paths.request_line),
            (Slot::Host, &paths.host),
            (Slot::Scheme, &paths.scheme),
            (Slot::Referer, &paths.referer),
            (Slot::Method, &paths.method),
            (Slot::Query, &paths.query),
            (Slot::Status, &paths.status),
            (Slot::Bytes, &paths.bytes),
            (Slot::Time, &paths.time),
            (Slot::Client, &paths.client),
        ];
        for (slot, path) in slots {
            for alternative in path.iter().flat_map(|p| p.split('|')) {
                let alternative = alternative.trim();
                if alternative.is_empty() || alternatives.len() == MAX_ALTERNATIVES {
                    continue;
                }
                let Some(alternative) = Alternative::parse(slot, alternative) else {
                    continue;
                };
                slot_bits[slot as usize] |= 1u64 << alternatives.len();
                alternatives.push(alternative);
            }
        }
        let deepest = alternatives.iter().map(|a| a.keys.len()).max().unwrap_or(0);
        JsonExtractor {
            paths: Box::new(paths),
            alternatives,
            slot_bits,
            objects: Vec::with_capacity(deepest + 1),
            key: Vec::with_capacity(64),
            value: Vec::with_capacity(256),
            found: Found::default(),
            info: false,
        }
    }

    /// The paths this extractor was made with.
    pub fn paths(&self) -> &JsonPaths {
        &self.paths
    }

    /// Picks the preset whose target (or request-line) path holds a value in
    /// the most of `sample_lines` (the first lines of a file); `None` when no
    /// line has one. Not a majority vote: Caddy logs mix access records with
    /// many start-up messages. Between presets with as many such lines, the
    /// one that found more of its other fields in them wins (Front Door and
    /// Application Gateway both log `properties.requestUri`); a tie after
    /// that goes to the earlier of [`JsonPreset::ALL`].
    pub fn detect_preset<'a>(
        sample_lines: impl IntoIterator<Item = &'a [u8]>,
    ) -> Option<JsonPreset> {
        let mut extractors = JsonPreset::ALL.map(|p| JsonExtractor::new(p.paths()));
        // Per preset: lines with a request, and fields found in them.
        let mut hits = [(0usize, 0usize); JsonPreset::ALL.len()];
        let mut out = Extracted::default();
        for line in sample_lines {
            for (extractor, (lines, fields)) in extractors.iter_mut().zip(&mut hits) {
                if let Some(found) = extractor.request_fields(line, &mut out) {
                    *lines += 1;
                    *fields += found;
                }
            }
        }
        let (best, &(count, _)) = hits
            .iter()
            .enumerate()
            .max_by_key(|&(index, &hit)| (hit, Reverse(index)))?;
        (count > 0).then_some(JsonPreset::ALL[best])
    }

    fn has_request_paths(&self) -> bool {
        self.slot_bits[Slot::Target as usize] | self.slot_bits[Slot::RequestLine as usize] != 0
    }

    /// When the line is a valid object (up to where the walk stopped) with
    /// a value at the target or request-line path: how many of the slots
    /// have a value.
    fn request_fields(&mut self, line: &[u8], out: &mut Extracted) -> Option<usize> {
        let open = memchr(b'{', line)?;
        out.clear();
        self.found.reset();
        self.info = false;
        self.walk(line, open, Field::Both, out).ok()?;
        let found = &self.found;
        (found.has(Slot::Target) || found.has(Slot::RequestLine))
            .then(|| found.best.iter().filter(|b| b.is_some()).count())
    }
}

/// Joins the query found to the target: `?` and the query when there is
/// one, and a leading `/` when the logged path lacks it (a layout that logs
/// the query apart logs a path, never an absolute URL).
fn join_query(target: &mut Vec<u8>, found: &Found) {
    if target.first().is_some_and(|&b| b != b'/') {
        target.insert(0, b'/');
    }
    if found.has(Slot::Query) {
        target.push(b'?');
        target.extend_from_slice(&found.query);
    }
}

/// The top-level keys of the first line of `sample_lines` that is a whole
/// JSON object, for telling the user what a log holds when no preset fits;
/// `None` when no line is one. Cold: once per input.
pub(crate) fn first_object_keys<'a>(
    sample_lines: impl IntoIterator<Item = &'a [u8]>,
) -> Option<Vec<String>> {
    sample_lines.into_iter().find_map(object_keys)
}

/// The keys of the object that is `line` (after any prefix), or `None`
/// when the line is not one whole object.
fn object_keys(line: &[u8]) -> Option<Vec<String>> {
    let open = memchr(b'{', line)?;
    let mut keys = Vec::new();
    let mut scratch = Vec::new();
    let mut pos = skip_whitespace(line, open + 1);
    if line.get(pos) != Some(&b'}') {
        loop {
            let (key, end) = read_key(line, pos, &mut scratch).ok()?;
            keys.push(String::from_utf8_lossy(key).into_owned());
            pos = skip_value(line, value_start(line, end).ok()?).ok()?;
            pos = skip_whitespace(line, pos);
            match line.get(pos)? {
                b',' => pos = skip_whitespace(line, pos + 1),
                b'}' => break,
                _ => return None,
            }
        }
    }
    (skip_whitespace(line, pos + 1) == line.len()).then_some(keys)
}

/// Splits `METHOD SP target [SP HTTP/x.y]` into method and target. The
/// target may be empty (`GET  HTTP/1.1`) or hold spaces; a line without a
/// space or without a method is not a request line.
fn split_request_line(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let space = memchr(b' ', line)?;
    let (method, rest) = (line.get(..space)?, line.get(space + 1..)?);
    if method.is_empty() {
        return None;
    }
    let target = match memrchr(b' ', rest) {
        Some(last)
            if rest
                .get(last + 1..)
                .is_some_and(|v| v.starts_with(b"HTTP/")) =>
        {
            rest.get(..last)?
        }
        _ => rest,
    };
    Some((method, target))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{Extract, Scheme};

    pub(super) fn paths(target: &str) -> JsonPaths {
        JsonPaths {
            target: Some(target.to_owned()),
            ..JsonPaths::default()
        }
    }

    pub(super) fn run(paths: JsonPaths, line: &[u8], field: Field) -> (Line, Extracted) {
        let mut extractor = JsonExtractor::new(paths);
        let mut out = Extracted::default();
        let result = extractor.extract(line, field, &mut out);
        (result, out)
    }

    pub(super) fn target_of(line: &[u8]) -> Result<Vec<u8>, Line> {
        match run(paths("t"), line, Field::Request) {
            (Line::Record, out) => Ok(out.target(line).to_vec()),
            (other, _) => Err(other),
        }
    }

    #[test]
    fn prefix_before_the_object_is_ignored() {
        let line = br#"web_1  | {"request_uri":"/x","http_host":"a.example:8080"}"#;
        let (result, out) = run(JsonPreset::Nginx.paths(), line, Field::Request);
        assert_eq!(result, Line::Record);
        assert_eq!(out.target(line), b"/x");
        assert_eq!(out.host, b"a.example:8080");
    }

    #[test]
    fn empty_lines_and_lines_without_an_object() {
        let nginx = || JsonPreset::Nginx.paths();
        assert_eq!(
            run(nginx(), b"", Field::Request).0,
            Line::Skip(Skip::EmptyLine)
        );
        assert_eq!(
            run(nginx(), b" \t\r", Field::Request).0,
            Line::Skip(Skip::EmptyLine)
        );
        assert_eq!(
            run(nginx(), b"  GET / HTTP/1.1", Field::Request).0,
            Line::Error(LineError::Malformed, 2)
        );
        assert_eq!(
            run(nginx(), b"{}", Field::Request).0,
            Line::Skip(Skip::NoRequest)
        );
        assert_eq!(
            run(nginx(), b" { } \r", Field::Both).0,
            Line::Skip(Skip::NoRequest)
        );
    }

    #[test]
    fn request_lines_are_split() {
        let nginx = || JsonPreset::Nginx.paths();
        // The result, the record, and its target (read from the line).
        let request = |r: &str| {
            let line = format!(r#"{{"request":"{r}"}}"#);
            let (result, out) = run(nginx(), line.as_bytes(), Field::Request);
            let target = out.target(line.as_bytes()).to_vec();
            (result, out, target)
        };
        let (result, out, target) = request("CONNECT a.example:443 HTTP/1.1");
        assert_eq!(
            (result, &target[..], out.connect),
            (Line::Record, &b"a.example:443"[..], true)
        );
        let (_, out, target) = request("GET /x");
        assert_eq!((&target[..], out.connect), (&b"/x"[..], false));
        let (result, out, target) = request("GET  HTTP/1.1");
        assert_eq!(
            (result, &target[..], out.has_target),
            (Line::Record, &b""[..], true)
        );
        let (_, _, target) = request("GET /a b HTTP/2.0");
        assert_eq!(target, b"/a b");
        assert_eq!(
            request("\\x16\\x03\\x01").0,
            Line::Error(LineError::BadRequestLine, 11)
        );
        assert_eq!(
            request(" /x HTTP/1.1").0,
            Line::Error(LineError::BadRequestLine, 11)
        );
    }

    #[test]
    fn method_path_marks_connect() {
        let line = br#"{"request_method":"CONNECT","request_uri":"a.example:443"}"#;
        let (_, out) = run(JsonPreset::Nginx.paths(), line, Field::Request);
        assert!(out.connect);
        let line = br#"{"request_method":"connect","request_uri":"/"}"#;
        let (_, out) = run(JsonPreset::Nginx.paths(), line, Field::Request);
        assert!(!out.connect);
    }

    #[test]
    fn both_fields_give_a_record_when_either_is_there() {
        let nginx = || JsonPreset::Nginx.paths();
        let line = br#"{"http_referer":"https://r/"}"#;
        let (result, out) = run(nginx(), line, Field::Both);
        assert_eq!(result, Line::Record);
        assert!(!out.has_target && out.has_referer);
        assert_eq!(
            run(nginx(), line, Field::Request).0,
            Line::Skip(Skip::NoRequest)
        );
        // A referer alone, with no target path configured: nothing to tell it apart.
        let p = JsonPaths {
            referer: Some("r".into()),
            ..JsonPaths::default()
        };
        assert_eq!(
            run(p, b"{\"x\":1}", Field::Referer).0,
            Line::Skip(Skip::EmptyField)
        );
    }

    #[test]
    fn buffers_are_reused_between_lines() {
        let mut extractor = JsonExtractor::new(JsonPreset::Caddy.paths());
        let mut out = Extracted::default();
        let line = br#"{"request":{"host":"h","uri":"/a","headers":{"Referer":["r"]},"tls":{}}}"#;
        assert_eq!(extractor.extract(line, Field::Both, &mut out), Line::Record);
        assert!(out.has_referer && out.scheme.is_some());
        let line = br#"{"request":{"uri":"/b","headers":{}}}"#;
        assert_eq!(extractor.extract(line, Field::Both, &mut out), Line::Record);
        assert_eq!(out.target(line), b"/b");
        assert!(!out.has_referer && out.referer.is_empty() && out.host.is_empty());
        assert_eq!(out.scheme, None);
    }

    #[test]
    fn detect_preset_by_target_paths() {
        let nginx: &[&[u8]] = &[
            br#"{"remote_addr":"1.2.3.4","request":"GET / HTTP/1.1","status":"200"}"#,
            b"not json",
        ];
        assert_eq!(
            JsonExtractor::detect_preset(nginx.iter().copied()),
            Some(JsonPreset::Nginx)
        );
        let nothing: &[&[u8]] = &[
            b"1.2.3.4 - - [x] \"GET / HTTP/1.1\" 200 1",
            b"{\"msg\":\"hi\"}",
        ];
        assert_eq!(JsonExtractor::detect_preset(nothing.iter().copied()), None);
        assert_eq!(JsonExtractor::detect_preset(std::iter::empty()), None);
    }

    /// One extractor and one record across lines whose target string has
    /// no escape (left in the line) and lines where undoing an escape or
    /// joining a query makes it a copy, in turn: a target lent where a copy
    /// is needed would give the escaped bytes, and one kept from the last
    /// line its bytes.
    #[test]
    fn target_lent_unless_escaped_or_joined() {
        // The paths, the line, its target, and whether it stays in the line.
        let plain = paths("a|t");
        let joined = JsonPaths {
            target: Some("p".into()),
            query: Some("q".into()),
            ..JsonPaths::default()
        };
        let cases: [(&JsonPaths, &[u8], &[u8], bool); 12] = [
            (&plain, br#"{"t":"/a/b?x=1"}"#, b"/a/b?x=1", true),
            (&plain, br#"{"t":"\/a\/b"}"#, b"/a/b", false),
            (&plain, br#"{"t":"/after-escaped"}"#, b"/after-escaped", true),
            (&plain, br#"{"t":"/\u00e9\u0041"}"#, "/\u{e9}A".as_bytes(), false),
            (&plain, br#"{"t":"/q\"x\\y"}"#, br#"/q"x\y"#, false),
            (&plain, br#"{"t":"/n\x22"}"#, br#"/n""#, false),
            (&plain, br#"x | {"t":["/first","/second"]}"#, b"/first", true),
            // A better alternative after a lent one, escaped or not.
            (&plain, br#"{"t":"/worse","a":"\/better"}"#, b"/better", false),
            (&plain, br#"{"t":"/w\/orse","a":"/better"}"#, b"/better", true),
            (&joined, br#"{"p":"/a","q":"b=1"}"#, b"/a?b=1", false),
            (&joined, br#"{"p":"a/b"}"#, b"/a/b", false),
            (&plain, br#"{"t":"http://h/x"}"#, b"http://h/x", true),
        ];
        let mut out = Extracted::default();
        for (paths, line, want, lent) in cases {
            let shown = String::from_utf8_lossy(line);
            let mut extractor = JsonExtractor::new(paths.clone());
            let result = extractor.extract(line, Field::Request, &mut out);
            assert_eq!((result, out.target(line)), (Line::Record, want), "{shown}");
            let in_line = line.as_ptr_range().contains(&out.target(line).as_ptr());
            assert_eq!((in_line, out.target_is_lent()), (lent, lent), "{shown}");
        }
    }

    #[test]
    fn query_paths_join_the_target() {
        let p = JsonPaths {
            target: Some("p".into()),
            query: Some("q".into()),
            ..JsonPaths::default()
        };
        let cases: &[(&[u8], &[u8])] = &[
            (br#"{"p":"/a","q":"b=1"}"#, b"/a?b=1"),
            (br#"{"q":"b=1","p":"/a"}"#, b"/a?b=1"),
            (br#"{"p":"a/b","q":"-"}"#, b"/a/b"),
            (br#"{"p":"/a","q":""}"#, b"/a"),
            (br#"{"p":"/a","q":null}"#, b"/a"),
            (br#"{"p":"/a","q":"x?y"}"#, b"/a?x?y"),
        ];
        for &(line, target) in cases {
            let (result, out) = run(p.clone(), line, Field::Request);
            assert_eq!((result, out.target(line)), (Line::Record, target));
        }
        // A query alone is no request.
        assert_eq!(
            run(p, br#"{"q":"b=1"}"#, Field::Request).0,
            Line::Skip(Skip::NoRequest)
        );
    }

    /// The record's other fields of `line` as `preset` reads them, with
    /// `Field::Request`: status, bytes, method, time, client.
    pub(super) type Other = (
        Option<u16>,
        Option<u64>,
        Option<String>,
        Option<i64>,
        Option<String>,
    );

    pub(super) fn other_fields(paths: JsonPaths, line: &[u8]) -> (Line, Other) {
        let mut extractor = JsonExtractor::new(paths);
        let mut out = Extracted::default();
        out.want_info(true);
        let result = extractor.extract(line, Field::Request, &mut out);
        let i = out.info;
        let text = |v: Option<&[u8]>| v.map(|v| String::from_utf8_lossy(v).into_owned());
        let other = (
            i.status(line),
            i.bytes(line),
            text(i.method(line)),
            i.time(line),
            text(i.client(line)),
        );
        (result, other)
    }

    pub(super) fn some(status: u16, bytes: Option<u64>, method: &str, time: i64, client: &str) -> Other {
        (
            Some(status),
            bytes,
            Some(method.into()),
            Some(time),
            Some(client.into()),
        )
    }

    #[test]
    fn first_object_keys_name_the_top_level_fields() {
        let lines: [&[u8]; 4] = [
            b"### not json",
            br#"{"a":1,"#,
            br#"web | { "msg" : "x", "n\u0061me":{"inner":1}, "l":[1,{"k":2}] } "#,
            br#"{"later":1}"#,
        ];
        assert_eq!(
            first_object_keys(lines),
            Some(vec!["msg".to_owned(), "name".into(), "l".into()])
        );
        assert_eq!(first_object_keys([&b"{}"[..]]), Some(Vec::new()));
        let none: [&[u8]; 3] = [b"{", br#"  "a": 1,"#, b"}"];
        assert_eq!(first_object_keys(none), None);
        assert_eq!(first_object_keys([&br#"{"a":1}x"#[..]]), None);
    }

    /// The shared data directory, or `None` (with a notice) when it is absent.
    fn shared_data() -> Option<std::path::PathBuf> {
        let dir = match std::env::var_os("CANONURL_SHARED_DATA") {
            Some(dir) => std::path::PathBuf::from(dir),
            None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"),
        };
        if dir.is_dir() {
            Some(dir)
        } else {
            eprintln!(
                "skipping: no shared data at {} (set CANONURL_SHARED_DATA)",
                dir.display()
            );
            None
        }
    }

    fn read_lines(dir: &std::path::Path, file: &str) -> Vec<Vec<u8>> {
        let bytes = std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    }

    struct Summary {
        records: Vec<(usize, Extracted)>,
        skips: usize,
        errors: usize,
    }

    fn extract_all(preset: JsonPreset, lines: &[Vec<u8>], field: Field) -> Summary {
        let mut extractor = JsonExtractor::new(preset.paths());
        let mut summary = Summary {
            records: Vec::new(),
            skips: 0,
            errors: 0,
        };
        for (index, line) in lines.iter().enumerate() {
            let mut out = Extracted::default();
            match extractor.extract(line, field, &mut out) {
                Line::Record => summary.records.push((index + 1, out)),
                Line::Skip(_) => summary.skips += 1,
                Line::Error(..) => summary.errors += 1,
            }
        }
        summary
    }

    #[test]
    fn real_caddy_logs() {
        let Some(dir) = shared_data() else { return };
        let lines = read_lines(&dir, "logs-lnav/logfile_caddy_log.0");
        assert_eq!(lines.len(), 39);
        let refs = lines.iter().map(Vec::as_slice);
        assert_eq!(JsonExtractor::detect_preset(refs), Some(JsonPreset::Caddy));
        // Docker compose prefix; 4 access records among start-up messages.
        let summary = extract_all(JsonPreset::Caddy, &lines, Field::Both);
        assert_eq!((summary.skips, summary.errors), (35, 0));
        let found: Vec<_> = summary
            .records
            .iter()
            .map(|(n, o)| (*n, o.target(&lines[n - 1])))
            .collect();
        assert_eq!(
            found,
            [
                (16, &b"/"[..]),
                (37, b"/"),
                (38, b"/"),
                (39, b"/index.html")
            ]
        );
        for (_, out) in &summary.records {
            assert_eq!(out.host, b"localhost");
            assert_eq!(
                (out.scheme, out.connect, out.has_referer),
                (None, false, false)
            );
        }
        let mut extractor = JsonExtractor::new(JsonPreset::Caddy.paths());
        let mut out = Extracted::default();
        assert_eq!(
            extractor.extract(&lines[0], Field::Request, &mut out),
            Line::Skip(Skip::NoRequest)
        );
        assert_eq!(
            extractor.extract(&lines[15], Field::Referer, &mut out),
            Line::Skip(Skip::EmptyField)
        );
        assert_eq!(
            extractor.extract(&lines[0], Field::Referer, &mut out),
            Line::Skip(Skip::NoRequest)
        );

        let lines = read_lines(&dir, "logs-lnav/logfile_caddy_log.1");
        let refs = lines.iter().map(Vec::as_slice);
        assert_eq!(JsonExtractor::detect_preset(refs), Some(JsonPreset::Caddy));
        let summary = extract_all(JsonPreset::Caddy, &lines, Field::Both);
        assert_eq!(
            (summary.records.len(), summary.skips, summary.errors),
            (4, 0, 0)
        );
        let (n, first) = &summary.records[0];
        assert_eq!(
            first.target(&lines[n - 1]),
            b"/gentoo/gentoo-distfiles/distfiles/9b/tl-hrlatex.source-2021.tar.xz"
        );
        assert_eq!(
            (first.host.as_slice(), first.scheme),
            (&b"mirrors.tnonline.net:400"[..], None)
        );
        assert!(!first.has_referer);
        // The one HTTP/3 request has `tls` and a Referer header.
        let (n, last) = &summary.records[3];
        assert_eq!(last.target(&lines[n - 1]), b"/res/browse.css");
        assert_eq!(
            (last.host.as_slice(), last.scheme),
            (&b"mirrors.tnonline.net"[..], Some(Scheme::Https))
        );
        assert_eq!(
            last.referer,
            b"https://mirrors.tnonline.net/gentoo/gentoo-portage/app-dicts/aspell-lt/"
        );
        let referers = extract_all(JsonPreset::Caddy, &lines, Field::Referer);
        assert_eq!((referers.records.len(), referers.skips), (1, 3));
    }

    #[test]
    fn real_traefik_log() {
        let Some(dir) = shared_data() else { return };
        let lines = read_lines(
            &dir,
            "logs-cloud-fixtures/elastic-integrations-traefik-test-format-json.log",
        );
        let refs = lines.iter().map(Vec::as_slice);
        assert_eq!(
            JsonExtractor::detect_preset(refs),
            Some(JsonPreset::Traefik)
        );
        let summary = extract_all(JsonPreset::Traefik, &lines, Field::Request);
        assert_eq!((summary.skips, summary.errors), (0, 0));
        let got: Vec<_> = summary
            .records
            .iter()
            .map(|(n, o)| (o.target(&lines[n - 1]), o.host.as_slice(), o.scheme))
            .collect();
        let http = Some(Scheme::Http);
        let expected: [(&[u8], &[u8], _); 7] = [
            (
                b"/",
                b"backend.elastic-package-service.docker.localhost",
                None,
            ),
            (b"/", b"backend.docker.docker.localhost", None),
            (b"/ping", b"10.10.10.11:4567", http),
            (b"/foo/bar/baz.php", b"10.10.10.11:12345", None),
            (b"/1.0.0/acme/current/foo.png", b"foo.acme.com", None),
            (
                b"/api/v1/study/140410210038/card/comment",
                b"api-students.unpad.ac.id",
                http,
            ),
            (
                b"/",
                b"backend.elastic-package-service.docker.localhost",
                http,
            ),
        ];
        assert_eq!(got, expected);
        // No request_Referer in these lines.
        let referers = extract_all(JsonPreset::Traefik, &lines, Field::Referer);
        assert_eq!((referers.records.len(), referers.skips), (0, 7));
    }

    /// Every line of the real files, as (preset, bytes).
    fn real_lines() -> Vec<(JsonPreset, Vec<u8>)> {
        let Some(dir) = shared_data() else {
            return Vec::new();
        };
        let files = [
            (JsonPreset::Caddy, "logs-lnav/logfile_caddy_log.0"),
            (JsonPreset::Caddy, "logs-lnav/logfile_caddy_log.1"),
            (
                JsonPreset::Traefik,
                "logs-cloud-fixtures/elastic-integrations-traefik-test-format-json.log",
            ),
        ];
        let mut all = Vec::new();
        for (preset, file) in files {
            all.extend(read_lines(&dir, file).into_iter().map(|l| (preset, l)));
        }
        all
    }

    /// A line of each kind when the shared data is absent.
    fn fallback_lines() -> Vec<(JsonPreset, Vec<u8>)> {
        let caddy = br#"web | {"level":"info","request":{"method":"GET","host":"h:1","uri":"/a?b=\u00e9","headers":{"Referer":["https://r/"],"A":["\"x\""]},"tls":{"proto":"h2"}},"size":12.5e3,"ok":true,"n":null,"v":[[],{}]}"#;
        let nginx = b"{\"request\":\"GET /\\x22\xff HTTP/1.1\",\"http_referer\":\"-\",\"http_host\":\"h\",\"status\":200}";
        let waf = br#"{"action":"ALLOW","httpRequest":{"clientIp":"1.2.3.4","headers":[{"name":"x","value":"y"},7,{"value":"z","name":"Host"},{"name":"HOST","value":"h.example"},{"name":"Referer","value":"https://r/\u00e9"}],"uri":"/a","args":"b=1&c","httpMethod":"GET"}}"#;
        let zeek = br#"{"ts":1.5,"id.orig_h":"::1","id.resp_p":443,"method":"GET","host":"h","uri":"/\\x07","referrer":"-"}"#;
        vec![
            (JsonPreset::Caddy, caddy.to_vec()),
            (JsonPreset::Nginx, nginx.to_vec()),
            (JsonPreset::AwsWaf, waf.to_vec()),
            (JsonPreset::Zeek, zeek.to_vec()),
        ]
    }

    #[test]
    fn every_prefix_is_an_error_or_the_whole_lines_answer() {
        let mut lines = real_lines();
        lines.extend(fallback_lines());
        let mut out = Extracted::default();
        for (preset, line) in &lines {
            let mut extractor = JsonExtractor::new(preset.paths());
            for field in [Field::Request, Field::Referer, Field::Both] {
                let whole = extractor.extract(line, field, &mut out);
                let whole_target = out.target(line).to_vec();
                for len in 1..line.len() {
                    let prefix = &line[..len];
                    let result = extractor.extract(prefix, field, &mut out);
                    // A walk that stops early gives the whole line's answer.
                    let fine = match result {
                        Line::Error(_, at) => at <= len,
                        _ => result == whole && out.target(prefix) == whole_target,
                    };
                    assert!(fine, "{field:?} prefix {len}: {result:?} ({whole:?} whole)");
                }
            }
        }
    }

    /// xorshift64: a fixed sequence, no dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    #[test]
    fn mutated_lines_never_panic() {
        let mut lines = real_lines();
        lines.extend(fallback_lines());
        let mut extractors = JsonPreset::ALL.map(|p| JsonExtractor::new(p.paths()));
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut out = Extracted::default();
        let mut line = Vec::new();
        let mut outcomes = [0usize; 3];
        for _ in 0..100_000 {
            let (preset, base) = &lines[rng.below(lines.len())];
            line.clear();
            line.extend_from_slice(base);
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(line.len() + 1);
                match rng.below(6) {
                    0 if at < line.len() => line[at] ^= 1 << rng.below(8),
                    1 => line.truncate(at),
                    2 => line.insert(at, b'"'),
                    3 => line.insert(at, b'\\'),
                    4 => line.insert(at, b"{}[]:,u\xff"[rng.below(8)]),
                    _ if at < line.len() => {
                        line.remove(at);
                    }
                    _ => {}
                }
            }
            let field = [Field::Request, Field::Referer, Field::Both][rng.below(3)];
            // Mostly the line's own preset, so that records come out.
            let own = JsonPreset::ALL.iter().position(|p| p == preset);
            let index = match rng.below(4) {
                0 => rng.below(JsonPreset::ALL.len()),
                _ => own.unwrap_or(0),
            };
            let extractor = &mut extractors[index];
            let result = extractor.extract(&line, field, &mut out);
            match result {
                Line::Record => outcomes[0] += 1,
                Line::Skip(_) => outcomes[1] += 1,
                Line::Error(_, at) => {
                    assert!(at <= line.len());
                    outcomes[2] += 1
                }
            }
        }
        // The mutations must exercise both outcomes, or the test proves little.
        assert!(outcomes.iter().all(|&n| n > 1000), "{outcomes:?}");
    }
}
