"""Type stubs of the Rust extension canonurl._canonurl (re-exported by canonurl)."""

import os
from collections.abc import Iterable, Sequence
from typing import Any, Literal, overload

_Url = str | bytes
_Profile = Literal["whatwg", "rfc3986", "safe", "aggressive"]
_Rules = str | Sequence[str] | None
_Errors = Literal["null", "raise"]
_TextOutput = Literal["url", "dedup_key", "surt", "surt_classic"]
_NumberOutput = Literal["fingerprint", "dedup_fingerprint"]
_Output = _TextOutput | _NumberOutput

PROFILES: list[str]
__version__: str

class Canonical:
    """One canonical URL and where its components lie in it.

    Canonical URLs are ASCII, so byte offsets are character offsets.
    ``str(c)`` is the URL; a ``Canonical`` equals its URL as a ``str``.
    """

    @property
    def url(self) -> str:
        """The canonical URL."""
    @property
    def unchanged(self) -> bool:
        """The canonical URL is the input, byte for byte."""
    @property
    def rules(self) -> list[str]:
        """The dedup rules that changed the URL, as ``Canonicalizer.explain`` gives them."""
    @property
    def scheme(self) -> str | None:
        """The scheme without ``:`` (``None`` for a path-only request target)."""
    @property
    def username(self) -> str | None: ...
    @property
    def password(self) -> str | None: ...
    @property
    def host(self) -> str | None:
        """The serialized host (an IPv6 address in brackets); ``None`` when null."""
    @property
    def port(self) -> int | None:
        """The port, ``None`` when absent or the scheme's default."""
    @property
    def path(self) -> str: ...
    @property
    def query(self) -> str | None:
        """The query without ``?``; ``None`` when there is none."""
    @property
    def fragment(self) -> str | None:
        """The fragment without ``#``; ``None`` when there is none."""
    @property
    def special(self) -> bool:
        """The scheme is special (http, https, ws, wss, ftp, file)."""
    @property
    def opaque_path(self) -> bool:
        """The URL has an opaque path (``mailto:x``)."""
    @property
    def offsets(self) -> dict[str, int | None]:
        """The library's ``Parts`` offsets (``scheme_end``, ``host_start``, ...; ``None``: absent)."""
    def span(
        self,
        name: Literal["scheme", "username", "password", "host", "port", "path", "query", "fragment"],
    ) -> tuple[int, int] | None:
        """``(start, end)`` of a component in ``url`` (without its ``?``/``#``/``:``), or ``None``."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class ArrowArray:
    """An Arrow array made by canonurl, exported through ``__arrow_c_array__``.

    ``pyarrow.array(a)`` and ``polars.Series(a)`` import it without a copy.
    """

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]: ...
    def __len__(self) -> int: ...
    @property
    def null_count(self) -> int: ...
    @property
    def type_name(self) -> str: ...

class Canonicalizer:
    """A profile, an optional base URL and dedup rules, parsed once.

    Args:
        profile: ``"whatwg"``, ``"rfc3986"`` (default), ``"safe"`` or ``"aggressive"``.
        base: a base URL that relative references resolve against (``--base``).
        rules: edits of the dedup rules as for ``canonurl --rule``: one string
            (``"-www,+lowercase-path,trailing-slash=keep"``) or a list of them.
        rules_file: a TOML rules file (``canonurl --rules FILE``), read once.
        rules_toml: the same, as text.
        key_profile: the profile of ``dedup_key``/``dedup_fingerprint``
            (``--key-profile``, default ``"aggressive"``), with the same rules.
        target: request-target mode, as ``canonurl -f plain`` reads a line: an
            origin-form target (``/a/b?c``) without a base is written path and
            query only, instead of being rejected.

    A bad profile, base, rule edit or rules file raises ``ValueError``; a setting
    of the rules file that tunes a rule that is off gives a ``RuntimeWarning``.
    One object may be used from many threads at once.
    """

    def __init__(
        self,
        profile: _Profile = "rfc3986",
        base: str | None = None,
        rules: _Rules = None,
        *,
        rules_file: str | os.PathLike[str] | None = None,
        rules_toml: str | None = None,
        key_profile: _Profile = "aggressive",
        target: bool = False,
    ) -> None: ...
    @property
    def profile(self) -> str: ...
    @property
    def key_profile(self) -> str: ...
    @property
    def base(self) -> str | None:
        """The base URL's WHATWG href."""
    @property
    def target(self) -> bool: ...
    @property
    def rules(self) -> list[str]:
        """The names of the dedup rules that are on (for some host)."""
    @overload
    def canonicalize(self, url: _Url, *, errors: Literal["null"] = "null") -> str | None: ...
    @overload
    def canonicalize(self, url: _Url, *, errors: Literal["raise"]) -> str: ...
    def canonicalize(self, url: _Url, *, errors: _Errors = "null") -> str | None:
        """The canonical URL; ``None`` (or ``RejectError`` with ``errors="raise"``) when rejected."""
    def dedup_key(self, url: _Url, *, errors: _Errors = "null") -> str | None:
        """The URL canonicalized with ``key_profile`` and the same rules (``--dedup-key``)."""
    def fingerprint(self, url: _Url, *, errors: _Errors = "null") -> int | None:
        """XXH64 seed 42 of the canonical URL, signed: ``canonurl --key``, Spark's ``xxhash64``."""
    def dedup_fingerprint(self, url: _Url, *, errors: _Errors = "null") -> int | None:
        """XXH64 seed 42 of the dedup key (``--dedup-key``'s last column)."""
    def surt(
        self, url: _Url, form: Literal["cdx", "classic"] = "cdx", *, errors: _Errors = "null"
    ) -> str | None:
        """The canonical URL in SURT form (``--surt``): ``org,archive,www)/goo/?a=1``."""
    def canonical(self, url: _Url) -> Canonical:
        """The canonical URL with its components; raises ``RejectError``."""
    def explain(self, url: _Url) -> list[str]:
        """The dedup rules that changed the URL (``--explain``); raises ``RejectError``."""
    @overload
    def canonicalize_many(
        self, urls: Iterable[_Url], *, output: _TextOutput = "url", errors: _Errors = "null"
    ) -> list[str | None]: ...
    @overload
    def canonicalize_many(
        self, urls: Iterable[_Url], *, output: _NumberOutput, errors: _Errors = "null"
    ) -> list[int | None]: ...
    def canonicalize_many(
        self, urls: Iterable[_Url], *, output: _Output = "url", errors: _Errors = "null"
    ) -> list[Any]:
        """One result per URL, in one call (a list or tuple is read without an iterator)."""
    def canonicalize_arrow(self, array: Any, *, output: _Output = "url") -> Any:
        """See ``canonurl.canonicalize_arrow``."""
    def _canonicalize_arrow(self, array: Any, *, output: _Output = "url") -> ArrowArray: ...

@overload
def canonicalize(
    url: _Url,
    profile: _Profile = "rfc3986",
    base: str | None = None,
    rules: _Rules = None,
    *,
    rules_file: str | os.PathLike[str] | None = None,
    target: bool = False,
    errors: Literal["null"] = "null",
) -> str | None: ...
@overload
def canonicalize(
    url: _Url,
    profile: _Profile = "rfc3986",
    base: str | None = None,
    rules: _Rules = None,
    *,
    rules_file: str | os.PathLike[str] | None = None,
    target: bool = False,
    errors: Literal["raise"],
) -> str: ...
def canonicalize_many(
    urls: Iterable[_Url],
    profile: _Profile = "rfc3986",
    base: str | None = None,
    rules: _Rules = None,
    *,
    rules_file: str | os.PathLike[str] | None = None,
    target: bool = False,
    output: _Output = "url",
    errors: _Errors = "null",
) -> list[Any]:
    """One result per URL in one call: ``str`` (``int`` for fingerprints) or ``None``."""

def _canonicalize_arrow(
    array: Any,
    profile: _Profile = "rfc3986",
    base: str | None = None,
    rules: _Rules = None,
    *,
    rules_file: str | os.PathLike[str] | None = None,
    target: bool = False,
    output: _Output = "url",
) -> ArrowArray: ...
def xxhash64(data: _Url) -> int:
    """XXH64 seed 42 of the bytes (a ``str``'s UTF-8), signed: Spark SQL's ``xxhash64``."""

def list_rules() -> list[tuple[str, str, str]]:
    """The dedup rules: ``(name, tier, what it does)``."""

def _set_reject_error(cls: type) -> None: ...
def _import_address(array: Any) -> int: ...
