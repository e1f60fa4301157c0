//! Guessing the format of a log from its first lines (`-f auto`).
//!
//! Each sampled line gets a vote from the first shape it has, from the most
//! specific to the least: a W3C directive decides at once; then JSON, load
//! balancer, HAProxy, Apache/nginx, plain URL. The format with the most votes
//! wins, so a few broken lines at the start of a file do not decide it.

use memchr::{memchr, memmem};

use super::json::{JsonExtractor, JsonPaths, JsonPreset};
use super::LogFormat;
use crate::ascii::starts_with_ignore_case;

/// How many non-empty lines the guess looks at.
pub const SAMPLE_LINES: usize = 200;

/// What one line looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Json,
    Alb,
    Haproxy,
    /// Apache/nginx: whether a virtual host comes first and a referer follows.
    Clf {
        vhost: bool,
        referer: bool,
    },
    Plain,
    Unknown,
}

/// Guesses the format of a log from its first bytes. `None` when no line
/// has a known shape (binary data, prose). A sample with no non-empty line
/// (an empty file) is `plain`: every format reads it the same way.
pub fn detect(sample: &[u8]) -> Option<LogFormat> {
    let mut votes = [0usize; 6]; // json, alb, haproxy, clf, plain, unknown
    let (mut vhost, mut referer, mut clf) = (0usize, 0usize, 0usize);
    let mut seen = 0;
    let mut first = true;
    for line in sample.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(|&b| b == b' ' || b == b'\t') {
            continue;
        }
        // A CSV/TSV header row of a known log decides at once.
        if std::mem::take(&mut first) {
            if let Some(format) = super::csv::detect_header(line) {
                return Some(format);
            }
        }
        if line.starts_with(b"#") {
            if is_zeek_directive(line) {
                return Some(LogFormat::Zeek);
            }
            if starts_with_ignore_case(line, b"#Fields:") {
                return Some(
                    if memmem::find(line, b"x-edge-").is_some()
                        || memmem::find(line, b"x-host-header").is_some()
                    {
                        LogFormat::Cloudfront
                    } else {
                        LogFormat::W3c
                    },
                );
            }
            // Other directives (#Version, #Software) come before #Fields.
            continue;
        }
        seen += 1;
        if seen > SAMPLE_LINES {
            break;
        }
        let shape = shape(line);
        let slot = match shape {
            Shape::Json => 0,
            Shape::Alb => 1,
            Shape::Haproxy => 2,
            Shape::Clf {
                vhost: v,
                referer: r,
            } => {
                clf += 1;
                vhost += usize::from(v);
                referer += usize::from(r);
                3
            }
            Shape::Plain => 4,
            Shape::Unknown => 5,
        };
        votes[slot] += 1;
    }
    if seen == 0 {
        return Some(LogFormat::Plain);
    }
    let (best, &count) = votes[..5]
        .iter()
        .enumerate()
        .max_by_key(|&(i, &n)| (n, 5 - i))?;
    if count == 0 {
        return None;
    }
    Some(match best {
        0 => LogFormat::Json,
        1 => LogFormat::Alb,
        2 => LogFormat::Haproxy,
        3 if vhost * 2 > clf => LogFormat::Vhost,
        3 if referer * 2 > clf => LogFormat::Combined,
        3 => LogFormat::Common,
        _ => LogFormat::Plain,
    })
}

/// A Zeek directive that only an HTTP log has (`#fields` with `uri`,
/// `#path http`), or that only Zeek writes (`#separator`).
fn is_zeek_directive(line: &[u8]) -> bool {
    let sep = |b: &u8| *b == b'\t' || *b == b' ';
    if super::zeek::is_fields_line(line) {
        return line[8..].split(|&b| b == line[7]).any(|n| n == b"uri");
    }
    line.strip_prefix(b"#separator")
        .is_some_and(|r| r.first().is_some_and(sep))
        || line
            .strip_prefix(b"#path")
            .is_some_and(|r| r.first().is_some_and(sep) && r[1..].trim_ascii() == b"http")
}

fn shape(line: &[u8]) -> Shape {
    let trimmed = super::escape::trim_spaces(line);
    if trimmed.first() == Some(&b'{') {
        return Shape::Json;
    }
    // docker-compose prefixes container output: `web_1  | {"level":...}`.
    if let Some(bar) = memmem::find(line, b"| {") {
        if bar < 64 {
            return Shape::Json;
        }
    }
    let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
    let first = fields.next().unwrap_or_default();
    let second = fields.next().unwrap_or_default();
    let third = fields.next().unwrap_or_default();
    let is_iso_time = |f: &[u8]| f.len() >= 11 && f[4] == b'-' && f[7] == b'-' && f[10] == b'T';
    if (matches!(
        first,
        b"http" | b"https" | b"h2" | b"grpcs" | b"ws" | b"wss" | b"tls"
    ) && (is_iso_time(second) || second == b"2.0"))
        || (is_iso_time(first) && memchr(b':', third).is_some() && memchr(b'"', line).is_some())
    {
        return Shape::Alb;
    }
    if memmem::find(line, b"haproxy[").is_some() {
        return Shape::Haproxy;
    }
    // Apache/nginx: `... [time] "request" ...`, possibly wrapped in quotes.
    let body = match line.strip_prefix(b"\"") {
        Some(rest) if rest.first().is_some_and(|b| !b.is_ascii_uppercase()) => rest,
        _ => line,
    };
    if let Some(open) = memchr(b'[', body) {
        if let Some(close) = memmem::find(&body[open..], b"] \"") {
            let before = &body[..open];
            // Behind a proxy or CDN the client field is an X-Forwarded-For
            // list (`203.0.113.7, 10.0.0.1`): its addresses are one field,
            // and a list first is a client, never a virtual host (a host
            // holds no `,`).
            let tokens = super::clf::fields_before(before);
            let client_list_first = before
                .split(|&b| b == b' ')
                .find(|f| !f.is_empty())
                .is_some_and(|f| f.last() == Some(&b','));
            let after = &body[open + close + 3..];
            // The referer is the second quoted field after the time.
            let referer = memchr(b'"', after)
                .and_then(|q| memchr(b'"', &after[q + 1..]))
                .is_some();
            return Shape::Clf {
                vhost: tokens >= 4 && !client_list_first,
                referer,
            };
        }
    }
    // A record without `[time]` (inside a syslog message): a quoted request
    // line `"GET /path`.
    if let Some(q) = memmem::find(line, b"\"") {
        let rest = &line[q + 1..];
        let method = rest.iter().take_while(|b| b.is_ascii_uppercase()).count();
        if method >= 3 && rest.get(method) == Some(&b' ') && rest.get(method + 1) == Some(&b'/') {
            return Shape::Clf {
                vhost: false,
                referer: false,
            };
        }
    }
    if memchr(b' ', trimmed).is_none()
        && memchr(b'\t', trimmed).is_none()
        && !trimmed.iter().any(|&b| b < 0x20 || b == 0x7f)
    {
        return Shape::Plain;
    }
    Shape::Unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let d = |s: &str| detect(s.as_bytes());
        assert_eq!(
            d("1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2 \"-\" \"ua\"\n"),
            Some(LogFormat::Combined)
        );
        assert_eq!(
            d("1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2\n"),
            Some(LogFormat::Common)
        );
        assert_eq!(
            d("h.example:80 1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2\n"),
            Some(LogFormat::Vhost)
        );
        // X-Forwarded-For lists are clients, not virtual hosts.
        assert_eq!(
            d("203.0.113.7, 10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.1\" 200 2 \"-\" \"ua\"\n"),
            Some(LogFormat::Combined)
        );
        assert_eq!(
            d("203.0.113.7, 10.0.0.1, 10.0.0.2 - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.1\" 200 2\n"),
            Some(LogFormat::Common)
        );
        assert_eq!(
            d("h.example:443 203.0.113.7, 10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.1\" 200 2\n"),
            Some(LogFormat::Vhost)
        );
        assert_eq!(
            d("#Version: 1.0\n#Fields: date cs-uri-stem\n"),
            Some(LogFormat::W3c)
        );
        assert_eq!(
            d("#Fields: date x-edge-location cs-uri-stem\n"),
            Some(LogFormat::Cloudfront)
        );
        assert_eq!(
            d("#separator \\x09\n#set_separator\t,\n"),
            Some(LogFormat::Zeek)
        );
        assert_eq!(
            d("### BTest\n#fields\tts\turi\n1\t/\n"),
            Some(LogFormat::Zeek)
        );
        assert_eq!(d("#path\thttp\n"), Some(LogFormat::Zeek));
        // A Zeek log of something else, or `#Fields:` with `uri`: not zeek.
        assert_eq!(d("#fields\tts\tquery\n1\ta\n"), None);
        assert_eq!(d("#path\tconn\n"), Some(LogFormat::Plain));
        assert_eq!(d("#Fields: uri\n"), Some(LogFormat::W3c));
        assert_eq!(
            d("\"time_micros\",\"cs_method\",\"cs_uri\",\"cs_host\",\"s_request_id\"\n"),
            Some(LogFormat::Csv)
        );
        assert_eq!(
            d("\nhost\tlogname\ttime\tmethod\turl\tresponse\tbytes\n"),
            Some(LogFormat::Tsv)
        );
        assert_eq!(d("{\"a\":1}\n"), Some(LogFormat::Json));
        assert_eq!(d("https://a.example/\n/b\n"), Some(LogFormat::Plain));
        assert_eq!(d(""), Some(LogFormat::Plain));
        assert_eq!(d("\x00\x01\x02 \x03\n\x7f\x7f \x10\n"), None);
        assert_eq!(d("just some prose here\n"), None);
    }
}

/// The format of one input and what reading it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detected {
    /// The format.
    pub format: LogFormat,
    /// True when it was guessed from the sample rather than given.
    pub guessed: bool,
    /// For `json`: the field paths, given or of the preset that fits.
    pub json_paths: Option<JsonPaths>,
    /// For `json`: the preset's name, or `custom` for given paths.
    pub json_preset: Option<&'static str>,
}

/// The format of an input whose first bytes are `sample`: `given` (`-f`),
/// or guessed by [`detect`]; for JSON, the `given_paths` (`--json-*`) or
/// the preset that fits the sample best. `None` when it cannot be guessed.
pub fn detect_input(
    given: Option<LogFormat>,
    given_paths: Option<&JsonPaths>,
    sample: &[u8],
) -> Option<Detected> {
    let format = match given {
        Some(f) => f,
        None => detect(sample)?,
    };
    let (json_paths, json_preset) = match (format, given_paths) {
        (LogFormat::Json, Some(p)) => (Some(p.clone()), Some("custom")),
        (LogFormat::Json, None) => {
            let lines = sample.split(|&b| b == b'\n').take(SAMPLE_LINES);
            let preset = JsonExtractor::detect_preset(lines).unwrap_or(JsonPreset::Nginx);
            (Some(preset.paths()), Some(preset.name()))
        }
        _ => (None, None),
    };
    Some(Detected {
        format,
        guessed: given.is_none(),
        json_paths,
        json_preset,
    })
}
