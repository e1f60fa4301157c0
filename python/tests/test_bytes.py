"""Bytes that are not UTF-8, as the library handles them."""

import pytest

import canonurl
from canonurl import Canonicalizer, RejectError


def test_invalid_utf8_in_path_query_fragment_is_kept_as_escapes():
    c = Canonicalizer()
    assert c.canonicalize(b"http://example.com/caf\xe9?q=\xff#\x80") == "http://example.com/caf%E9?q=%FF#%80"
    assert canonurl.canonicalize(b"/caf\xe9", target=True) == "/caf%E9"
    # Valid UTF-8 gives the URL Standard's escapes.
    assert c.canonicalize("http://example.com/café") == "http://example.com/caf%C3%A9"
    assert c.canonicalize("http://example.com/café".encode()) == "http://example.com/caf%C3%A9"


def test_invalid_utf8_host_is_rejected():
    assert canonurl.canonicalize(b"http://ex\xe9mple.com/") is None
    with pytest.raises(RejectError) as e:
        canonurl.canonicalize(b"http://ex\xe9mple.com/", errors="raise")
    assert e.value.reason == "invalid-utf8-host"
    assert canonurl.canonicalize(b"http://ex%E9mple.com/") is None


def test_surrogateescape_str_stands_for_its_bytes():
    raw = b"http://example.com/caf\xe9/\xff"
    text = raw.decode("utf-8", "surrogateescape")
    c = Canonicalizer()
    assert c.canonicalize(text) == c.canonicalize(raw) == "http://example.com/caf%E9/%FF"
    assert c.canonicalize_many([text, raw]) == [c.canonicalize(raw)] * 2
    assert canonurl.xxhash64(text) == canonurl.xxhash64(raw)


def test_lone_surrogates_that_stand_for_no_byte_are_an_error():
    with pytest.raises(UnicodeEncodeError):
        canonurl.canonicalize("http://example.com/\ud800")


def test_offsets_are_bytes_of_the_utf8():
    with pytest.raises(RejectError) as e:
        canonurl.canonicalize("http://é<.com/", errors="raise")
    assert e.value.offset == len("http://é".encode())
