#!/usr/bin/env python3
"""Scores dedup keys against the truth of data/gen-dust-site.py: of the URL
pairs that get one key, how many name one page (precision), and of the pairs
that name one page, how many get one key (recall).

Each URL of the truth is canonicalized by the canonurl command, with the
profile and rules file given (`canonurl -f plain --pipe --profile P [--rules
F]`, one output line per input line), and that output is the URL's key. The
same is done without the rules file, as the baseline, so the report shows what
the rules add: the pairs they merge that the profile alone does not, and the
false merges they make, with the families that caused them (a trap such as
`reorder` or `template` merged with a real page is a rule gone wrong).

    python3 data/dust-eval.py --truth truth.tsv --rules mined.toml
    python3 data/dust-eval.py --truth truth.tsv --all --json report.json

By default only the held-out URLs are scored (pages the log never showed);
`--all` scores every URL of the truth. Exit status 0 when scored, 2 on bad
input (a missing file, a truth without its header, a command that fails).
"""

import argparse
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict

HEADER = ["url", "page", "family", "held_out", "first_day", "requests"]


def read_truth(path, held_out_only):
    rows = []
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        if header != HEADER:
            raise SystemExit("dust-eval: %s: not a truth file of gen-dust-site.py (header %r)" % (path, header))
        for n, line in enumerate(f, start=2):
            cells = line.rstrip("\n").split("\t")
            if len(cells) != len(HEADER):
                raise SystemExit("dust-eval: %s:%d: %d columns, expected %d" % (path, n, len(cells), len(HEADER)))
            if held_out_only and cells[3] != "1":
                continue
            rows.append((cells[0], cells[1], cells[2]))
    return rows


def keys_of(canonurl, urls, profile, rules):
    cmd = [canonurl, "-f", "plain", "--pipe", "--profile", profile]
    if rules:
        cmd += ["--rules", rules]
    proc = subprocess.run(cmd, input=("\n".join(urls) + "\n").encode(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise SystemExit("dust-eval: %s failed (exit %d): %s" % (" ".join(cmd), proc.returncode,
                                                                 proc.stderr.decode(errors="replace").strip()))
    out = proc.stdout.decode(errors="surrogateescape").split("\n")
    if out and out[-1] == "":
        out.pop()
    if len(out) != len(urls):
        raise SystemExit("dust-eval: %s wrote %d lines for %d URLs" % (" ".join(cmd), len(out), len(urls)))
    # A rejected URL (empty line) is its own key: it merges with nothing.
    return [k if k else "\0rejected\0%d" % i for i, k in enumerate(out)]


def pairs(n):
    return n * (n - 1) // 2


def score(rows, keys):
    """Pair counts from the contingency of (key, page)."""
    by_key = Counter(keys)
    by_page = Counter(page for _, page, _ in rows)
    cell = Counter((k, page) for k, (_, page, _) in zip(keys, rows))
    true_pairs = sum(pairs(n) for n in by_page.values())
    key_pairs = sum(pairs(n) for n in by_key.values())
    both = sum(pairs(n) for n in cell.values())
    # Per family: of the other URLs of a URL's page, how many share its key.
    fam_total, fam_merged = Counter(), Counter()
    for k, (_, page, family) in zip(keys, rows):
        fam_total[family] += by_page[page] - 1
        fam_merged[family] += cell[(k, page)] - 1
    # False merges: keys that hold more than one page.
    pages_of_key = defaultdict(set)
    for k, (_, page, _) in zip(keys, rows):
        pages_of_key[k].add(page)
    false_keys = {k for k, ps in pages_of_key.items() if len(ps) > 1}
    false_fams = Counter()
    examples = []
    for k in sorted(false_keys):
        members = [(u, p, f) for kk, (u, p, f) in zip(keys, rows) if kk == k]
        for _, _, f in members:
            false_fams[f] += 1
        if len(examples) < 10:
            examples.append({"key": k, "urls": [{"url": u, "page": p, "family": f} for u, p, f in members[:6]]})
    return {
        "urls": len(rows),
        "pages": len(by_page),
        "true_pairs": true_pairs,
        "merged_pairs": key_pairs,
        "correct_pairs": both,
        "precision": both / key_pairs if key_pairs else 1.0,
        "recall": both / true_pairs if true_pairs else 1.0,
        "recall_by_family": {f: (fam_merged[f] / fam_total[f] if fam_total[f] else None) for f in sorted(fam_total)},
        "false_merge_keys": len(false_keys),
        "false_merge_urls_by_family": dict(sorted(false_fams.items())),
        "false_merge_examples": examples,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--truth", required=True)
    ap.add_argument("--rules", help="a rules file (as canonurl --rules reads it)")
    ap.add_argument("--profile", default="aggressive", help="canonurl profile (default aggressive)")
    ap.add_argument("--canonurl", default=os.environ.get("CANONURL", "target/release/canonurl"),
                    help="the command (default target/release/canonurl, or $CANONURL)")
    ap.add_argument("--all", action="store_true", help="score every URL, not only the held-out ones")
    ap.add_argument("--json", help="also write the report as JSON to this file")
    args = ap.parse_args()

    try:
        rows = read_truth(args.truth, not args.all)
    except OSError as e:
        raise SystemExit("dust-eval: %s" % e)
    if not rows:
        raise SystemExit("dust-eval: %s: no URL to score (held-out only: try --all)" % args.truth)
    urls = [u for u, _, _ in rows]
    base = score(rows, keys_of(args.canonurl, urls, args.profile, None))
    report = {"profile": args.profile, "rules": args.rules, "scope": "all" if args.all else "held-out",
              "baseline": base}
    if args.rules:
        report["with_rules"] = score(rows, keys_of(args.canonurl, urls, args.profile, args.rules))

    print("scored %d URLs of %d pages (%s), profile %s" % (base["urls"], base["pages"], report["scope"], args.profile))
    print("%-12s %12s %12s %12s %10s %8s" % ("", "true pairs", "merged", "correct", "precision", "recall"))
    for name in ("baseline", "with_rules"):
        if name in report:
            r = report[name]
            print("%-12s %12d %12d %12d %10.4f %8.4f" % (
                name, r["true_pairs"], r["merged_pairs"], r["correct_pairs"], r["precision"], r["recall"]))
    last = report.get("with_rules", base)
    print("recall by family (%s):" % ("with rules" if args.rules else "baseline"))
    for f, v in last["recall_by_family"].items():
        print("  %-18s %s" % (f, "-" if v is None else "%.3f" % v))
    if last["false_merge_keys"]:
        print("false merges: %d keys; URLs in them by family: %s" % (
            last["false_merge_keys"], ", ".join("%s %d" % kv for kv in last["false_merge_urls_by_family"].items())))
        for ex in last["false_merge_examples"][:3]:
            print("  key %s:" % ex["key"])
            for u in ex["urls"]:
                print("    %s  (%s, %s)" % (u["url"], u["page"], u["family"]))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    sys.exit(main())
