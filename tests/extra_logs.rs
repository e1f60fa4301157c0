//! The `canonurl` command over the real logs of `extra-logs/<format>/` in the
//! shared data: each file of a format canonurl reads is detected as that
//! format, every line is accounted for, and a few URLs per file, checked by
//! hand against the file (the comment on each case says how), come out as
//! written here.
//!
//! Every file of the directory must be either a case here or a file of a
//! format listed in `NOT_READ_YET`, so a new sample cannot sit in the data
//! unseen.

mod common;

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
    // IIS 10: `2022-11-07 14:29:06 127.0.0.1 GET /us - 80 ...` (no host column).
    Case {
        file: "w3c/netdata-iis-u_ex221107.log",
        format: "w3c",
        preset: None,
        urls: &[(1, ""), (6, "/us")],
    },
];

/// Format directories of `extra-logs/` that canonurl does not read yet, with
/// why. Their files are only checked to exist.
const NOT_READ_YET: &[(&str, &str)] = &[
    (
        "akamai-datastream2-json",
        "JSON preset not written yet (issue 14)",
    ),
    ("aws-waf-json", "JSON preset not written yet (issue 14)"),
    (
        "cloudflare-logpush",
        "JSON preset not written yet (issue 14)",
    ),
    ("gcs-usage", "csv format not written yet (issue 14)"),
    ("uwsgi", "uWSGI request logging: not a supported format"),
    ("zeek-json", "JSON preset not written yet (issue 14)"),
    ("zeek-tsv", "zeek format not written yet (issue 14)"),
];

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
        let path = dir.join(case.file);
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
