"""No leak over a long loop: the resident set stays put once the buffers are warm."""

import gc

import pyarrow as pa

import canonurl
from canonurl import Canonicalizer, RejectError


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


URLS = [
    "HTTP://Example.COM:80/a/./b/../%7euser?q=%2f&utm_source=x#Top",
    b"http://example.com/caf\xe9?q=\xff",
    "http://BÜCHER.example/x",
    "http://exa<mple.com/",
    "/a/../b?c=%7e",
    "https://www.example.com/shop/index.html?b=2&a=1",
]


def work(c: Canonicalizer, batch: list, array: pa.Array) -> None:
    for u in URLS:
        c.canonicalize(u)
        c.fingerprint(u)
        c.dedup_key(u)
        c.surt(u)
        try:
            c.canonical(u).host
            c.explain(u)
        except RejectError:
            pass
        canonurl.canonicalize(u, "aggressive")
    c.canonicalize_many(batch)
    c.canonicalize_arrow(array)
    canonurl.canonicalize_arrow(array, output="fingerprint")


def test_rss_does_not_grow_over_a_long_loop():
    c = Canonicalizer("aggressive", target=True)
    batch = URLS * 200
    array = pa.array([u if isinstance(u, bytes) else u.encode() for u in batch], pa.binary())
    for _ in range(300):  # warm the buffers, the pools and the allocator
        work(c, batch, array)
    gc.collect()
    before = rss_kib()
    for _ in range(1000):  # about 3.6 million canonicalizations, most through the batch paths
        work(c, batch, array)
    gc.collect()
    grown = rss_kib() - before
    print(f"RSS grew by {grown} KiB over 1000 rounds")
    # A leak of one small allocation per URL would be hundreds of MiB here.
    assert grown < 8 * 1024, f"RSS grew by {grown} KiB"


def test_many_canonicalizers_are_freed():
    gc.collect()
    for _ in range(200):
        Canonicalizer("aggressive", rules_toml='extra-tracking-params = ["ref"]').canonicalize(URLS[0])
    gc.collect()
    before = rss_kib()
    for _ in range(3000):
        Canonicalizer("aggressive", rules_toml='extra-tracking-params = ["ref"]').canonicalize(URLS[0])
    gc.collect()
    assert rss_kib() - before < 8 * 1024
