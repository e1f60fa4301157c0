//! Guessing the format of a log from its first lines (`-f auto`).
//!
//! The readers' tests come from the registry (`log/mod.rs`): a header
//! line that only one format writes (a known CSV header row, Zeek's
//! `#fields`, W3C's `#Fields:`) decides at once; any other sampled line
//! votes for the most specific shape it has (JSON, load balancer, HAProxy,
//! Squid, Envoy, S3, Apache/nginx, plain URL, by the registry's scores).
//! The reader with the most votes wins (on a tie, the first in the
//! registry's detection order), so a few broken lines at the start of a file
//! do not decide it.

use super::json::{first_object_keys, JsonExtractor, JsonPaths, JsonPreset};
use super::{Extracted, Field, Line, LogFormat, RecordReader, Tally, DETECTORS};
use crate::ascii;

/// How many non-empty lines the guess looks at.
pub const SAMPLE_LINES: usize = 200;

/// Guesses the format of a log from its first bytes. `None` when no line
/// has a known shape (binary data, prose). A sample with no non-empty line
/// (an empty file) is `plain`: every format reads it the same way.
///
/// ```
/// use canonurl::log::detect::detect;
/// use canonurl::log::LogFormat;
///
/// let combined = br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 1 "-" "ua""#;
/// assert_eq!(detect(combined), Some(LogFormat::Combined));
/// assert_eq!(detect(b"https://example.com/a\n/b?c\n"), Some(LogFormat::Plain));
/// assert_eq!(detect(b"\x00\x01\x02 binary"), None);
/// ```
pub fn detect(sample: &[u8]) -> Option<LogFormat> {
    let guess = guess(sample)?;
    (guess.read * 2 > guess.lines).then_some(guess.format)
}

/// Why [`detect`] found no format in `sample`, for the message that asks
/// for `-f`: the format most lines had the shape of, and how few of the
/// sampled lines its reader took. `None` when no line had a known shape.
pub(crate) fn why_undetected(sample: &[u8]) -> Option<String> {
    let guess = guess(sample)?;
    Some(format!(
        "only {} of {} sampled lines read as {}",
        guess.read, guess.lines, guess.format
    ))
}

/// The format the sampled lines' shapes vote for, with the evidence.
struct Guess {
    format: LogFormat,
    /// Sampled lines (non-empty, not `#` directives).
    lines: usize,
    /// How many of them the format's reader takes without an error.
    read: usize,
}

impl Guess {
    /// A header line that only one format writes (W3C's `#Fields:`,
    /// Zeek's `#fields`, a known CSV header row) decides: it is evidence
    /// enough.
    fn decided(format: LogFormat) -> Guess {
        Guess {
            format,
            lines: 1,
            read: 1,
        }
    }
}

fn guess(sample: &[u8]) -> Option<Guess> {
    // The readers' tests, in the registry's detection order.
    let mut detectors = DETECTORS;
    detectors.sort_by_key(|d| d.rank);
    let mut tallies = [Tally::default(); DETECTORS.len()];
    let mut seen = 0;
    let mut first = true;
    for line in sample.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if ascii::is_blank(line) {
            continue;
        }
        // A header line that only one format writes decides at once.
        let first = std::mem::take(&mut first);
        if let Some(format) = detectors.iter().find_map(|d| (d.decides)(line, first)) {
            return Some(Guess::decided(format));
        }
        // Other directives (#Version, #Software) come before #Fields.
        if line.starts_with(b"#") {
            continue;
        }
        seen += 1;
        if seen > SAMPLE_LINES {
            break;
        }
        // The line votes for the reader with the highest score whose shape
        // it has.
        let shapes = detectors.iter().enumerate();
        let voter = shapes
            .filter_map(|(i, d)| Some((i, d.score, (d.shape)(line)?)))
            .max_by_key(|&(i, score, _)| (score, std::cmp::Reverse(i)));
        if let Some((i, _, details)) = voter {
            let tally = &mut tallies[i];
            tally.lines += 1;
            for (bit, n) in tally.details.iter_mut().enumerate() {
                *n += usize::from(details >> bit & 1);
            }
        }
    }
    if seen == 0 {
        return Some(Guess {
            format: LogFormat::Plain,
            lines: 0,
            read: 1,
        });
    }
    // The most votes; on a tie, the reader first in detection order.
    let (best, tally) = tallies
        .iter()
        .enumerate()
        .max_by_key(|&(i, t)| (t.lines, std::cmp::Reverse(i)))?;
    let count = tally.lines;
    if count == 0 {
        return None;
    }
    let format = (detectors[best].voted)(tally);
    // Evidence: the format wins only when its reader takes most of the
    // sampled lines (a record, or a line it knows to skip), not when its
    // shape is merely the commonest among lines of no known shape. A
    // `plain` line is any line without spaces, so for `plain` the votes are
    // the evidence.
    let lines = seen.min(SAMPLE_LINES);
    let read = if format == LogFormat::Plain {
        count
    } else {
        lines_read_as(format, sample)
    };
    Some(Guess {
        format,
        lines,
        read,
    })
}

/// How many of the lines [`detect`] sampled the reader of `format` reads
/// without an error.
fn lines_read_as(format: LogFormat, sample: &[u8]) -> usize {
    let mut reader = RecordReader::new(format, None);
    let mut record = Extracted::default();
    sample
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter(|line| !ascii::is_blank(line) && !line.starts_with(b"#"))
        .take(SAMPLE_LINES)
        .filter(|line| {
            !matches!(
                reader.read(line, Field::Request, &mut record),
                Line::Error(..)
            )
        })
        .count()
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
        // Spaces and C0 controls around a URL are the URL parser's to strip.
        assert_eq!(
            d("http://a.com/1\r\r\nhttp://a.com/2 \n\r\nhttp://a.com/3"),
            Some(LogFormat::Plain)
        );
        assert_eq!(d(""), Some(LogFormat::Plain));
        assert_eq!(d("\x00\x01\x02 \x03\n\x7f\x7f \x10\n"), None);
        assert_eq!(d("just some prose here\n"), None);
        assert_eq!(
            d("79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be bkt [06/Feb/2019:00:00:38 +0000] 192.0.2.3 - 3E57427F3EXAMPLE REST.GET.OBJECT k \"GET /k HTTP/1.1\" 200 - 113 - 7 - \"-\" \"ua\"\n"),
            Some(LogFormat::S3)
        );
        assert_eq!(
            d("1286536309.450    175 192.168.0.1 TCP_MISS/200 1150 GET http://a.example/ - HIER_DIRECT/1.2.3.4 text/html\n"),
            Some(LogFormat::Squid)
        );
        assert_eq!(
            d("[2016-04-15T20:17:00.310Z] \"GET /a HTTP/1.1\" 204 - 154 0 226 100 \"-\" \"ua\" \"id\" \"locations\" \"tcp://10.0.2.1:80\"\n"),
            Some(LogFormat::Envoy)
        );
    }

    #[test]
    fn a_format_needs_most_sampled_lines() {
        let record = "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 2\n";
        let prose = "Jan  3 09:47:02 host sudo: a message, not a record\n";
        let sample = |records: usize, others: usize| {
            let mut s = record.repeat(records);
            s.push_str(&prose.repeat(others));
            s
        };
        // One record among many lines of no known shape is no evidence.
        assert_eq!(detect(sample(1, 9).as_bytes()), None);
        assert_eq!(detect(sample(5, 5).as_bytes()), None);
        assert_eq!(detect(sample(6, 4).as_bytes()), Some(LogFormat::Common));
        assert_eq!(
            why_undetected(sample(2, 3).as_bytes()).as_deref(),
            Some("only 2 of 5 sampled lines read as common")
        );
        // Lines of the right shape that its reader rejects do not count:
        // `[time] "..."` with an unclosed request.
        let broken = "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\n";
        let mut s = broken.repeat(3);
        s.push_str(&record.repeat(2));
        assert_eq!(detect(s.as_bytes()), None);
        // Random bytes.
        let mut x: u32 = 7;
        let noise: Vec<u8> = (0..4000)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (x >> 24) as u8
            })
            .collect();
        assert_eq!(detect(&noise), None);
    }

    #[test]
    fn json_after_many_comment_lines_gets_its_preset() {
        // A test baseline's comments, then Zeek's JSON http.log records:
        // the records decide the preset, however many comments come first.
        let record = r#"{"ts":1700000000.1,"uid":"C1","id.orig_h":"1.2.3.4","id.orig_p":5,"id.resp_h":"5.6.7.8","id.resp_p":80,"method":"GET","host":"bro.org","uri":"/x"}"#;
        for comments in [1, 3, SAMPLE_LINES + 50] {
            let mut sample = "### BTest baseline data generated by btest-diff.\n".repeat(comments);
            sample.push_str(&format!("{record}\n").repeat(3));
            let detected = detect_input(None, None, sample.as_bytes()).unwrap();
            assert_eq!(detected.format, LogFormat::Json, "{comments} comments");
            assert_eq!(detected.json_preset, Some("zeek"), "{comments} comments");
        }
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

/// Why [`detect_input`] cannot tell how to read an input.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Undetected {
    /// No line of the sample has the shape of a known format.
    Format,
    /// JSON objects whose fields match no preset, and no paths were given:
    /// the top-level field names of the first object.
    JsonFields(Vec<String>),
}

/// The format of an input whose first bytes are `sample`: `given` (`-f`),
/// or guessed by [`detect`]; for JSON, the `given_paths` (`--json-*`) or
/// the preset that fits the sample best (with the `given_paths` over its
/// own when they name no target or request-line path). An error when the format cannot be
/// guessed, or when the sample holds JSON objects and no preset fits them.
/// A JSON sample with no whole object in it (an empty input, a
/// pretty-printed document) is read with the nginx preset, so that each
/// line is rejected for what is wrong with it.
///
/// ```
/// use canonurl::log::detect::{detect_input, Undetected};
/// use canonurl::log::{JsonPreset, LogFormat};
///
/// // Caddy's JSON layout, told by its fields.
/// let caddy = br#"{"level":"info","msg":"handled request","request":{"host":"a.example","uri":"/x"}}"#;
/// let detected = detect_input(None, None, caddy).unwrap();
/// assert_eq!(detected.format, LogFormat::Json);
/// assert!(detected.guessed);
/// assert_eq!(detected.json_preset, Some("caddy"));
/// assert_eq!(detected.json_paths, Some(JsonPreset::Caddy.paths()));
///
/// // A given format is taken as it is.
/// let given = detect_input(Some(LogFormat::Plain), None, caddy).unwrap();
/// assert_eq!((given.format, given.guessed), (LogFormat::Plain, false));
///
/// // JSON whose fields no preset knows: their names, for the error message.
/// let unknown = br#"{"when":1,"what":"/x"}"#;
/// assert_eq!(
///     detect_input(Some(LogFormat::Json), None, unknown),
///     Err(Undetected::JsonFields(vec!["when".into(), "what".into()]))
/// );
/// ```
pub fn detect_input(
    given: Option<LogFormat>,
    given_paths: Option<&JsonPaths>,
    sample: &[u8],
) -> Result<Detected, Undetected> {
    let format = match given {
        Some(f) => f,
        None => detect(sample).ok_or(Undetected::Format)?,
    };
    let (json_paths, json_preset) = match (format, given_paths) {
        (LogFormat::Json, Some(p)) if p.has_request_paths() => (Some(p.clone()), Some("custom")),
        // Paths without a target path (`--json-status` alone) are read on
        // top of the preset that fits.
        (LogFormat::Json, given) => {
            // The records only, as `guess` sampled them: comment lines
            // before them (Zeek's test baselines start with `### BTest
            // baseline data ...`) must not crowd them out of the sample.
            let lines = || {
                sample
                    .split(|&b| b == b'\n')
                    .filter(|l| !l.trim_ascii().is_empty() && !l.starts_with(b"#"))
                    .take(SAMPLE_LINES)
            };
            let preset = match JsonExtractor::detect_preset(lines()) {
                Some(preset) => preset,
                None => match first_object_keys(lines()) {
                    Some(keys) => return Err(Undetected::JsonFields(keys)),
                    None => JsonPreset::Nginx,
                },
            };
            let mut paths = preset.paths();
            if let Some(given) = given {
                paths.overlay(given);
            }
            (Some(paths), Some(preset.name()))
        }
        _ => (None, None),
    };
    Ok(Detected {
        format,
        guessed: given.is_none(),
        json_paths,
        json_preset,
    })
}
