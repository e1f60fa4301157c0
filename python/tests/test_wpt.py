"""The WHATWG URL web-platform-tests (urltestdata.json) through the Python API.

Every case runs as ``new URL(input, base)`` would, through
``Canonicalizer("whatwg", base=...).canonical(input)``: the href and every
component getter are compared. The cases that fail must be exactly the Rust
side's known failures (tests/wpt_known_failures.txt, kept by tests/wpt.rs),
so that the binding neither loses nor hides a case.
"""

import json
import re

import pytest

import canonurl

from conftest import ROOT

SPECIAL = {"http", "https", "ws", "wss", "ftp", "file"}


def rust_debug_string(text: str) -> str:
    """Parses a Rust `{:?}` string literal (`"a\\tb\\u{7f}"`)."""
    assert text.startswith('"') and text.endswith('"'), text
    out, i, body = [], 0, text[1:-1]
    simple = {"t": "\t", "n": "\n", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = body[i + 1]
        if n == "u":
            m = re.match(r"u\{([0-9a-fA-F]+)\}", body[i + 1:])
            out.append(chr(int(m.group(1), 16)))
            i += 1 + m.end()
        else:
            out.append(simple[n])
            i += 2
    return "".join(out)


def known_failures() -> set[tuple[str, str | None]]:
    cases = set()
    for line in (ROOT / "tests" / "wpt_known_failures.txt").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        input_, base, _reason = line.split("\t", 2)
        cases.add((rust_debug_string(input_), None if base == "null" else rust_debug_string(base)))
    return cases


def usv(s: str | None) -> str | None:
    """What new URL() receives: lone surrogates become U+FFFD."""
    if s is None:
        return None
    return s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def getters(c: canonurl.Canonical) -> dict[str, str]:
    host = c.host or ""
    port = "" if c.port is None else str(c.port)
    return {
        "href": c.url,
        "protocol": f"{c.scheme}:",
        "username": c.username or "",
        "password": c.password or "",
        "host": f"{host}:{port}" if port else host,
        "hostname": host,
        "port": port,
        "pathname": c.path,
        "search": f"?{c.query}" if c.query else "",
        "hash": f"#{c.fragment}" if c.fragment else "",
    }


def run_case(case: dict, input_: str, base: str | None) -> str | None:
    """None when the case passes, else what differs."""
    failure = case.get("failure", False)
    try:
        c = canonurl.Canonicalizer("whatwg", base=base)
    except ValueError as e:
        return None if failure else f"base rejected: {e}"
    try:
        result = c.canonical(input_)
    except canonurl.RejectError as e:
        assert e.reason and isinstance(e.offset, int)
        return None if failure else f"rejected: {e}"
    if failure:
        return f"expected failure, got {result.url}"
    if result.special != (result.scheme in SPECIAL):
        return f"special {result.special} for {result.scheme}"
    if result.unchanged != (result.url == input_):
        return f"unchanged {result.unchanged}"
    got = getters(result)
    for name, value in got.items():
        if case[name] != value:
            return f"{name}: expected {case[name]!r}, got {value!r}"
    # The module-level function and the batch call agree with the object.
    assert canonurl.canonicalize(input_, "whatwg", base=base) == result.url
    assert c.canonicalize_many([input_, input_.encode("utf-8")]) == [result.url] * 2
    return None


def test_urltestdata(data):
    failing = {}
    total = 0
    for name in ("urltestdata.json", "urltestdata-javascript-only.json"):
        cases = json.loads((data / "wpt-url" / name).read_text(encoding="utf-8"))
        for case in cases:
            if isinstance(case, str):
                continue
            input_, base = usv(case["input"]), usv(case.get("base"))
            total += 1
            why = run_case(case, input_, base)
            if why is not None:
                failing[(input_, base)] = why
    assert total >= 800, f"only {total} cases read"
    known = known_failures()
    unexpected = {k: v for k, v in failing.items() if k not in known}
    fixed = known - set(failing)
    assert not unexpected, f"{len(unexpected)} cases fail that Rust passes: {list(unexpected.items())[:5]}"
    assert not fixed, f"known failures that pass in Python: {sorted(fixed)[:5]}"
    print(f"urltestdata: {total} cases, {len(failing)} known failures, as the Rust side")


@pytest.mark.parametrize("profile", canonurl.PROFILES)
def test_wpt_nobase_list_equals_expected(data, profile):
    """url-dataset's WPT list: batch equals scalar in every profile, and whatwg its .expected."""
    lines = (data / "url-dataset" / "wpt_urltestdata_nobase.txt").read_bytes().split(b"\n")[:-1]
    batch = canonurl.canonicalize_many(lines, profile)
    assert batch == [canonurl.canonicalize(u, profile) for u in lines]
