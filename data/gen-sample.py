#!/usr/bin/env python3
"""Writes a synthetic list of URLs, one per line, as they appear in web-server
logs and crawls: absolute http(s) URLs with mixed-case schemes and hosts,
default and non-default ports, userinfo, dot segments, percent-escapes in
every case, queries with spaces, fragments, IPv4 in odd forms, IPv6, IDN
hosts, origin-form request targets, relative references, some invalid URLs,
and some raw bytes that are not UTF-8.

Deterministic: the same --seed and --lines give the same bytes (stdlib only).

    python3 data/gen-sample.py --seed 1 --lines 2000 > data/sample-urls.txt
"""

import argparse
import random
import sys

SCHEMES = ["http", "https", "http", "https", "https", "HTTP", "HTTPS", "Http", "hTTpS"]

DOMAINS = [
    "example.com",
    "www.example.com",
    "WWW.Example.COM",
    "api.example.net",
    "cdn.static.example.io",
    "Shop.Example.co.uk",
    "blog.example.org",
    "images.example.org",
    "localhost",
    "sub.domain.EXAMPLE.edu",
    "example.com.",
    "a-b-c.example.info",
    "m.example.com",
]

IDN_HOSTS = [
    "bücher.example",
    "BÜCHER.example",
    "münchen.example.de",
    "пример.example",
    "例え.example.jp",
    "xn--bcher-kva.example",
    "XN--BCHER-KVA.example",
    "b%C3%BCcher.example",
    "café.example.fr",
]

IPV4_HOSTS = [
    "127.0.0.1",
    "192.168.0.1",
    "10.0.0.254",
    "0x7f.1",
    "0x7F.0.0.1",
    "0177.0.0.1",
    "2130706433",
    "127.1",
    "0xC0.0xA8.0x00.0x01",
    "8.8.8.8",
]

IPV6_HOSTS = [
    "[::1]",
    "[2001:db8::1]",
    "[2001:DB8:0:0:0:0:0:1]",
    "[::ffff:192.168.1.1]",
    "[fe80::1:2:3:4]",
    "[0:0:0:0:0:0:0:0]",
]

USERINFO = [
    "user@",
    "user:pass@",
    "User:P%40ss@",
    "us%65r:secret@",
    ":@",
    "anonymous:@",
    "a b:c@",
]

SEGMENTS = [
    "index.html", "products", "blog", "2023", "11", "images", "logo.png", "api",
    "v1", "v2", "users", "search", "static", "css", "main.css", "js", "app.min.js",
    "wp-admin", "admin", "login", "cart", "checkout", "item", "12345", "docs",
    "About-Us", "news", "feed", "rss.xml", "download", "files", "report.pdf",
    "robots.txt", "favicon.ico", "sitemap.xml", "category", "Shoes", "page", "2",
]

ODD_SEGMENTS = [
    ".", "..", "%2e", "%2E", "%2e%2E", ".%2e", "%7euser", "~user", "%7Ejoe", "%41BC",
    "%61bc", "caf%c3%a9", "caf%C3%A9", "café", "a%2fb", "a%2Fb", "what%3f", "sec%23",
    "a b", "a%20b", "semi;colon", "x%zz", "%", "[brackets]", "a|b", "quote\"d",
    "back\\slash", "tab%09", "%F0%9F%98%80", "😀", "C%2B%2B", "emp%26ty", "UPPER",
    "a%2e", "", "ünï", "%e2%82%ac", "€",
]

INVALID_BYTES = [b"\xff", b"\xe9", b"\xc3\x28", b"\x80", b"\xfe\xff", b"\xed\xa0\x80", b"\xf8\x88"]

QUERY_KEYS = [
    "q", "id", "page", "sort", "utm_source", "utm_medium", "ref", "lang", "s",
    "session", "PHPSESSID", "jsessionid", "token", "a", "b", "Filter", "redirect",
]

QUERY_VALUES = [
    "1", "42", "desc", "google", "email", "en", "hello world", "hello+world",
    "hello%20world", "a%2bb", "%7e", "%41", "caf%c3%a9", "café", "x=y", "", "a/b",
    "http://other.example/x?y", "%2F", "1,2,3", "a'b", "<script>", "ü", "%zz",
    "A%3d%3D", "naïve text", "50%", "..%2f..%2fetc%2fpasswd",
]

FRAGMENTS = [
    "top", "section-2", "", "a b", "%7e", "Comments", "!/hashbang/route", "ü", "x%20y",
]

INVALID_URLS = [
    "http://exa<mple.com/",
    "http://a:99999/",
    "https://example.com:65536/x",
    "http://example.com:8o/",
    "http://[::1/",
    "http://[::g]/",
    "http://1.2.3.4.5/",
    "http://999.1.1.1/",
    "http://0x100000000/",
    "http://exa mple.com/",
    "http://ex%zzample.com/",
    "http://%41%3c.example/",
    "http:///",
    "https://user@/path",
    "http://:80/",
    "http://exam^ple.com/",
    "http://xn--a.example/",
    "foo/bar.html",
    "",
    "-",
    "www.example.com/no-scheme",
]

RELATIVE_REFS = [
    "../a/b",
    "b/c?x=1",
    "./here",
    "?only=query",
    "#frag",
    "//cdn.example.com/lib.js",
    "//Other.Example.ORG:8080/a/../b",
    "img/Logo.PNG",
    "..",
    "%7euser/page",
]

OTHER_SCHEMES = [
    "ftp://ftp.Example.com/pub/file.tar.gz",
    "ftp://ftp.example.com:21/pub/",
    "ws://chat.example.com/socket",
    "WSS://chat.example.com:443/socket",
    "file:///var/log/access.log",
    "file://localhost/etc/hosts",
    "mailto:User@Example.COM",
    "data:text/plain,hello%20world",
    "urn:ISBN:0451450523",
    "javascript:void(0)",
    "android-app://com.example.app/http/example.com/x",
]


def rand_path(rng):
    n = rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4, 5])
    segs = []
    for _ in range(n):
        if rng.random() < 0.2:
            segs.append(rng.choice(ODD_SEGMENTS).encode("utf-8"))
        else:
            segs.append(rng.choice(SEGMENTS).encode("ascii"))
        if rng.random() < 0.006:
            segs[-1] += rng.choice(INVALID_BYTES)
    path = b"/" + b"/".join(segs)
    if n and rng.random() < 0.15:
        path += b"/"
    if rng.random() < 0.03:
        path = path.replace(b"/", b"//", 1)
    return path


def rand_query(rng):
    r = rng.random()
    if r < 0.55:
        return b""
    if r < 0.58:
        return b"?"
    pairs = []
    for _ in range(rng.choice([1, 1, 2, 2, 3, 4])):
        key = rng.choice(QUERY_KEYS)
        value = rng.choice(QUERY_VALUES)
        if rng.random() < 0.05:
            pairs.append(key.encode("ascii"))
        else:
            pairs.append((key + "=" + value).encode("utf-8"))
    query = b"?" + b"&".join(pairs)
    if rng.random() < 0.005:
        query += rng.choice(INVALID_BYTES)
    return query


def rand_fragment(rng):
    if rng.random() < 0.9:
        return b""
    return b"#" + rng.choice(FRAGMENTS).encode("utf-8")


def rand_host(rng):
    r = rng.random()
    if r < 0.72:
        return rng.choice(DOMAINS)
    if r < 0.84:
        return rng.choice(IDN_HOSTS)
    if r < 0.94:
        return rng.choice(IPV4_HOSTS)
    return rng.choice(IPV6_HOSTS)


def rand_port(rng, scheme):
    r = rng.random()
    if r < 0.82:
        return ""
    if r < 0.90:
        return ":443" if scheme.lower() == "https" else ":80"
    if r < 0.98:
        return ":" + rng.choice(["8080", "8443", "3000", "81", "0080", "65535"])
    return ":"


def absolute_url(rng):
    scheme = rng.choice(SCHEMES)
    userinfo = rng.choice(USERINFO) if rng.random() < 0.04 else ""
    host = rand_host(rng)
    head = (scheme + "://" + userinfo + host + rand_port(rng, scheme)).encode("utf-8")
    path = rand_path(rng)
    if path == b"/" and rng.random() < 0.3:
        path = b""  # "http://example.com" (the serializer adds the "/")
    return head + path + rand_query(rng) + rand_fragment(rng)


def origin_form(rng):
    return rand_path(rng) + rand_query(rng)


def odd_whitespace(rng, url):
    """Tabs and surrounding spaces, which the URL parser removes."""
    r = rng.random()
    if r < 0.4:
        return b"  " + url
    if r < 0.8:
        return url + b" "
    i = rng.randrange(len(url) + 1)
    return url[:i] + b"\t" + url[i:]


def one_line(rng):
    r = rng.random()
    if r < 0.55:
        url = absolute_url(rng)
    elif r < 0.85:
        url = origin_form(rng)
    elif r < 0.90:
        url = rng.choice(RELATIVE_REFS).encode("utf-8")
    elif r < 0.93:
        url = rng.choice(OTHER_SCHEMES).encode("utf-8")
    else:
        url = rng.choice(INVALID_URLS).encode("utf-8")
    if rng.random() < 0.01:
        url = odd_whitespace(rng, url)
    return url


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--lines", type=int, default=2000, help="lines to write (default 2000)")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    out = sys.stdout.buffer
    for _ in range(args.lines):
        url = one_line(rng)
        end = b"\r\n" if rng.random() < 0.01 else b"\n"
        out.write(url + end)
    out.flush()


if __name__ == "__main__":
    main()
