#!/usr/bin/env python3
"""canonurl's Python package beside the Python URL normalizers, per URL, on the url-dataset files.

    pip install -r python/requirements-bench.txt   # the peers
    python python/bench.py [--urls 20000] [--repeat 5] [--data ../shared/data]

Each contender runs over the first N lines of each file (as ``str``), once to
warm up and then ``--repeat`` times; the best time is kept (the machine may be
shared), divided by the number of URLs. The peers are called one URL at a
time, as their APIs offer; a call that raises counts like one that returns.

- ``w3lib.url.canonicalize_url`` (Scrapy's), ``courlan.normalize_url``,
  ``url_normalize.url_normalize``, ``ada_url.normalize_url`` (WHATWG href,
  ada's binding), ``str(yarl.URL(u))``;
- canonurl: the module function ``canonurl.canonicalize(u)`` and the method
  ``Canonicalizer.canonicalize(u)`` (scalar, one Python call per URL),
  ``canonicalize_many(list)`` (one call), ``canonicalize_arrow`` on a
  ``pyarrow.Array`` (one call; the array made beforehand, and, in the last row,
  made from the list inside the timing).

Prints a Markdown table (microseconds per URL, and each contender's speed-up
over ada-url's binding) and a bar chart of the speed-ups.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import canonurl

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = ["kasztp.txt", "userbait.txt", "isaacs_files.txt", "node_files.txt"]


def swallow(f):
    def g(u):
        try:
            return f(u)
        except Exception:  # a peer's rejection is its answer
            return None
    return g


def contenders():
    """(name, kind, prepare(urls) -> arg, run(arg)): kind is 'each' (called per URL) or 'batch'."""
    out = []
    try:
        from w3lib.url import canonicalize_url
        out.append(("w3lib canonicalize_url", "each", swallow(canonicalize_url)))
    except ImportError:
        pass
    try:
        from courlan import normalize_url
        out.append(("courlan normalize_url", "each", swallow(normalize_url)))
    except ImportError:
        pass
    try:
        from url_normalize import url_normalize
        out.append(("url-normalize", "each", swallow(url_normalize)))
    except ImportError:
        pass
    try:
        import ada_url
        out.append(("ada-url normalize_url", "each", swallow(ada_url.normalize_url)))
    except ImportError:
        pass
    try:
        import yarl
        out.append(("yarl str(URL(u))", "each", swallow(lambda u: str(yarl.URL(u)))))
    except ImportError:
        pass
    out.append(("canonurl.canonicalize(u)", "each", canonurl.canonicalize))
    c = canonurl.Canonicalizer()
    out.append(("Canonicalizer.canonicalize(u)", "each", c.canonicalize))
    out.append(("Canonicalizer.canonicalize_many(list)", "batch", (lambda urls: urls, c.canonicalize_many)))
    try:
        import pyarrow as pa
        out.append(("canonicalize_arrow(pa.Array)", "batch", (pa.array, c.canonicalize_arrow)))
        out.append(("pa.array(list) + canonicalize_arrow", "batch",
                    (lambda urls: urls, lambda urls: c.canonicalize_arrow(pa.array(urls)))))
    except ImportError:
        pass
    return out


def time_one(kind, f, urls, repeat):
    if kind == "each":
        def run():
            for u in urls:
                f(u)
        arg = None
    else:
        prepare, call = f
        arg = prepare(urls)

        def run():
            call(arg)
    run()  # warm-up
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t)
    return best / len(urls) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--urls", type=int, default=20000, help="URLs per file (default 20000)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data", default=os.environ.get("CANONURL_SHARED_DATA")
                    or os.path.join(HERE, "..", "..", "shared", "data"))
    args = ap.parse_args()
    datasets = {}
    for name in FILES:
        path = os.path.join(args.data, "url-dataset", name)
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            datasets[name] = [line.rstrip("\r\n") for line in f][: args.urls]
    results = {}
    for label, kind, f in contenders():
        results[label] = [time_one(kind, f, urls, args.repeat) for urls in datasets.values()]
        print(f"{label}: " + ", ".join(f"{t:.3f}" for t in results[label]), file=sys.stderr, flush=True)

    ada = results.get("ada-url normalize_url")
    names = list(datasets)
    print(f"µs per URL, best of {args.repeat}, first {args.urls} lines of each url-dataset file; "
          f"Python {platform.python_version()}, canonurl {canonurl.__version__}, {os.cpu_count()} cores\n")
    head = "| | " + " | ".join(f"`{n}`" for n in names) + (" | × ada-url (mean) |" if ada else " |")
    print(head)
    print("|" + "---|" * (len(names) + 1 + bool(ada)))
    speedups = {}
    for label, times in results.items():
        row = f"| {label} | " + " | ".join(f"{t:.3f}" for t in times)
        if ada:
            speedups[label] = sum(a / t for a, t in zip(ada, times)) / len(times)
            row += f" | {speedups[label]:.1f}×"
        print(row + " |")
    if ada:
        print("\nSpeed-up over ada-url's binding (mean over the files), log scale:\n\n```text")
        import math
        top = max(math.log10(max(s, 1e-9)) for s in speedups.values())
        low = min(0.0, min(math.log10(max(s, 1e-9)) for s in speedups.values()))
        for label, s in speedups.items():
            width = int(round(40 * (math.log10(s) - low) / (top - low))) if top > low else 0
            print(f"{label:<38} {'#' * max(width, 1)} {s:.2f}×")
        print("```")


if __name__ == "__main__":
    main()
