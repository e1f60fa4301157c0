"""canonurl: fast URL canonicalization, for Python, Arrow, PySpark, Polars and DuckDB.

One canonical form for every spelling of a URL, so that URLs from access logs,
crawls and referrers can be deduplicated, counted and joined::

    >>> import canonurl
    >>> canonurl.canonicalize("HTTP://Example.COM:80/a/./b/../%7euser?q=%2f")
    'http://example.com/a/~user?q=%2F'
    >>> canonurl.canonicalize("https://WWW.Example.com/shop/index.html?utm_source=x#top",
    ...                       profile="aggressive")
    'https://example.com/shop/'
    >>> canonurl.canonicalize("http://exa<mple.com/") is None
    True

Profiles, from the most faithful: ``whatwg`` (the URL Standard's href),
``rfc3986`` (the default: also RFC 3986 normalization that keeps the meaning),
``safe`` and ``aggressive`` (also the dedup rules; ``list_rules()``).

- :func:`canonicalize` for one URL, :class:`Canonicalizer` to parse a base URL
  and rules once and for the other outputs (dedup key, fingerprint, SURT,
  explanations, :class:`Canonical` with component offsets);
- :func:`canonicalize_many` for a list in one call;
- :func:`canonicalize_arrow` for Arrow arrays (pyarrow, Polars, DuckDB,
  PySpark's Arrow UDFs), read without a copy through the Arrow C data
  interface, without the GIL.

A URL is ``str`` or ``bytes``. Bytes need not be UTF-8: bytes of 0x80 and above
in the path, query, fragment and userinfo are percent-encoded as themselves
(``b"/caf\\xe9"`` becomes ``/caf%E9``); a host that is not UTF-8 is rejected.
A ``str`` with lone surrogates from ``errors="surrogateescape"`` decoding stands
for the bytes it was decoded from.

A rejected URL gives ``None`` (a null in Arrow), or with ``errors="raise"`` a
:class:`RejectError` that says why and where.
"""

from __future__ import annotations

from typing import Any

from ._canonurl import (
    PROFILES,
    ArrowArray,
    Canonical,
    Canonicalizer,
    __version__,
    _canonicalize_arrow,
    _set_reject_error,
    canonicalize,
    canonicalize_many,
    list_rules,
    xxhash64,
)

__all__ = [
    "PROFILES",
    "ArrowArray",
    "Canonical",
    "Canonicalizer",
    "RejectError",
    "__version__",
    "canonicalize",
    "canonicalize_arrow",
    "canonicalize_many",
    "list_rules",
    "xxhash64",
]


class RejectError(ValueError):
    """A URL canonurl rejects: not a URL by the WHATWG URL Standard, or too long.

    ``str(e)`` reads like ``forbidden domain code point '<' at byte 10``.

    Attributes:
        reason: a short, stable name of the reason (``"forbidden-domain-code-point"``,
            ``"missing-scheme"``, ``"invalid-ipv4"``, ...), as in ``canonurl``'s
            statistics and TSV output.
        offset: the byte offset in the input (its UTF-8 for a ``str``) where the
            problem was found.
    """

    reason: str
    offset: int

    def __init__(self, message: str, reason: str, offset: int) -> None:
        super().__init__(message)
        self.reason = reason
        self.offset = offset

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.reason, self.offset))


_set_reject_error(RejectError)


def _to_pyarrow(result: ArrowArray) -> Any:
    try:
        import pyarrow as pa
    except ImportError:  # no pyarrow: the PyCapsule object itself
        return result
    return pa.array(result)


def _chunks(array: Any) -> list[Any] | None:
    """The chunks of a chunked array (pyarrow's), or None for a plain array."""
    chunks = getattr(array, "chunks", None)
    if chunks is not None and not hasattr(array, "__arrow_c_array__"):
        return list(chunks)
    return None


def canonicalize_arrow(
    array: Any,
    profile: str = "rfc3986",
    base: str | None = None,
    rules: str | list[str] | None = None,
    *,
    rules_file: Any = None,
    target: bool = False,
    output: str = "url",
    canonicalizer: Canonicalizer | None = None,
) -> Any:
    """Canonicalizes an Arrow array of URLs: one call, no Python per URL.

    ``array`` is a ``pyarrow.Array`` or ``pyarrow.ChunkedArray`` of ``string``,
    ``large_string``, ``string_view``, ``binary``, ``large_binary`` or
    ``binary_view``, or any object with ``__arrow_c_array__`` (the Arrow PyCapsule
    protocol). Its buffers are read in place (the Arrow C data interface), and
    the GIL is released while the URLs are canonicalized.

    The result has one value per input value, null where the input is null or
    the URL is rejected: ``string`` (``large_string`` for 64-bit offset input),
    or ``int64`` for ``output="fingerprint"``/``"dedup_fingerprint"``. It is a
    ``pyarrow.Array`` (``pyarrow.ChunkedArray`` for chunked input) when pyarrow
    is installed, else an :class:`ArrowArray` (``__arrow_c_array__``).

    ``output`` is one of ``"url"``, ``"dedup_key"``, ``"surt"``,
    ``"surt_classic"``, ``"fingerprint"`` (XXH64 seed 42 of the URL: Spark's
    ``xxhash64``, ``canonurl --key``) and ``"dedup_fingerprint"``.
    ``canonicalizer`` uses a :class:`Canonicalizer` instead of the other settings.
    """
    def one(chunk: Any) -> ArrowArray:
        if canonicalizer is not None:
            return canonicalizer._canonicalize_arrow(chunk, output=output)
        return _canonicalize_arrow(
            chunk, profile, base, rules, rules_file=rules_file, target=target, output=output
        )

    chunks = _chunks(array)
    if chunks is None:
        return _to_pyarrow(one(array))
    import pyarrow as pa

    out = [pa.array(one(c)) for c in chunks]
    if out:
        return pa.chunked_array(out)
    kind = pa.int64() if output in ("fingerprint", "dedup_fingerprint") else pa.string()
    return pa.chunked_array([], type=kind)


def _arrow_method(self: Canonicalizer, array: Any, *, output: str = "url") -> Any:
    """Canonicalizes an Arrow array with this canonicalizer: see :func:`canonicalize_arrow`."""
    return canonicalize_arrow(array, output=output, canonicalizer=self)


Canonicalizer.canonicalize_arrow = _arrow_method  # type: ignore[attr-defined]
