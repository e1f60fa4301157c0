#!/usr/bin/env python3
"""Writes seed corpora for the fuzz targets from the shared test data.

URL seeds: the inputs of the WPT URL vectors (urltestdata.json, toascii.json
as hosts) and a sample of the url-dataset lists, one file each, for every
target.

Log seeds (no_panic, conservation): real log lines and chunks of consecutive
lines from ../shared/data/logs-*/ (gzip files decompressed here), each with
the two configuration bytes the target reads first: once for the file's own
format and once for a configuration picked at random (for conservation, half
of those are format detection). A chunk from the middle of a W3C log gets the
`#Fields:` line in effect there put in front.

summary_merge seeds: random inputs of 4 to 200 records, half of them of each
log shape the target builds (it takes no data from the shared directory).

Everything goes to fuzz/corpus/<target>/ (ignored by git); nothing from the
shared data is committed: run this before fuzzing. Deterministic: the same
data gives the same seeds.

usage: fuzz/seed.py [SHARED_DATA_DIR]   (default ../shared/data, or
       $CANONURL_SHARED_DATA)
"""
import glob
import gzip
import hashlib
import json
import os
import random
import sys

here = os.path.dirname(os.path.abspath(__file__))
data = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
    "CANONURL_SHARED_DATA", os.path.join(here, "..", "..", "shared", "data"))
if not os.path.isdir(data):
    sys.exit(f"seed.py: {data} not found; pass the shared data directory")

rng = random.Random(5)

# --- URL seeds ---------------------------------------------------------------

seeds = []
with open(os.path.join(data, "wpt-url", "urltestdata.json"), encoding="utf-8") as f:
    for case in json.load(f):
        if isinstance(case, dict):
            seeds.append(case["input"].encode("utf-8", "surrogatepass"))
with open(os.path.join(data, "wpt-url", "toascii.json"), encoding="utf-8") as f:
    for case in json.load(f):
        if isinstance(case, dict):
            seeds.append(("https://" + case["input"] + "/x").encode("utf-8", "surrogatepass"))
for name in ["kasztp.txt", "userbait.txt", "node_files.txt", "isaacs_files.txt"]:
    with open(os.path.join(data, "url-dataset", name), "rb") as f:
        lines = f.read().split(b"\n")
    seeds.extend(lines[:: max(1, len(lines) // 300)])

# --- log seeds ---------------------------------------------------------------

# The configuration index of each format: no_panic reads
# `(data[0] | data[1] << 8) % 13` (0-8: LogFormat::ALL, JSON with nginx
# paths; 9 caddy; 10 traefik; 11 custom; 12 paths from the first line),
# conservation reads `(data[0] | data[1] << 8) % 13` (0: detect; 1-9:
# LogFormat::ALL; 10-12: JSON nginx, caddy, traefik).
FORMATS = ["plain", "common", "combined", "vhost", "w3c", "cloudfront", "alb",
           "json", "haproxy"]
NO_PANIC = {f: i for i, f in enumerate(FORMATS)} | {
    "json-nginx": 7, "json-caddy": 9, "json-traefik": 10}
CONSERVATION = {f: i + 1 for i, f in enumerate(FORMATS)} | {
    "auto": 0, "json-nginx": 10, "json-caddy": 11, "json-traefik": 12}


def format_of(path):
    """The format of a shared log file, from its name (None: let detection decide)."""
    name = os.path.basename(path)
    for key, fmt in [("cloudfront", "cloudfront"), ("elb", "alb"), ("traefik", "json-traefik"),
                     ("caddy", "json-caddy"), ("haproxy", "haproxy"), ("W3SVC", "w3c"),
                     ("w3c", "w3c"), ("bro_http", "auto"), ("regexp", "auto"),
                     ("syslog", "auto")]:
        if key in name:
            return fmt
    return "combined"


def read_log(path):
    with open(path, "rb") as f:
        raw = f.read()
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


MAX_CHUNK = 3000  # below libFuzzer's default -max_len of 4096
log_seeds = []  # (format, bytes)
for path in sorted(glob.glob(os.path.join(data, "logs-*", "*"))):
    if not os.path.isfile(path):
        continue
    fmt = format_of(path)
    lines = read_log(path).split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    # The `#Fields:` line in effect at each line.
    fields, in_effect = None, []
    for line in lines:
        if line.lstrip(b"\xef\xbb\xbf").lower().startswith(b"#fields:"):
            fields = line
        in_effect.append(fields)
    # Single lines, spread over the file.
    for i in range(0, len(lines), max(1, len(lines) // 25)):
        if len(lines[i]) <= MAX_CHUNK:
            head = in_effect[i] + b"\n" if in_effect[i] and in_effect[i] != lines[i] else b""
            log_seeds.append((fmt, head + lines[i] + b"\n"))
    # Chunks of consecutive lines: the start of the file (its headers), then
    # chunks from evenly spaced places.
    starts = [0] + [rng.randrange(len(lines)) for _ in range(8)] if lines else []
    for start in starts:
        head = in_effect[start] + b"\n" if start and in_effect[start] else b""
        chunk = bytearray(head)
        for line in lines[start:]:
            if len(chunk) + len(line) + 1 > MAX_CHUNK:
                break
            chunk += line + b"\n"
        if len(chunk) > len(head):
            log_seeds.append((fmt, bytes(chunk)))
            # A variant without the last line end.
            log_seeds.append((fmt, bytes(chunk[:-1])))


def write(target, bodies):
    out = os.path.join(here, "corpus", target)
    os.makedirs(out, exist_ok=True)
    for body in bodies:
        with open(os.path.join(out, hashlib.sha1(body).hexdigest()), "wb") as f:
            f.write(body)
    print(f"{target}: {len(bodies)} seeds in {out}")


def no_panic_cfg(fmt):
    """Two configuration bytes whose format index is `fmt`'s (random otherwise)."""
    rest = rng.randrange(65536 // 13)
    index = NO_PANIC.get(fmt, rng.randrange(13))
    cfg = rest * 13 + index
    return bytes([cfg & 0xFF, cfg >> 8])


def conservation_cfg(fmt):
    """Two configuration bytes whose format index is `fmt`'s."""
    cfg = CONSERVATION[fmt] + 13 * rng.randrange(65536 // 13)
    return bytes([cfg & 0xFF, cfg >> 8])


# no_panic: the selector byte, then the URL (as before); log chunks after two
# configuration bytes, for the file's format and for a random one.
bodies = [(bytes([s[0] if s else 0]) + s) for s in seeds]
for fmt, chunk in log_seeds:
    bodies.append(no_panic_cfg(fmt) + chunk)
    bodies.append(bytes([rng.randrange(256), rng.randrange(256)]) + chunk)
write("no_panic", bodies)

for target in ["idempotent", "whatwg_differential"]:
    write(target, seeds)

# conservation: log chunks with their format, with detection, and with a
# random configuration; a few URL lists as `plain` logs.
bodies = []
for fmt, chunk in log_seeds:
    bodies.append(conservation_cfg(fmt) + chunk)
    bodies.append(conservation_cfg("auto") + chunk)
    bodies.append(bytes([rng.randrange(256)]) + chunk)
for i in range(0, len(seeds), 40):
    bodies.append(conservation_cfg("plain") + b"\n".join(seeds[i:i + 40]) + b"\n")
write("conservation", bodies)

# summary_merge: no data to take from (the target builds its logs from the
# bytes); random inputs long enough for tens to hundreds of records, half of
# each shape (`data[1]` bit 2: `vhost` or `combined`), so that the runs do not
# start from inputs of a few bytes. Their own generator: the seeds above stay
# as they were.
sm = random.Random(31)
bodies = []
for i in range(64):
    records = sm.randrange(4, 200)
    shape = 4 if i % 2 else 0
    head = bytes([sm.randrange(256), (sm.randrange(256) & ~4) | shape])
    bodies.append(head + bytes(sm.randrange(256) for _ in range(6 * records)))
write("summary_merge", bodies)
