"""The batch and Arrow paths give what the scalar path gives, value for value."""

import random

import pyarrow as pa
import pytest

import canonurl
from canonurl import Canonicalizer

from conftest import DATASETS, url_lines


@pytest.fixture(scope="module")
def urls(data) -> list[bytes]:
    out = []
    for name in DATASETS:
        out += url_lines(data / "url-dataset" / name, 5000)
    out += url_lines(data / "url-dataset" / "wpt_urltestdata_nobase.txt")
    return out


def text(urls: list[bytes]) -> list[str]:
    return [u.decode("utf-8", "surrogateescape") for u in urls]


@pytest.mark.parametrize("profile", canonurl.PROFILES)
@pytest.mark.parametrize("target", [False, True])
def test_many_equals_scalar(urls, profile, target):
    c = Canonicalizer(profile, target=target)
    scalar = [c.canonicalize(u) for u in urls]
    assert c.canonicalize_many(urls) == scalar
    assert c.canonicalize_many(tuple(text(urls))) == scalar
    assert c.canonicalize_many(iter(urls)) == scalar
    assert canonurl.canonicalize_many(urls, profile, target=target) == scalar
    assert sum(s is not None for s in scalar) > len(urls) // 2


@pytest.mark.parametrize("output", ["url", "dedup_key", "surt", "surt_classic", "fingerprint",
                                    "dedup_fingerprint"])
def test_outputs_many_and_arrow_equal_scalar(urls, output):
    c = Canonicalizer("safe")
    one = {
        "url": c.canonicalize, "dedup_key": c.dedup_key, "surt": c.surt,
        "surt_classic": lambda u: c.surt(u, "classic"), "fingerprint": c.fingerprint,
        "dedup_fingerprint": c.dedup_fingerprint,
    }[output]
    scalar = [one(u) for u in urls]
    assert c.canonicalize_many(urls, output=output) == scalar
    got = c.canonicalize_arrow(pa.array(urls, pa.binary()), output=output)
    assert got.type == (pa.int64() if "fingerprint" in output else pa.string())
    assert got.to_pylist() == scalar


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string(), pa.string_view(), pa.binary(),
                                  pa.large_binary(), pa.binary_view()])
def test_arrow_types_nulls_and_slices(urls, kind):
    values: list = list(urls) if kind in (pa.binary(), pa.large_binary(), pa.binary_view()) else \
        [u.decode("utf-8") for u in urls if _utf8(u)]
    values[::7] = [None] * len(values[::7])
    array = pa.array(values, kind)
    c = Canonicalizer("aggressive")
    expected = [None if v is None else c.canonicalize(v) for v in values]
    got = c.canonicalize_arrow(array)
    large = kind in (pa.large_string(), pa.large_binary())
    assert got.type == (pa.large_string() if large else pa.string())
    assert got.to_pylist() == expected
    assert got.null_count == sum(e is None for e in expected)
    # A slice: the offset is honoured.
    assert c.canonicalize_arrow(array.slice(101, 500)).to_pylist() == expected[101:601]
    # Chunked arrays keep their chunks.
    chunked = pa.chunked_array([array.slice(0, 1000), array.slice(1000)])
    out = canonurl.canonicalize_arrow(chunked, "aggressive")
    assert isinstance(out, pa.ChunkedArray) and out.num_chunks == 2
    assert out.to_pylist() == expected


def _utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_arrow_input_is_not_copied():
    array = pa.array(["http://Example.com/a/./b"] * 1000)
    data_buffer = array.buffers()[2]
    assert canonurl._canonurl._import_address(array) == data_buffer.address
    sliced = array.slice(10, 20)
    assert canonurl._canonurl._import_address(sliced) == data_buffer.address


def test_arrow_export_and_errors():
    c = Canonicalizer()
    raw = c._canonicalize_arrow(pa.array(["http://A.com/", "no"]))
    assert isinstance(raw, canonurl.ArrowArray)
    assert (len(raw), raw.null_count, raw.type_name) == (2, 1, "Utf8")
    # Exported twice (shared buffers), imported by pyarrow both times.
    assert pa.array(raw).to_pylist() == pa.array(raw).to_pylist() == ["http://a.com/", None]
    with pytest.raises(TypeError, match="cast it first"):
        c.canonicalize_arrow(pa.array([1, 2]))
    with pytest.raises(TypeError, match="__arrow_c_array__"):
        c.canonicalize_arrow(["http://a.com/"])
    empty = canonurl.canonicalize_arrow(pa.chunked_array([], pa.string()))
    assert empty.type == pa.string() and len(empty) == 0
    assert canonurl.canonicalize_arrow(pa.array([], pa.string())).to_pylist() == []


def test_random_bytes_batch_equals_scalar_and_is_ascii():
    rng = random.Random(16)
    alphabet = b"htps:/.%~?#[]@!$&'()*+,;=-_ aAzZ09\t\\\x00\x7f\x80\xc3\xa9\xff\xe2\x82"
    urls = []
    for _ in range(20000):
        head = rng.choice([b"http://", b"https://h", b"/", b"", b"file:", b"a:"])
        urls.append(head + bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 30))))
    for profile in canonurl.PROFILES:
        c = Canonicalizer(profile, target=True)
        scalar = [c.canonicalize(u) for u in urls]
        assert c.canonicalize_many(urls) == scalar
        assert c.canonicalize_arrow(pa.array(urls, pa.binary())).to_pylist() == scalar
        assert all(s.isascii() for s in scalar if s is not None)
        # Idempotent: a canonical URL is its own canonical form.
        assert c.canonicalize_many([s for s in scalar if s]) == [s for s in scalar if s]
