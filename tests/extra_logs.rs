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
    ("s3-access", "s3 format not written yet (issue 14)"),
    ("uwsgi", "uWSGI request logging: not a supported format"),
    ("zeek-json", "JSON preset not written yet (issue 14)"),
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
