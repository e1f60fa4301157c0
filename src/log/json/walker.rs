//! The walk over one line's object: members whose key leads toward a wanted
//! path are entered, every other value is skipped by the scanner, and what
//! the wanted paths hold goes into [`Found`]; the walk stops as soon as
//! nothing more that is wanted can come.

use super::path::{bits, match_key, Alternative, Slot, INFO_SLOTS, SLOT_COUNT};
use super::scan::{
    raw_span, read_key, skip_from, skip_value, skip_whitespace, unescape_string, value_start,
    Expect, Fault, Nesting,
};
use super::JsonExtractor;
use crate::ascii;
use crate::log::info::{At, Info};
use crate::log::{Extracted, Field, LineError, Scheme};

/// What one line gave so far. Reset per line, buffers kept.
#[derive(Clone, Debug, Default)]
pub(super) struct Found {
    /// Alternatives whose value has been read, or that can no longer appear
    /// because the object that would hold them has closed.
    pub(super) seen: u64,
    /// Per slot, the alternative whose value was taken (lower is better).
    pub(super) best: [Option<u8>; SLOT_COUNT],
    /// The request line, escapes undone, until it is split.
    pub(super) request_line: Vec<u8>,
    /// Offset of the request line's opening quote, for `BadRequestLine`.
    pub(super) request_line_at: usize,
    /// Where the request line is in the line, when it has no escapes: its
    /// method is the record's when no method path gives one.
    pub(super) request_line_raw: At,
    /// The query, escapes undone, appended to the target at the end.
    pub(super) query: Vec<u8>,
    pub(super) scheme: Option<Scheme>,
    /// A port found at the scheme path.
    pub(super) port: Option<u16>,
    pub(super) method_is_connect: bool,
}

/// What a value at the scheme path says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SchemeValue {
    Scheme(Scheme),
    Port(u16),
}

impl SchemeValue {
    /// A scheme name, `on`/`off` (TLS or not), or a port in digits.
    fn parse(value: &[u8]) -> Option<SchemeValue> {
        if let Some(scheme) = Scheme::parse(value) {
            return Some(SchemeValue::Scheme(scheme));
        }
        if value.eq_ignore_ascii_case(b"on") {
            return Some(SchemeValue::Scheme(Scheme::Https));
        }
        if value.eq_ignore_ascii_case(b"off") {
            return Some(SchemeValue::Scheme(Scheme::Http));
        }
        ascii::parse_port(value).map(SchemeValue::Port)
    }
}

impl Found {
    pub(super) fn reset(&mut self) {
        self.seen = 0;
        self.best = [None; SLOT_COUNT];
        self.request_line.clear();
        self.request_line_at = 0;
        self.request_line_raw = None;
        self.query.clear();
        self.scheme = None;
        self.port = None;
        self.method_is_connect = false;
    }

    fn set_scheme(&mut self, value: SchemeValue) {
        (self.scheme, self.port) = match value {
            SchemeValue::Scheme(scheme) => (Some(scheme), None),
            SchemeValue::Port(port) => (None, Some(port)),
        };
    }

    /// Takes a number (or `null`, `true`, `false`: `token`, at `at` in the
    /// line) for the alternatives in `leaf`: a port at the scheme path
    /// (Zeek's `id.resp_p`), and the status, size and time as they are.
    fn take_number(
        &mut self,
        leaf: u64,
        alternatives: &[Alternative],
        token: &[u8],
        at: (usize, usize),
        out: &mut Extracted,
    ) {
        self.seen |= leaf;
        if !token.first().is_some_and(u8::is_ascii_digit) {
            return;
        }
        for index in bits(leaf) {
            let Some(slot) = alternatives.get(index).map(|a| a.slot) else {
                continue;
            };
            let best = &mut self.best[slot as usize];
            if best.is_some_and(|taken| usize::from(taken) < index) {
                continue;
            }
            match slot {
                Slot::Scheme => match SchemeValue::parse(token) {
                    Some(port @ SchemeValue::Port(_)) => {
                        *best = Some(index as u8);
                        self.set_scheme(port);
                    }
                    _ => continue,
                },
                Slot::Status | Slot::Bytes | Slot::Time => {
                    *best = Some(index as u8);
                    set_info(&mut out.info, slot, Some(at));
                }
                _ => {}
            }
        }
    }

    pub(super) fn has(&self, slot: Slot) -> bool {
        self.best[slot as usize].is_some()
    }

    /// True when no better value can come for the slot whose alternatives
    /// are `slot_bits`: every alternative better than the one taken (or all,
    /// if none was) has been seen.
    fn is_settled(&self, slot: Slot, slot_bits: u64) -> bool {
        let better = match self.best[slot as usize] {
            Some(taken) => slot_bits & ((1u64 << taken) - 1),
            None => slot_bits,
        };
        better & !self.seen == 0
    }

    /// Takes a string value for the alternatives in `leaf`, where it beats
    /// what their slots hold. `at` is the value's opening quote, `raw`
    /// where its bytes are in the line when it has no escapes (the record's
    /// other fields are kept as places in the line, so a value with escapes
    /// is absent there).
    #[allow(clippy::too_many_arguments)]
    fn take_string(
        &mut self,
        leaf: u64,
        alternatives: &[Alternative],
        value: &[u8],
        at: usize,
        raw: At,
        field: Field,
        out: &mut Extracted,
    ) {
        self.seen |= leaf;
        if value.is_empty() || value == b"-" {
            return;
        }
        for index in bits(leaf) {
            let Some(alternative) = alternatives.get(index) else {
                continue;
            };
            let slot = alternative.slot;
            if self.best[slot as usize].is_some_and(|taken| usize::from(taken) < index) {
                continue;
            }
            // A value that says no scheme is absent: the next alternative
            // counts. So is an other field with escapes.
            let scheme = match slot {
                Slot::Scheme => match SchemeValue::parse(value) {
                    Some(scheme) => Some(scheme),
                    None => continue,
                },
                Slot::Status | Slot::Bytes | Slot::Time | Slot::Client if raw.is_none() => continue,
                _ => None,
            };
            // `index < MAX_ALTERNATIVES`, so it fits.
            self.best[slot as usize] = Some(index as u8);
            if slot == Slot::RequestLine {
                self.request_line_raw = raw;
            }
            match slot {
                // Without escapes the value is its bytes in the line: lent.
                Slot::Target if field.request() => match raw {
                    Some((start, end)) => out.lend_target_at(start, end),
                    None => replace(out.target_buf(), value),
                },
                Slot::RequestLine if field.request() => {
                    replace(&mut self.request_line, value);
                    self.request_line_at = at;
                }
                // Only their presence matters when the referer alone is wanted.
                Slot::Target | Slot::RequestLine => {}
                Slot::Host => replace(&mut out.host, value),
                Slot::Scheme => {
                    if let Some(scheme) = scheme {
                        self.set_scheme(scheme);
                    }
                }
                Slot::Referer => replace(&mut out.referer, value),
                Slot::Method => {
                    self.method_is_connect = value == b"CONNECT";
                    if out.want_info {
                        out.info.method = raw;
                    }
                }
                Slot::Query => replace(&mut self.query, value),
                Slot::Status | Slot::Bytes | Slot::Time | Slot::Client => {
                    set_info(&mut out.info, slot, raw);
                }
            }
        }
    }

    /// Takes an object value for the alternatives in `leaf`: only the scheme
    /// makes sense of one (Caddy's `request.tls`).
    fn take_object(&mut self, leaf: u64, alternatives: &[Alternative]) {
        self.seen |= leaf;
        for index in bits(leaf) {
            if alternatives
                .get(index)
                .is_some_and(|a| a.slot == Slot::Scheme)
            {
                let best = &mut self.best[Slot::Scheme as usize];
                if best.is_none_or(|taken| usize::from(taken) > index) {
                    *best = Some(index as u8);
                    self.set_scheme(SchemeValue::Scheme(Scheme::Https));
                }
            }
        }
    }
}

impl JsonExtractor {
    /// The alternatives that matter for `field`: the target ones always, to
    /// tell a record without a referer from a line that is not a request.
    fn active_bits(&self, field: Field) -> u64 {
        let bits = |slot: Slot| self.slot_bits[slot as usize];
        let mut active = bits(Slot::Target) | bits(Slot::RequestLine);
        if field.request() {
            active |= bits(Slot::Host) | bits(Slot::Scheme) | bits(Slot::Method);
            active |= bits(Slot::Query);
        }
        if field.referer() {
            active |= bits(Slot::Referer);
        }
        if self.info {
            for slot in INFO_SLOTS {
                active |= bits(slot);
            }
        }
        active
    }

    /// True when nothing more that `field` needs can be found in the line.
    fn is_finished(&self, field: Field) -> bool {
        let settled = |slot: Slot| self.found.is_settled(slot, self.slot_bits[slot as usize]);
        if self.info && !INFO_SLOTS.into_iter().all(settled) {
            return false;
        }
        let request_known =
            settled(Slot::Target) && (self.found.has(Slot::Target) || settled(Slot::RequestLine));
        if field.request() {
            request_known
                && settled(Slot::Host)
                && settled(Slot::Scheme)
                && settled(Slot::Method)
                && settled(Slot::Query)
                && (!field.referer() || settled(Slot::Referer))
        } else {
            settled(Slot::Referer) && (self.found.has(Slot::Referer) || request_known)
        }
    }

    /// Walks the object that opens at `open`, entering the members on the way
    /// to an active path and skipping the others, until the object closes or
    /// nothing more is needed.
    pub(super) fn walk(
        &mut self,
        line: &[u8],
        open: usize,
        field: Field,
        out: &mut Extracted,
    ) -> Result<(), Fault> {
        #[derive(Clone, Copy, PartialEq, Eq)]
        enum Member {
            KeyOrClose,
            Key,
            CommaOrClose,
        }

        self.objects.clear();
        self.objects.push(self.active_bits(field));
        let mut pos = open + 1;
        let mut expect = Member::KeyOrClose;
        loop {
            pos = skip_whitespace(line, pos);
            let Some(&b) = line.get(pos) else {
                return Err((LineError::Unterminated, line.len()));
            };
            let closes = match (expect, b) {
                (Member::KeyOrClose | Member::CommaOrClose, b'}') => true,
                (Member::CommaOrClose, b',') => {
                    pos += 1;
                    expect = Member::Key;
                    continue;
                }
                (Member::KeyOrClose | Member::Key, b'"') => false,
                _ => return Err((LineError::BadJson, pos)),
            };
            if closes {
                pos += 1;
                // The object is over: what it could have held is settled.
                self.found.seen |= self.objects.pop().unwrap_or(0);
                if self.objects.is_empty() {
                    let rest = skip_whitespace(line, pos);
                    if rest < line.len() {
                        return Err((LineError::BadJson, rest));
                    }
                    return Ok(());
                }
                if self.is_finished(field) {
                    return Ok(());
                }
                expect = Member::CommaOrClose;
                continue;
            }

            // A member: its key, compared with the next key of every path
            // still open at this depth.
            let depth = self.objects.len() - 1;
            let (leaf, inner, select);
            {
                let live = self.objects.last().copied().unwrap_or(0) & !self.found.seen;
                let key;
                (key, pos) = read_key(line, pos, &mut self.key)?;
                (leaf, inner, select) = match_key(&self.alternatives, live, depth, key);
            }
            pos = value_start(line, pos)?;
            let Some(&first) = line.get(pos) else {
                return Err((LineError::Unterminated, line.len()));
            };
            expect = Member::CommaOrClose;
            if leaf | inner | select == 0 {
                pos = skip_value(line, pos)?;
                continue;
            }
            if select != 0 {
                if first == b'[' {
                    self.found.seen |= leaf | inner;
                    pos = self.select_in_array(line, pos, select, depth + 1, field, out)?;
                    if self.is_finished(field) {
                        return Ok(());
                    }
                    continue;
                }
                // Only an array can hold the element to select.
                self.found.seen |= select;
                if leaf | inner == 0 {
                    pos = skip_value(line, pos)?;
                    continue;
                }
            }
            if first == b'{' && inner != 0 {
                if leaf != 0 {
                    self.found.take_object(leaf, &self.alternatives);
                }
                self.objects.push(inner);
                pos += 1;
                expect = Member::KeyOrClose;
                continue;
            }
            // Only an object can hold the longer paths.
            self.found.seen |= inner;
            pos = match leaf {
                0 => skip_value(line, pos)?,
                _ => self.take_value(line, pos, first, leaf, field, out)?,
            };
            if self.is_finished(field) {
                return Ok(());
            }
        }
    }

    /// Takes the value at `pos` (whose first byte is `first`) for the
    /// alternatives in `leaf`; returns the offset after it.
    fn take_value(
        &mut self,
        line: &[u8],
        pos: usize,
        first: u8,
        leaf: u64,
        field: Field,
        out: &mut Extracted,
    ) -> Result<usize, Fault> {
        match first {
            b'"' => {
                self.value.clear();
                let end = unescape_string(line, pos, &mut self.value)?;
                let (alternatives, value) = (&self.alternatives, &self.value);
                let raw = raw_span(line, pos, end);
                self.found
                    .take_string(leaf, alternatives, value, pos, raw, field, out);
                Ok(end)
            }
            b'[' => {
                let element = skip_whitespace(line, pos + 1);
                if line.get(element) != Some(&b'"') {
                    self.found.seen |= leaf;
                    return skip_value(line, pos);
                }
                self.value.clear();
                let end = unescape_string(line, element, &mut self.value)?;
                let (alternatives, value) = (&self.alternatives, &self.value);
                let raw = raw_span(line, element, end);
                self.found
                    .take_string(leaf, alternatives, value, element, raw, field, out);
                // Inside the array, after its first element.
                let nesting = Nesting {
                    objects: 0,
                    depth: 1,
                };
                skip_from(line, end, nesting, Expect::CommaOrClose)
            }
            b'{' => {
                self.found.take_object(leaf, &self.alternatives);
                skip_value(line, pos)
            }
            _ => {
                let end = skip_value(line, pos)?;
                let token = line.get(pos..end).unwrap_or(&[]);
                self.found
                    .take_number(leaf, &self.alternatives, token, (pos, end), out);
                Ok(end)
            }
        }
    }

    /// Reads the array that opens at `open`, whose key is the one the
    /// `key[field=value]` step of the alternatives in `select` names: in
    /// each object element, a string member `field` equal to `value` picks
    /// the element for those alternatives, and their last key (at `depth`)
    /// is then taken from it. Returns the offset after the array.
    fn select_in_array(
        &mut self,
        line: &[u8],
        open: usize,
        select: u64,
        depth: usize,
        field: Field,
        out: &mut Extracted,
    ) -> Result<usize, Fault> {
        let mut pos = skip_whitespace(line, open + 1);
        if line.get(pos) == Some(&b']') {
            self.found.seen |= select;
            return Ok(pos + 1);
        }
        loop {
            pos = match line.get(pos) {
                Some(b'{') => self.select_in_element(line, pos, select, depth, field, out)?,
                Some(_) => skip_value(line, pos)?,
                None => return Err((LineError::Unterminated, line.len())),
            };
            pos = skip_whitespace(line, pos);
            match line.get(pos) {
                Some(b',') => pos = skip_whitespace(line, pos + 1),
                Some(b']') => break,
                Some(_) => return Err((LineError::BadJson, pos)),
                None => return Err((LineError::Unterminated, line.len())),
            }
        }
        self.found.seen |= select;
        Ok(pos + 1)
    }

    /// Reads one object element of a selecting array (see
    /// [`select_in_array`](Self::select_in_array)); returns the offset after it.
    fn select_in_element(
        &mut self,
        line: &[u8],
        open: usize,
        select: u64,
        depth: usize,
        field: Field,
        out: &mut Extracted,
    ) -> Result<usize, Fault> {
        // The alternatives this element was picked for so far.
        let mut picked = 0u64;
        let mut pos = skip_whitespace(line, open + 1);
        if line.get(pos) == Some(&b'}') {
            return Ok(pos + 1);
        }
        loop {
            let live = select & !self.found.seen;
            let (mut tests, mut reads) = (0u64, 0u64);
            {
                let key;
                (key, pos) = read_key(line, pos, &mut self.key)?;
                for index in bits(live) {
                    let Some(alternative) = self.alternatives.get(index) else {
                        continue;
                    };
                    if alternative
                        .select
                        .as_ref()
                        .is_some_and(|s| *s.field == *key)
                    {
                        tests |= 1u64 << index;
                    }
                    if alternative.keys.get(depth).is_some_and(|k| **k == *key) {
                        reads |= 1u64 << index;
                    }
                }
            }
            pos = value_start(line, pos)?;
            if line.get(pos) == Some(&b'"') && (tests | reads) != 0 {
                self.value.clear();
                let end = unescape_string(line, pos, &mut self.value)?;
                for index in bits(tests) {
                    let wanted = self.alternatives.get(index).and_then(|a| a.select.as_ref());
                    if wanted.is_some_and(|s| s.value.eq_ignore_ascii_case(&self.value)) {
                        picked |= 1u64 << index;
                    }
                }
                let take = reads & picked;
                if take != 0 {
                    let (alternatives, value) = (&self.alternatives, &self.value);
                    let raw = raw_span(line, pos, end);
                    self.found
                        .take_string(take, alternatives, value, pos, raw, field, out);
                }
                pos = end;
            } else {
                pos = skip_value(line, pos)?;
            }
            pos = skip_whitespace(line, pos);
            match line.get(pos) {
                Some(b',') => pos = skip_whitespace(line, pos + 1),
                Some(b'}') => return Ok(pos + 1),
                Some(_) => return Err((LineError::BadJson, pos)),
                None => return Err((LineError::Unterminated, line.len())),
            }
        }
    }
}

/// Notes where the value of an other field's `slot` is (`Info`).
fn set_info(info: &mut Info, slot: Slot, at: At) {
    match slot {
        Slot::Method => info.method = at,
        Slot::Status => info.status = at,
        Slot::Bytes => info.bytes = at,
        Slot::Time => info.time = at,
        Slot::Client => info.client = at,
        _ => {}
    }
}

fn replace(buffer: &mut Vec<u8>, value: &[u8]) {
    buffer.clear();
    buffer.extend_from_slice(value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::json::tests::{paths, run, target_of, other_fields, some};
    use crate::log::json::{JsonPaths, JsonPreset};
    use crate::log::{Line, Skip};

    #[test]
    fn nested_paths_are_entered_only_on_the_way() {
        let p = paths("x.y.z");
        let line = br#"{"x":{"q":{"y":{"z":"no"}},"y":{"a":[{"z":"no"}],"z":"/yes"}}}"#;
        let (result, out) = run(p.clone(), line, Field::Request);
        assert_eq!((result, out.target(line)), (Line::Record, &b"/yes"[..]));
        // A path that meets a string where it needs an object is absent.
        let (result, _) = run(p, br#"{"x":{"y":"/no"}}"#, Field::Request);
        assert_eq!(result, Line::Skip(Skip::NoRequest));
    }

    #[test]
    fn escaped_keys_are_compared_unescaped() {
        assert_eq!(target_of(br#"{"\u0074":"/x"}"#).unwrap(), b"/x");
        assert_eq!(target_of(br#"{"a\"b":"/no","t":"/x"}"#).unwrap(), b"/x");
    }

    #[test]
    fn first_of_duplicate_keys_counts() {
        assert_eq!(target_of(br#"{"t":"/1","t":"/2"}"#).unwrap(), b"/1");
        let line = br#"{"request":{"uri":"/1"},"request":{"uri":"/2"}}"#;
        let (_, out) = run(JsonPreset::Caddy.paths(), line, Field::Request);
        assert_eq!(out.target(line), b"/1");
    }

    #[test]
    fn placeholders_and_non_strings_are_absent() {
        let nginx = || JsonPreset::Nginx.paths();
        let line =
            br#"{"request_uri":"/","http_host":null,"host":"-","scheme":"","http_referer":"-"}"#;
        let (result, out) = run(nginx(), line, Field::Both);
        assert_eq!(result, Line::Record);
        assert!(out.has_target && !out.has_referer);
        assert_eq!((out.host.as_slice(), out.scheme), (&b""[..], None));
        assert_eq!(
            run(nginx(), line, Field::Referer).0,
            Line::Skip(Skip::EmptyField)
        );
        // A placeholder target falls back to the request line.
        let line = br#"{"request_uri":"-","request":"GET /r HTTP/1.1","http_host":80}"#;
        let (result, out) = run(nginx(), line, Field::Request);
        assert_eq!((result, out.target(line)), (Line::Record, &b"/r"[..]));
        assert!(out.host.is_empty());
        let line = br#"{"request_uri":null,"request":"-","status":400}"#;
        assert_eq!(
            run(nginx(), line, Field::Request).0,
            Line::Skip(Skip::NoRequest)
        );
        assert_eq!(
            run(nginx(), line, Field::Referer).0,
            Line::Skip(Skip::NoRequest)
        );
    }

    #[test]
    fn alternatives_prefer_the_first_listed() {
        let nginx = || JsonPreset::Nginx.paths();
        let line = br#"{"host":"b.example","request_uri":"/","http_host":"A.example:81"}"#;
        let (_, out) = run(nginx(), line, Field::Request);
        assert_eq!(out.host, b"A.example:81");
        let line = br#"{"host":"b.example","request_uri":"/","http_host":"-"}"#;
        let (_, out) = run(nginx(), line, Field::Request);
        assert_eq!(out.host, b"b.example");
        let line = br#"{"http_referrer":"https://r/","request":"GET / HTTP/1.1"}"#;
        let (result, out) = run(nginx(), line, Field::Referer);
        assert_eq!(
            (result, out.referer),
            (Line::Record, b"https://r/".to_vec())
        );
    }

    #[test]
    fn caddy_referer_array_and_tls_scheme() {
        let caddy = || JsonPreset::Caddy.paths();
        let line = br#"{"request":{"method":"GET","host":"h","uri":"/u","headers":{"Referer":[ "https://r/1","https://r/2"],"X":["y"]},"tls":{"resumed":false}},"status":200}"#;
        let (result, out) = run(caddy(), line, Field::Both);
        assert_eq!(result, Line::Record);
        assert_eq!(
            (out.target(line), out.host.as_slice()),
            (&b"/u"[..], &b"h"[..])
        );
        assert_eq!(
            (out.referer.as_slice(), out.has_referer),
            (&b"https://r/1"[..], true)
        );
        assert_eq!(out.scheme, Some(Scheme::Https));
        // Empty arrays and arrays of non-strings are absent.
        for referer in [&b"[]"[..], b"[1]", b"[null,\"x\"]", b"[\"-\"]"] {
            let mut line = br#"{"request":{"uri":"/","headers":{"Referer":"#.to_vec();
            line.extend_from_slice(referer);
            line.extend_from_slice(b"}}}");
            let (result, out) = run(caddy(), &line, Field::Referer);
            assert_eq!(
                (result, out.has_referer),
                (Line::Skip(Skip::EmptyField), false)
            );
        }
        // A referer array cut short is still an error.
        let line = br#"{"request":{"headers":{"Referer":["https://r/1","#;
        assert_eq!(
            run(caddy(), line, Field::Referer).0,
            Line::Error(LineError::Unterminated, line.len())
        );
    }

    #[test]
    fn walk_stops_once_everything_is_found() {
        // The garbage after the wanted fields is never read.
        let line = br#"{"t":"/x", this is not JSON"#;
        assert_eq!(target_of(line).unwrap(), b"/x");
        // Caddy's request is settled when its object closes.
        let line = br#"{"request":{"host":"h","method":"GET","uri":"/"},"resp_headers": garbage"#;
        let (result, out) = run(JsonPreset::Caddy.paths(), line, Field::Request);
        assert_eq!((result, out.scheme), (Line::Record, None));
    }

    #[test]
    fn selector_steps_pick_array_elements() {
        let waf = || JsonPreset::AwsWaf.paths();
        let line = br#"{"httpRequest":{"headers":[{"name":"x","value":"y"},7,[],{"value":"late","name":"Host"},{"name":"HOST","value":"h.example:8443"},{"name":"host","value":"second"},{"name":"Referer","value":"https://r/\u00e9"}],"uri":"/a","args":"b=1&c","httpMethod":"GET"}}"#;
        let (result, out) = run(waf(), line, Field::Both);
        assert_eq!(result, Line::Record);
        // `name` after `value` does not pick; the first picked element wins.
        assert_eq!(out.host, b"h.example:8443");
        assert_eq!(out.referer, "https://r/é".as_bytes());
        assert_eq!(out.target(line), b"/a?b=1&c");
        assert_eq!((out.scheme, out.port), (Some(Scheme::Https), None));
        // No headers, an empty list, a list of non-objects, or no Host: no host.
        for headers in [
            &b"[]"[..],
            b"[1,\"a\",null]",
            b"{}",
            b"\"h\"",
            b"[{\"name\":\"Host\"}]",
        ] {
            let mut line = br#"{"httpRequest":{"uri":"/u","headers":"#.to_vec();
            line.extend_from_slice(headers);
            line.extend_from_slice(br#","args":""}}"#);
            let (result, out) = run(waf(), &line, Field::Request);
            assert_eq!(result, Line::Record, "{}", String::from_utf8_lossy(&line));
            assert_eq!(
                (out.target(&line), out.host.as_slice()),
                (&b"/u"[..], &b""[..])
            );
        }
        // Broken JSON inside the list is an error where it is.
        let line = br#"{"httpRequest":{"headers":[{"name":"host","value":"h"} {"#;
        assert_eq!(
            run(waf(), line, Field::Request).0,
            Line::Error(LineError::BadJson, 55)
        );
        let line = br#"{"httpRequest":{"headers":[{"name":"host" "value":"h"}]}}"#;
        assert_eq!(
            run(waf(), line, Field::Request).0,
            Line::Error(LineError::BadJson, 42)
        );
        let line = br#"{"httpRequest":{"headers":[{"name":"host","value":"h""#;
        assert_eq!(
            run(waf(), line, Field::Request).0,
            Line::Error(LineError::Unterminated, line.len())
        );
    }

    #[test]
    fn scheme_paths_take_names_on_off_and_ports() {
        let p = |scheme: &str| JsonPaths {
            target: Some("t".into()),
            host: Some("h".into()),
            scheme: Some(scheme.into()),
            ..JsonPaths::default()
        };
        let cases: &[(&[u8], Option<Scheme>, Option<u16>)] = &[
            (br#""s":"HTTPS""#, Some(Scheme::Https), None),
            (br#""s":"on""#, Some(Scheme::Https), None),
            (br#""s":"Off""#, Some(Scheme::Http), None),
            (br#""s":443"#, None, Some(443)),
            (br#""s":"8080""#, None, Some(8080)),
            (br#""s":"HTTP/1.1""#, None, None),
            (br#""s":99999"#, None, None),
            (br#""s":-1"#, None, None),
            (br#""s":true"#, None, None),
        ];
        for &(member, scheme, port) in cases {
            let mut line = br#"{"t":"/","h":"x","#.to_vec();
            line.extend_from_slice(member);
            line.push(b'}');
            let (result, out) = run(p("s"), &line, Field::Request);
            assert_eq!(result, Line::Record);
            assert_eq!((out.scheme, out.port), (scheme, port), "{member:?}");
        }
        // A value that says no scheme lets the next alternative speak.
        let line = br#"{"proto":"HTTP/1.1","reqPort":"443","t":"/"}"#;
        let (_, out) = run(p("proto|reqPort"), line, Field::Request);
        assert_eq!((out.scheme, out.port), (None, Some(443)));
        let line = br#"{"proto":"HTTPS","reqPort":"80","t":"/"}"#;
        let (_, out) = run(p("proto|reqPort"), line, Field::Request);
        assert_eq!((out.scheme, out.port), (Some(Scheme::Https), None));
        // The default scheme is only for records that say neither.
        let with_default = |scheme: &str| JsonPaths {
            default_scheme: Some(Scheme::Https),
            ..p(scheme)
        };
        let (_, out) = run(with_default("s"), br#"{"t":"/"}"#, Field::Request);
        assert_eq!(out.scheme, Some(Scheme::Https));
        let (_, out) = run(with_default("s"), br#"{"t":"/","s":80}"#, Field::Request);
        assert_eq!((out.scheme, out.port), (None, Some(80)));
        let (_, out) = run(
            with_default("s"),
            br#"{"t":"/","s":"http"}"#,
            Field::Request,
        );
        assert_eq!(out.scheme, Some(Scheme::Http));
    }

    #[test]
    fn other_fields_values() {
        let p = JsonPaths {
            target: Some("t".into()),
            status: Some("s".into()),
            bytes: Some("b".into()),
            method: Some("m".into()),
            time: Some("ts".into()),
            client: Some("c".into()),
            ..JsonPaths::default()
        };
        // Strings with escapes, null, booleans, placeholders: absent.
        let line = br#"{"t":"/","s":null,"b":true,"m":"G\u0045T","ts":"-","c":"a\/b"}"#;
        assert_eq!(
            other_fields(p.clone(), line),
            (Line::Record, (None, None, None, None, None))
        );
        // A number that is no status, a negative size.
        let line = br#"{"t":"/","s":2000,"b":-1}"#;
        assert_eq!(other_fields(p.clone(), line).1 .0, None);
        assert_eq!(other_fields(p.clone(), line).1 .1, None);
        // Strings and numbers alike; a bracketed IPv6 client loses its port.
        let line =
            br#"{"s":"200","b":"0","m":"get","ts":"1569931200","c":"[2001:db8::1]:80","t":"/"}"#;
        assert_eq!(
            other_fields(p.clone(), line).1,
            some(200, Some(0), "get", 1_569_931_200, "2001:db8::1")
        );
        // Nginx without request_method: the request line's method.
        let line = br#"{"request":"PUT /x HTTP/1.1","status":204}"#;
        let (result, got) = other_fields(JsonPreset::Nginx.paths(), line);
        assert_eq!(result, Line::Record);
        assert_eq!((got.0, got.2.as_deref()), (Some(204), Some("PUT")));
        // Alternatives: the first listed that is present.
        let q = JsonPaths {
            time: Some("a|b".into()),
            ..p.clone()
        };
        let line = br#"{"t":"/","b":"2019-10-01T12:00:00Z","a":1569931201}"#;
        assert_eq!(other_fields(q, line).1 .3, Some(1_569_931_201));
    }

    #[test]
    fn other_fields_are_looked_for_only_when_wanted() {
        let p = JsonPaths {
            target: Some("t".into()),
            status: Some("s".into()),
            ..JsonPaths::default()
        };
        // Not wanted: the walk stops after the target, before the garbage.
        let line = br#"{"t":"/x", garbage "s":200}"#;
        assert_eq!(run(p.clone(), line, Field::Request).0, Line::Record);
        // Wanted: the walk goes on for the status and meets the garbage.
        let (result, _) = other_fields(p.clone(), line);
        assert!(
            matches!(result, Line::Error(LineError::BadJson, _)),
            "{result:?}"
        );
        // And a status before the target is read either way.
        let line = br#"{"s":200,"t":"/x", garbage"#;
        let (result, got) = other_fields(p, line);
        assert_eq!((result, got.0), (Line::Record, Some(200)));
    }
}
