//! The `canonurl` command over the real logs of `extra-logs/<format>/` in the
//! shared data: each file of a format canonurl reads is detected as that
//! format, every line is accounted for, and a few URLs per file, checked by
//! hand against the file (the comment on each case says how), come out as
//! written here.
//!
//! Every file of the directory must be either a case here or a file of a
//! format listed in `NOT_READ_YET`, so a new sample cannot sit in the data
//! unseen.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// One file of `extra-logs/`.
struct Case {
    /// Path under `extra-logs/`.
    file: &'static str,
    /// The format `-f auto` must detect.
    format: &'static str,
    /// For JSON logs: the preset that must be detected.
    preset: Option<&'static str>,
    /// (1-based line number, `--pipe` output of that line). An empty string
    /// is a line that gives no URL.
    urls: &'static [(usize, &'static str)],
}

const CASES: &[Case] = &[
    // `http 2016-08-10T22:08:42...Z app/... "GET http://www.example.com:80/ HTTP/1.1"`:
    // the absolute request URL without its default port; `h2` with port 773 keeps it.
    Case {
        file: "alb/lnav-format-samples-alb_log.log",
        format: "alb",
        preset: None,
        urls: &[
            (1, "http://www.example.com/"),
            (2, "https://www.example.com/"),
            (3, "https://10.0.2.105:773/"),
        ],
    },
    // Classic ELB: the timestamp first, then the load balancer's name.
    Case {
        file: "alb/lnav-format-samples-elb_log.log",
        format: "alb",
        preset: None,
        urls: &[
            (1, "https://example.com/foo/bar?baz=1234"),
            (2, "http://www.example.com/"),
        ],
    },
    // `"GET http://54.186.209.42:80//_profiler/phpinfo HTTP/1.1"`: the `//`
    // is kept (whatwg).
    Case {
        file: "alb/opensearch-alb-raw.log",
        format: "alb",
        preset: None,
        urls: &[(1, "http://54.186.209.42//_profiler/phpinfo")],
    },
    // Lines 1-2 are `#Version`/`#Fields`; line 3 is `GET` of `/` on
    // `d2wusnbjo8x1w7.cloudfront.net`, `cs-protocol` https; line 20
    // has the query `v=v1.3.0`.
    Case {
        file: "cloudfront/opensearch-cloudfront-raw.log",
        format: "cloudfront",
        preset: None,
        urls: &[
            (1, ""),
            (2, ""),
            (3, "https://d2wusnbjo8x1w7.cloudfront.net/"),
            (
                20,
                "https://d2wusnbjo8x1w7.cloudfront.net/locales/en-US/servicelog.json?v=v1.3.0",
            ),
        ],
    },
    // Line 3 is an ISO-time line that is no CLF record (rejected).
    Case {
        file: "combined/lnav-format-samples-access_log.log",
        format: "combined",
        preset: None,
        urls: &[(1, "/client/"), (3, "")],
    },
    // Line 1: `GET /filter/27|13%20%D9...` (a raw `|` the path encodes).
    Case {
        file: "combined/lnav-shop_access_log.0",
        format: "combined",
        preset: None,
        urls: &[
            (2, "/image/60844/productModel/200x200"),
            (20, "/m/filter/b2,p6"),
        ],
    },
    // Lines 1-5 are start-up messages and a TCP record; line 6 the one HTTP request.
    Case {
        file: "haproxy/lnav-format-samples-haproxy.log",
        format: "haproxy",
        preset: None,
        urls: &[
            (1, ""),
            (5, ""),
            (
                6,
                "/schulportal/?Script=934&lehrer=126537&anm=3235&onlinetest=admin",
            ),
        ],
    },
    // Line 1 predates S3's Host-header field: bucket `www.example.com`,
    // `WEBSITE.GET.OBJECT`, `"GET /index HTTP/1.1"`, so the host is the
    // bucket on S3's global endpoint, http (no TLS version logged). Line 2:
    // `"GET /awsexamplebucket1?versioning HTTP/1.1"`, Host header
    // `awsexamplebucket1.s3.us-west-1.amazonaws.com`, `TLSV1.1`.
    Case {
        file: "s3-access/lnav-format-samples-s3_log.log",
        format: "s3",
        preset: None,
        urls: &[
            (1, "http://www.example.com.s3.amazonaws.com/index"),
            (
                2,
                "https://awsexamplebucket1.s3.us-west-1.amazonaws.com/awsexamplebucket1?versioning",
            ),
        ],
    },
    // Line 1: `"PUT /locales/en/cluster.json HTTP/1.1"`, Host header
    // `centralizedlogging-...-t9bxwwr3d7k.s3.us-west-2.amazonaws.com`, `TLSv1.2`.
    Case {
        file: "s3-access/opensearch-s3-raw.log",
        format: "s3",
        preset: None,
        urls: &[(
            1,
            "https://centralizedlogging-webconsoleuis3bucket22191f5e-t9bxwwr3d7k.s3.us-west-2.amazonaws.com/locales/en/cluster.json",
        )],
    },
    // Akamai DataStream 2, one record (read with `jq .`): `reqHost`
    // `ds2-sqa-sanity-venkat-1.akamaized.net`, `reqPath` `Tiger.pdf` (no
    // leading `/`), `queryStr` `-`, `proto` `HTTP/1.1` (a version, not a
    // scheme), so `reqPort` `80` gives http.
    Case {
        file: "akamai-datastream2-json/datadog-akamai.datastream_tests.ndjson",
        format: "json",
        preset: Some("akamai"),
        urls: &[(1, "http://ds2-sqa-sanity-venkat-1.akamaized.net/Tiger.pdf")],
    },
    // AWS WAF in front of CloudFront (`httpSourceName` `CF`), 38 records
    // without a final newline (read with `jq .httpRequest`): the `host`
    // header `d2wusnbjo8x1w7.cloudfront.net`, `uri` plus `?` and `args`
    // (line 3 `v=v1.3.0`, line 26 `timestamp=1679548658747`, empty on line
    // 1); no scheme is logged, so https.
    Case {
        file: "aws-waf-json/opensearch-waf-raw.log",
        format: "json",
        preset: Some("aws-waf"),
        urls: &[
            (1, "https://d2wusnbjo8x1w7.cloudfront.net/favicon.ico"),
            (
                3,
                "https://d2wusnbjo8x1w7.cloudfront.net/locales/en-US/cluster.json?v=v1.3.0",
            ),
            (
                26,
                "https://d2wusnbjo8x1w7.cloudfront.net/aws-exports.json?timestamp=1679548658747",
            ),
            (
                38,
                "https://d2wusnbjo8x1w7.cloudfront.net/log-pipeline/service-log",
            ),
        ],
    },
    // Cloudflare Logpush, one object per line (checked with `jq -c`), no
    // `ClientRequestScheme`: `ClientRequestHost` and `ClientRequestURI`
    // with http. Line 6 is on `api.example.com`; line 12 asks for `/.env`.
    Case {
        file: "cloudflare-logpush/lnav-cloudflare.1",
        format: "json",
        preset: Some("cloudflare"),
        urls: &[
            (1, "http://www.example.com/"),
            (6, "http://api.example.com/v1/users"),
            (12, "http://www.example.com/.env"),
            (15, "http://api.example.com/v1/health"),
        ],
    },
    // One object on one line: `HEAD` of `/` on `www.ripe.net`, `ClientRequestScheme` `http`.
    Case {
        file: "cloudflare-logpush/lnav-cloudflare.json",
        format: "json",
        preset: Some("cloudflare"),
        urls: &[(1, "http://www.ripe.net/")],
    },
    // GCS usage log: a quoted header row, then `"GET","/v1/kanji/%E9%9B%86"`
    // with `cs_host` `kanjiapi.dev` (fields 5, 6 and 11 of each row, read in
    // the file); https per the preset. No final newline.
    Case {
        file: "gcs-usage/kanjiapi-usage-example-one.csv",
        format: "csv",
        preset: None,
        urls: &[
            (1, ""),
            (2, "https://kanjiapi.dev/v1/kanji/%E9%9B%86"),
            (3, "https://kanjiapi.dev/v1/kanji/%E5%85%88"),
        ],
    },
    // Same layout; rows 2-4 have `cs_uri` `/v1/kanji/%E7%8B%99`, `%E5%93%80`,
    // `%E6%9B%B8` (and `cs_object` the decoded kanji, not read).
    Case {
        file: "gcs-usage/kanjiapi-usage-example-two.csv",
        format: "csv",
        preset: None,
        urls: &[
            (1, ""),
            (2, "https://kanjiapi.dev/v1/kanji/%E7%8B%99"),
            (4, "https://kanjiapi.dev/v1/kanji/%E6%9B%B8"),
        ],
    },
    // Line 10 (`cut -f6-10`): port 80, `GET`, host `lepo.it.da.ut.ee`, a uri
    // with raw spaces and `\xfc` (one byte, percent-encoded as `%FC`); the
    // `,` stays. Lines 1-9 are `### BTest` and directives, 11 `#close`.
    Case {
        file: "zeek-tsv/zeek-btest-ascii-escape-odd-url.http.log",
        format: "zeek",
        preset: None,
        urls: &[
            (1, ""),
            (
                10,
                "http://lepo.it.da.ut.ee/~cect/teoreetilised%20seminarid_2010/arheoloogia_uurimisr%FChma_seminar/Joyce%20et%20al%20-%20The%20Languages%20of%20Archaeology%20~%20Dialogue,%20Narrative%20and%20Writing.pdf",
            ),
            (11, ""),
        ],
    },
    // `cut -f8-10`: line 10 `OPTIONS www.google.com *` (asterisk-form),
    // 11 uri `(empty)`, 12 all `-`, 14 `GET /`, 16 `GET /HTTP/1.1` (an HTTP/0.9
    // request), 30 `CONNECT /` (authority-form), 35 `TRACE /`.
    Case {
        file: "zeek-tsv/zeek-btest-http-methods.http.log",
        format: "zeek",
        preset: None,
        urls: &[
            (10, ""),
            (11, ""),
            (12, ""),
            (14, "http://www.google.com/"),
            (16, "http://www.google.com/HTTP/1.1"),
            (30, ""),
            (35, "http://www.google.com/"),
        ],
    },
    // `cut -f6,9,10`: line 10 `80 bits.wikimedia.org /skins-1.5/monobook/main.css`,
    // 17 `80 meta.wikimedia.org /images/wikimedia-button.png`.
    Case {
        file: "zeek-tsv/zeek-btest-opt-basic.http.log",
        format: "zeek",
        preset: None,
        urls: &[
            (9, ""),
            (10, "http://bits.wikimedia.org/skins-1.5/monobook/main.css"),
            (17, "http://meta.wikimedia.org/images/wikimedia-button.png"),
        ],
    },
    // uWSGI's default request logger: `... [Sun Mar 13 22:49:12 2016] POST
    // /update_metrics => generated 47 bytes ...`; line 3 `POST /endpoint2`.
    // No host in the format: path only.
    Case {
        file: "uwsgi/lnav-uwsgi.0",
        format: "uwsgi",
        preset: None,
        urls: &[(1, "/update_metrics"), (3, "/endpoint2")],
    },
    // IIS 10: `2022-11-07 14:29:06 127.0.0.1 GET /us - 80 ...` (no host column).
    Case {
        file: "w3c/netdata-iis-u_ex221107.log",
        format: "w3c",
        preset: None,
        urls: &[(1, ""), (6, "/us")],
    },
    // Zeek btest baselines, read with the time unmasked (see `MASKED`).
    // Line 1 is btest's `### BTest baseline` comment (rejected). Line 2:
    // `host` `bro.org`, `uri` `/download/CHANGES.bro-aux.txt`, `id.resp_p` 80.
    Case {
        file: "zeek-json/zeek-btest-http-uri-sha256.http.log",
        format: "json",
        preset: Some("zeek"),
        urls: &[(1, ""), (2, "http://bro.org/download/CHANGES.bro-aux.txt")],
    },
    // Host `172.24.0.3`, port 80. Line 3's `uri` holds the raw UTF-8 of
    // U+1F604 (`cat -A`: `M-pM-^_M-^XM-^D`, F0 9F 98 84), percent-encoded.
    // Lines 4 and 5 hold `\\x07` (JSON for `\x07`): Zeek writes a BEL byte
    // and a literal `\x07` alike, so it is kept as logged, and a `\` in an
    // http path is a `/` (WHATWG), as for any log.
    Case {
        file: "zeek-json/zeek-btest-json-non-printable.http.log.json",
        format: "json",
        preset: Some("zeek"),
        urls: &[
            (1, ""),
            (2, "http://172.24.0.3/regular_file.html"),
            (3, "http://172.24.0.3/printable_%F0%9F%98%84"),
            (4, "http://172.24.0.3/non_printable_/x07"),
            (5, "http://172.24.0.3/non_printable_literal_/x07"),
        ],
    },
];

/// Files whose test harness masked a value into something that is not
/// JSON (btest writes the time `"ts":XXXXXXXXXX.XXXXXX`): as they are, every
/// record is rejected as `bad-json` (`masked_files_are_not_json` checks
/// that), so the case is run on a copy with the mask replaced by a number,
/// as Zeek wrote it. (file, mask, stand-in)
const MASKED: &[(&str, &str, &str)] = &[
    (
        "zeek-json/zeek-btest-http-uri-sha256.http.log",
        "XXXXXXXXXX.XXXXXX",
        "1700000000.123456",
    ),
    (
        "zeek-json/zeek-btest-json-non-printable.http.log.json",
        "XXXXXXXXXX.XXXXXX",
        "1700000000.123456",
    ),
];

/// Format directories of `extra-logs/` that canonurl does not read yet, with
/// why. Their files are only checked to exist.
const NOT_READ_YET: &[(&str, &str)] = &[];

/// The path to run a case on: the file, or for a `MASKED` one a copy in
/// `tmp` with the mask replaced.
fn unmasked(dir: &Path, file: &str, tmp: &Path) -> PathBuf {
    let path = dir.join(file);
    let Some((_, mask, stand_in)) = MASKED.iter().find(|(f, ..)| *f == file) else {
        return path;
    };
    let text = String::from_utf8(common::read_bytes(&path)).expect("masked files are UTF-8");
    assert!(text.contains(mask), "{file}: no {mask} to replace");
    let copy = tmp.join(format!(
        "extra-logs-unmasked-{}-{}",
        std::process::id(),
        file.replace('/', "-")
    ));
    std::fs::write(&copy, text.replace(mask, stand_in)).expect("write unmasked copy");
    copy
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_canonurl"))
        .args(args)
        .output()
        .expect("run canonurl")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn extra_logs() -> Option<PathBuf> {
    let data = common::shared_data_or_skip("extra_logs")?;
    let dir = data.join("extra-logs");
    if !dir.is_dir() {
        eprintln!("skipping extra_logs: {} is absent", dir.display());
        return None;
    }
    Some(dir)
}

/// Every file under `dir/<format>/`, as `<format>/<name>`.
fn files(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for format in std::fs::read_dir(dir).expect("read extra-logs") {
        let format = format.expect("dir entry").path();
        if !format.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&format).expect("read format dir") {
            let file = file.expect("dir entry").path();
            if file.is_file() {
                let rel = file.strip_prefix(dir).expect("under dir");
                out.insert(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out
}

#[test]
fn every_extra_log_is_a_case_or_not_read_yet() {
    let Some(dir) = extra_logs() else { return };
    let cases: BTreeSet<&str> = CASES.iter().map(|c| c.file).collect();
    for file in files(&dir) {
        let format_dir = file.split('/').next().expect("format dir");
        let pending = NOT_READ_YET.iter().any(|(d, _)| *d == format_dir);
        assert!(
            cases.contains(file.as_str()) != pending,
            "{file}: must be a case of CASES or in a NOT_READ_YET directory, not both"
        );
    }
    for case in CASES {
        assert!(
            dir.join(case.file).is_file(),
            "{}: listed but missing",
            case.file
        );
    }
}

#[test]
fn every_case_is_detected_accounted_and_read_right() {
    let Some(dir) = extra_logs() else { return };
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for (i, case) in CASES.iter().enumerate() {
        let path = unmasked(&dir, case.file, &tmp);
        let raw = common::read_bytes(&path);
        let lines = common::split_lines(&raw).len() as u64;

        let json = tmp.join(format!("extra-logs-{}-{i}.json", std::process::id()));
        let out = run(&[
            "--stats-json".as_ref(),
            json.as_os_str(),
            "-o".as_ref(),
            "/dev/null".as_ref(),
            path.as_os_str(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            case.file,
            stderr(&out)
        );
        let text = std::fs::read_to_string(&json).expect("--stats-json written");
        let _ = std::fs::remove_file(&json);
        let v: Value = serde_json::from_str(&text).expect("stats are JSON");
        let input = &v["inputs"][0];
        assert_eq!(input["format"], case.format, "{}", case.file);
        assert_eq!(input["detected"], true, "{}", case.file);
        if let Some(preset) = case.preset {
            assert_eq!(input["json_preset"], preset, "{}", case.file);
        }
        let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"));
        assert_eq!(n("lines"), lines, "{}: lines", case.file);
        assert_eq!(
            n("lines"),
            n("emitted") + n("skipped") + n("rejected"),
            "{}: {v}",
            case.file
        );
        assert!(n("emitted") > 0, "{}: nothing emitted: {v}", case.file);

        let out = run(&["--pipe".as_ref(), path.as_os_str()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            case.file,
            stderr(&out)
        );
        let got = common::split_lines(&out.stdout);
        assert_eq!(got.len() as u64, lines, "{}: --pipe lines", case.file);
        for &(line, want) in case.urls {
            assert_eq!(
                String::from_utf8_lossy(got[line - 1]),
                want,
                "{} line {line}",
                case.file
            );
        }
    }
}

#[test]
fn masked_files_are_not_json() {
    let Some(dir) = extra_logs() else { return };
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for (i, (file, ..)) in MASKED.iter().enumerate() {
        let path = dir.join(file);
        let lines = common::split_lines(&common::read_bytes(&path)).len() as u64;
        // No line reads as JSON: `-f auto` finds no evidence for any format.
        let out = run(&["-o".as_ref(), "/dev/null".as_ref(), path.as_os_str()]);
        assert_eq!(out.status.code(), Some(2), "{file}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("sampled lines read as json;"),
            "{file}: {}",
            stderr(&out)
        );
        // Given `-f json`, each line is rejected (the btest comment as
        // malformed, records as bad JSON at the masked time, byte 6).
        let json = tmp.join(format!("extra-logs-masked-{}-{i}.json", std::process::id()));
        let out = run(&[
            "-f".as_ref(),
            "json".as_ref(),
            "--stats-json".as_ref(),
            json.as_os_str(),
            "-o".as_ref(),
            "/dev/null".as_ref(),
            path.as_os_str(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{file}: {}", stderr(&out));
        let text = std::fs::read_to_string(&json).expect("--stats-json written");
        let _ = std::fs::remove_file(&json);
        let v: Value = serde_json::from_str(&text).expect("stats are JSON");
        assert_eq!(v["inputs"][0]["json_preset"], "nginx", "{file}");
        assert_eq!(v["rejected"].as_u64(), Some(lines), "{file}: {v}");
        assert_eq!(v["emitted"].as_u64(), Some(0), "{file}: {v}");
        assert!(
            stderr(&out).contains(":2: invalid JSON at byte 6"),
            "{file}"
        );
    }
}

/// The NASA TSV exports (`nasa-tsv/`, next to `extra-logs/`): a header row
/// `host logname time method url response bytes`, then 9999 records whose
/// `host` is the client. `-f auto` reads them as tsv with the nasa preset;
/// every line is accounted for, and the URLs are path-only, as for the
/// NASA common log (`tests/logs.rs`).
#[test]
fn nasa_tsv_is_tsv_with_path_only_urls() {
    let Some(dir) = extra_logs() else { return };
    let dir = dir.parent().expect("shared data").join("nasa-tsv");
    if !dir.is_dir() {
        eprintln!("skipping: {} is absent", dir.display());
        return;
    }
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    // (file, line, URL): `sed -n 'Np' F | cut -f1,5`.
    let checks: &[(&str, usize, &str)] = &[
        ("nasa_19950701.tsv", 1, ""),
        // `199.72.81.55 /history/apollo/`
        ("nasa_19950701.tsv", 2, "/history/apollo/"),
        // `unicomp6.unicomp.net /shuttle/countdown/`: no host in the URL.
        ("nasa_19950701.tsv", 3, "/shuttle/countdown/"),
        // the last line: `204.238.216.51 /images/MOSAIC-logosmall.gif`
        ("nasa_19950801.tsv", 10000, "/images/MOSAIC-logosmall.gif"),
    ];
    for name in ["nasa_19950701.tsv", "nasa_19950801.tsv"] {
        let path = dir.join(name);
        let raw = common::read_bytes(&path);
        let lines = common::split_lines(&raw).len() as u64;
        let json = tmp.join(format!("nasa-{}-{name}.json", std::process::id()));
        let out = run(&[
            "--stats-json".as_ref(),
            json.as_os_str(),
            "-o".as_ref(),
            "/dev/null".as_ref(),
            path.as_os_str(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let text = std::fs::read_to_string(&json).expect("--stats-json written");
        let _ = std::fs::remove_file(&json);
        let v: Value = serde_json::from_str(&text).expect("stats are JSON");
        assert_eq!(v["inputs"][0]["format"], "tsv", "{name}");
        let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"));
        assert_eq!(n("lines"), lines, "{name}");
        // `grep -c . F` = 10000: one header row, 9999 records, none bad.
        assert_eq!(
            (n("emitted"), n("skipped"), n("rejected")),
            (lines - 1, 1, 0),
            "{name}: {v}"
        );
        let out = run(&["--pipe".as_ref(), path.as_os_str()]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let got = common::split_lines(&out.stdout);
        assert_eq!(got.len() as u64, lines, "{name}: --pipe lines");
        assert!(
            got.iter().skip(1).all(|u| u.starts_with(b"/")),
            "{name}: a URL with a host"
        );
        for &(file, line, want) in checks.iter().filter(|c| c.0 == name) {
            assert_eq!(
                String::from_utf8_lossy(got[line - 1]),
                want,
                "{file}:{line}"
            );
        }
    }
}
