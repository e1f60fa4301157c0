#!/usr/bin/env python3
"""Writes seed corpora for the fuzz targets from the shared test data.

The inputs of the WPT URL vectors (urltestdata.json, toascii.json as hosts)
and a sample of the url-dataset lists become one file each in
fuzz/corpus/<target>/. Nothing from ../shared/data is committed: run this
before fuzzing.

usage: fuzz/seed.py [SHARED_DATA_DIR]   (default ../shared/data, or
       $CANONURL_SHARED_DATA)
"""
import hashlib
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
data = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
    "CANONURL_SHARED_DATA", os.path.join(here, "..", "..", "shared", "data"))
if not os.path.isdir(data):
    sys.exit(f"seed.py: {data} not found; pass the shared data directory")

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

for target in ["no_panic", "idempotent", "whatwg_differential"]:
    out = os.path.join(here, "corpus", target)
    os.makedirs(out, exist_ok=True)
    for s in seeds:
        # no_panic reads a selector byte first: vary it across seeds.
        body = (bytes([s[0] if s else 0]) + s) if target == "no_panic" else s
        with open(os.path.join(out, hashlib.sha1(body).hexdigest()), "wb") as f:
            f.write(body)
    print(f"{target}: {len(seeds)} seeds in {out}")
