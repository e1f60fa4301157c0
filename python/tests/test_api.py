"""The Python API: profiles, rules, results, errors, fingerprints, SURT."""

import pickle
import subprocess
import warnings

import pytest

import canonurl
from canonurl import Canonicalizer, RejectError

URL = "HTTP://Example.COM:80/a/./b/../%7euser?q=%2f&x=caf%c3%a9 y#Top"


def test_profiles_as_the_readme_says():
    assert canonurl.canonicalize(URL, "whatwg") == "http://example.com/a/%7euser?q=%2f&x=caf%c3%a9%20y#Top"
    assert canonurl.canonicalize(URL) == "http://example.com/a/~user?q=%2F&x=caf%C3%A9%20y#Top"
    dedup = "https://WWW.Example.com/shop/index.html?utm_source=x&b=2&a=1#top"
    assert canonurl.canonicalize(dedup, "safe") == "https://www.example.com/shop/index.html?b=2&a=1"
    assert canonurl.canonicalize(dedup, "aggressive") == "https://example.com/shop/?a=1&b=2"
    assert canonurl.canonicalize("http://BÜCHER.example/", "whatwg") == "http://xn--bcher-kva.example/"
    assert canonurl.canonicalize("http://0x7f.1:8080/") == "http://127.0.0.1:8080/"
    assert canonurl.canonicalize("http://[2001:DB8:0:0:0:0:0:1]/") == "http://[2001:db8::1]/"
    assert canonurl.PROFILES == ["whatwg", "rfc3986", "safe", "aggressive"]


def test_rejects_give_none_or_raise():
    assert canonurl.canonicalize("http://exa<mple.com/") is None
    with pytest.raises(RejectError) as e:
        canonurl.canonicalize("http://exa<mple.com/", errors="raise")
    assert isinstance(e.value, ValueError)
    assert str(e.value) == "forbidden domain code point '<' at byte 10"
    assert (e.value.reason, e.value.offset) == ("forbidden-domain-code-point", 10)
    again = pickle.loads(pickle.dumps(e.value))
    assert (str(again), again.reason, again.offset) == (str(e.value), e.value.reason, e.value.offset)
    with pytest.raises(RejectError, match="relative reference without a base URL") as e:
        Canonicalizer().canonicalize("/a", errors="raise")
    assert e.value.reason == "missing-scheme"
    with pytest.raises(RejectError):
        Canonicalizer().canonical("http://[::1/")
    with pytest.raises(RejectError):
        Canonicalizer().explain("nope")
    with pytest.raises(ValueError, match="errors="):
        canonurl.canonicalize("http://a/", errors="ignore")
    with pytest.raises(TypeError, match="str or bytes"):
        canonurl.canonicalize(42)
    with pytest.raises(ValueError, match="unknown profile"):
        Canonicalizer("strict")


def test_base_and_target_mode():
    c = Canonicalizer(base="https://example.com/shop/item?id=1")
    assert c.base == "https://example.com/shop/item?id=1"
    assert c.canonicalize("../cart?add=%7e1") == "https://example.com/cart?add=~1"
    assert canonurl.canonicalize("../cart", base="https://example.com/shop/item") == "https://example.com/cart"
    logs = Canonicalizer(target=True)
    assert logs.canonicalize("/a/./b/../c?x=%7E") == "/a/c?x=~"
    assert logs.canonicalize("http://A.com/x") == "http://a.com/x"
    assert canonurl.canonicalize("/a/../b", target=True) == "/b"
    with pytest.raises(ValueError, match="invalid base URL"):
        Canonicalizer(base="example.com")


def test_rules_edits_files_and_warnings(tmp_path):
    url = "https://www.example.com/a/?ref=tw&q=1"
    toml = 'rules = ["-www"]\n[[host]]\nmatch = ["www.example.com"]\nextra-tracking-params = ["ref"]\n'
    c = Canonicalizer("aggressive", rules="trailing-slash=keep", rules_toml=toml)
    assert c.canonicalize(url) == "https://www.example.com/a/?q=1"
    path = tmp_path / "site.toml"
    path.write_text(toml)
    assert Canonicalizer("aggressive", rules=["trailing-slash=keep"], rules_file=path).canonicalize(url) == \
        "https://www.example.com/a/?q=1"
    with pytest.warns(RuntimeWarning, match="'extra-tracking-params' tunes rule 'tracking'"):
        assert canonurl.canonicalize(url, "aggressive", rules="-www,-tracking", rules_file=str(path)) == \
            "https://www.example.com/a/?q=1&ref=tw"
    assert canonurl.canonicalize("http://example.com/A/B", rules="+lowercase-path") == "http://example.com/a/b"
    assert "lowercase-path" in Canonicalizer(rules="+lowercase-path").rules
    assert Canonicalizer().rules == []
    with pytest.raises(ValueError, match="unknown rule"):
        Canonicalizer(rules="+no-such-rule")
    with pytest.raises(ValueError, match="line 1"):
        Canonicalizer(rules_toml="extra-tracking-param = []")
    with pytest.raises(OSError):
        Canonicalizer(rules_file=tmp_path / "missing.toml")
    with pytest.warns(RuntimeWarning, match="tracking"):
        Canonicalizer("rfc3986", rules_toml='extra-tracking-params = ["ref"]', key_profile="rfc3986")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # Used by the dedup key's profile: not idle.
        Canonicalizer("rfc3986", rules_toml='extra-tracking-params = ["ref"]')


def test_explain_canonical_and_rewrites():
    c = Canonicalizer("aggressive")
    url = "http://www.Example.com/a//b/index.html?utm_source=x&b=2&a=1&id=#frag"
    assert c.canonicalize(url) == "http://example.com/a/b/?a=1&b=2"
    assert c.explain(url) == ["fragment", "empty-query", "index-file", "www", "sort-query", "tracking",
                              "duplicate-slashes"]
    assert c.explain("http://example.com/a/") == []
    r = Canonicalizer("safe", rules_toml=(
        "rewrite = [{ regex = '/story\\?id=(\\d+)', replace = '/story_$1', id = 'story-id' },"
        " { literal = '/old/', replace = '/new/' }]"))
    assert r.canonicalize("http://example.com/old/story?id=12") == "http://example.com/new/story_12"
    assert r.explain("http://example.com/old/story?id=12") == ["rewrite", "rewrite:story-id"]
    got = c.canonical(url)
    assert got.rules == c.explain(url) and not got.unchanged


def test_canonical_components_and_offsets():
    c = Canonicalizer().canonical("https://user:pass@Example.com:8080/a/b?q=1#top")
    assert str(c) == c.url == "https://user:pass@example.com:8080/a/b?q=1#top"
    assert c == c.url and hash(c) == hash(c.url)
    assert (c.scheme, c.username, c.password, c.host, c.port) == ("https", "user", "pass", "example.com", 8080)
    assert (c.path, c.query, c.fragment, c.special, c.opaque_path) == ("/a/b", "q=1", "top", True, False)
    for name in ("scheme", "username", "password", "host", "port", "path", "query", "fragment"):
        start, end = c.span(name)
        assert c.url[start:end] == str(getattr(c, name))
    assert c.offsets["host_start"] == 18 and c.offsets["len"] == len(c.url)
    plain = Canonicalizer().canonical("mailto:x@y")
    assert (plain.host, plain.port, plain.query, plain.opaque_path) == (None, None, None, True)
    assert plain.span("host") is None and plain.offsets["host_start"] is None
    target = Canonicalizer(target=True).canonical("/a?b")
    assert (target.scheme, target.path, target.query) == (None, "/a", "b")
    assert Canonicalizer().canonical("http://a.com/").unchanged
    with pytest.raises(ValueError):
        c.span("hostname")


def test_fingerprints_dedup_keys_and_surt():
    c = Canonicalizer()
    url = "http://www.Example.com/a/?utm_medium=mail&id=7"
    assert c.canonicalize(url) == "http://www.example.com/a/?utm_medium=mail&id=7"
    assert c.dedup_key(url) == "http://example.com/a/?id=7"
    assert c.fingerprint(url) == canonurl.xxhash64(c.canonicalize(url))
    assert c.dedup_fingerprint(url) == canonurl.xxhash64("http://example.com/a/?id=7")
    assert c.fingerprint("nope") is None
    with pytest.raises(RejectError):
        c.dedup_fingerprint("nope", errors="raise")
    # XXH64 seed 42, signed, as Spark SQL's xxhash64 gives it (known values).
    assert canonurl.xxhash64("") == -7444071767201028348
    assert canonurl.xxhash64(b"http://example.com/") == canonurl.xxhash64("http://example.com/")
    assert Canonicalizer(key_profile="safe").dedup_key(url) == "http://www.example.com/a/?id=7"
    assert c.surt("http://www.archive.org/goo/?a=1") == "org,archive,www)/goo/?a=1"
    assert c.surt("http://www.archive.org/goo/?a=1", "classic") == "http://(org,archive,www,)/goo/?a=1"
    assert Canonicalizer("aggressive").surt("http://www.archive.org/goo/?a=1") == "org,archive)/goo/?a=1"
    with pytest.raises(ValueError):
        c.surt("http://a/", "ssurt")


def test_fingerprint_equals_the_command(canonurl_bin, data):
    """--key and --dedup-key's columns equal fingerprint() and dedup_key()."""
    lines = (data / "url-dataset" / "userbait.txt").read_bytes().split(b"\n")[:3000]
    proc = subprocess.run([canonurl_bin, "-f", "plain", "--pipe", "--key", "--dedup-key"],
                          input=b"\n".join(lines) + b"\n", capture_output=True, check=True)
    rows = proc.stdout.split(b"\n")[:-1]
    assert len(rows) == len(lines)
    c = Canonicalizer(target=True)
    checked = 0
    for line, row in zip(lines, rows):
        if not row:
            assert c.canonicalize(line) is None or not line.strip(b" \t")
            continue
        url, key, dedup, dedup_key = row.split(b"\t")
        assert c.canonicalize(line) == url.decode()
        assert c.fingerprint(line) == int(key)
        assert c.dedup_key(line) == (dedup.decode() or None)
        if dedup:
            assert c.dedup_fingerprint(line) == int(dedup_key)
        checked += 1
    assert checked > 2500


def test_list_rules():
    rules = canonurl.list_rules()
    assert ("fragment", "safe", rules[0][2]) == rules[0]
    assert {"www", "tracking", "lowercase-path"} <= {r[0] for r in rules}


def test_docstrings_and_version():
    assert "canonicalize" in canonurl.__doc__
    assert canonurl.__version__
    for obj in (canonurl.canonicalize, canonurl.canonicalize_many, canonurl.canonicalize_arrow,
                canonurl.xxhash64, canonurl.Canonicalizer, canonurl.Canonicalizer.canonicalize,
                canonurl.Canonicalizer.explain, canonurl.Canonical, canonurl.RejectError):
        assert obj.__doc__, obj


def test_module_docstring_examples():
    import doctest

    result = doctest.testmod(canonurl)
    assert result.attempted >= 3 and result.failed == 0
