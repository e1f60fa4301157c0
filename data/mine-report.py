#!/usr/bin/env python3
"""`canonurl mine` on real access logs: what it learns, and how the later part
of each log judges it (issue 15, section 3).

For every log under the shared data's `logs-*/`, `nasa-tsv/` and
`extra-logs/*/` (or the files given), runs

    canonurl mine --evidence EV.jsonl -o RULES.toml [MINE_OPTIONS] LOG

and reads the evidence file: one object per candidate rule, with its decision
(`accepted`, written active; `unverified`, written commented out; `rejected`,
only in the evidence) and what the held-out part of the log (the later windows,
which the rule was not learned on) says of the merges it makes: pairs that
agree (same 200 size signature), contradict (clearly different sizes), answer
200 against 404/410 (a status contradiction), or cannot be tested.

Per log it prints the candidates by decision (the rejected ones by the test
they failed) and, for the rules written (accepted and unverified apart) and for
the rejected candidates, the held-out merges confirmed, contradicted,
status-contradicted and untestable, and the share confirmed of the testable
ones: the rejected candidates' column says whether the guards were right to
reject them. The issue's aim: at least 95 % of the testable merges of the learned rules
confirmed, and no status contradiction. `--check` exits 1 when an accepted rule
misses that aim on some log.

A log the command cannot read (an unsupported format, no URL) is listed with
the reason instead. Python 3 standard library only.

usage: data/mine-report.py [--canonurl BIN] [--data DIR] [--json FILE]
                           [--check] [--all] [--mine-arg ARG]... [LOG...]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def shared_logs(data):
    """Every log of the shared data this report covers, sorted."""
    found = []
    for pattern in ("logs-*/*", "nasa-tsv/*", "extra-logs/*/*"):
        for path in sorted(data.glob(pattern)):
            name = path.name
            if path.is_file() and not name.endswith((".md", ".txt.license")) and name != "SOURCES.md":
                found.append(path)
    return found


def empty_tally():
    return {"agree": 0, "contradict": 0, "status_contradict": 0, "untestable": 0}


def add(tally, held_out):
    for key in tally:
        tally[key] += int(held_out.get(key, 0) or 0)


def confirmed_share(tally):
    """Confirmed of the testable merges, or None when none could be tested."""
    testable = tally["agree"] + tally["contradict"] + tally["status_contradict"]
    return None if testable == 0 else tally["agree"] / testable


def mine_one(canonurl, log, extra, tmp):
    """Runs the miner on one log; returns (report dict) or (None, reason)."""
    evidence = Path(tmp) / "evidence.jsonl"
    rules = Path(tmp) / "rules.toml"
    for stale in (evidence, rules):
        if stale.exists():
            stale.unlink()
    cmd = [canonurl, "mine", "--evidence", str(evidence), "-o", str(rules), *extra, str(log)]
    run = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    if run.returncode != 0:
        last = [l for l in run.stderr.splitlines() if l.strip()]
        return None, f"exit {run.returncode}: {last[-1] if last else 'no message'}"
    decisions = {"accepted": 0, "unverified": 0, "rejected": 0}
    held = {"accepted": empty_tally(), "unverified": empty_tally(), "rejected": empty_tally()}
    reasons = {}
    families = {}
    worst = None
    with open(evidence, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                cand = json.loads(line)
            except json.JSONDecodeError as e:
                return None, f"evidence line {number} is not JSON: {e}"
            decision = cand.get("decision")
            if decision not in decisions:
                return None, f"evidence line {number}: unknown decision {decision!r}"
            decisions[decision] += 1
            if decision == "rejected":
                why = rejection_kind(cand.get("reason") or "")
                reasons[why] = reasons.get(why, 0) + 1
            if decision in held:
                out = cand.get("held_out") or {}
                add(held[decision], out)
                if decision == "accepted":
                    families[cand.get("family", "?")] = families.get(cand.get("family", "?"), 0) + 1
                    rule_tally = empty_tally()
                    add(rule_tally, out)
                    share = confirmed_share(rule_tally)
                    if rule_tally["status_contradict"] or (share is not None and share < 0.95):
                        worst = cand.get("id", "?")
    return {
        "log": str(log),
        "decisions": decisions,
        "held_out": held,
        "accepted_families": families,
        "rejected_by": reasons,
        "rule_missing_aim": worst,
    }, None


def rejection_kind(reason):
    """The acceptance test a rejected candidate failed, from its reason."""
    for needle, kind in (
        ("--min-support", "support"),
        ("--min-sizes", "sizes"),
        ("--min-agreement", "agreement"),
        ("--min-confirm", "confirmation"),
        ("200 against 404", "200-vs-404"),
        ("mode", "mode-param"),
    ):
        if needle in reason:
            return kind
    return "other"


def fmt_share(tally):
    share = confirmed_share(tally)
    return "-" if share is None else f"{100 * share:.1f} %"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", nargs="*", type=Path, help="logs (default: the shared data's)")
    parser.add_argument("--canonurl", default=os.environ.get("CANONURL_BIN", str(ROOT / "target" / "release" / "canonurl")))
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("CANONURL_SHARED_DATA", ROOT.parent / "shared" / "data")))
    parser.add_argument("--json", type=Path, help="also write the per-log results as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 when an accepted rule misses the aim")
    parser.add_argument("--all", action="store_true", help="list the logs that gave no candidate too")
    parser.add_argument("--mine-arg", action="append", default=[], help="passed to canonurl mine (repeat)")
    args = parser.parse_args()

    if not Path(args.canonurl).is_file():
        sys.exit(f"mine-report.py: {args.canonurl} not found: cargo build --release first")
    logs = args.logs
    if not logs:
        if not args.data.is_dir():
            print(f"mine-report.py: {args.data} not found: nothing to report (set CANONURL_SHARED_DATA)")
            return 0
        logs = shared_logs(args.data)

    results, skipped = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for log in logs:
            report, why = mine_one(args.canonurl, log, args.mine_arg, tmp)
            if report is None:
                skipped.append((str(log), why))
            else:
                results.append(report)

    def short(path):
        try:
            return str(Path(path).relative_to(args.data))
        except ValueError:
            return path

    print("| log | candidates | accepted | unverified | rejected (by) | accepted: held-out confirmed / contradicted / 200-vs-404 / untestable | confirmed of testable | unverified: confirmed / contradicted / 200-vs-404 | rejected: confirmed / contradicted / 200-vs-404 |")
    print("|---|---:|---:|---:|---|---|---:|---|---|")
    total = {k: empty_tally() for k in ("accepted", "unverified", "rejected")}
    quiet = 0
    for r in results:
        d, held = r["decisions"], r["held_out"]
        a, u, x = held["accepted"], held["unverified"], held["rejected"]
        for k in total:
            add(total[k], held[k])
        if sum(d.values()) == 0 and not args.all:
            quiet += 1
            continue
        by = ", ".join(f"{k} {n}" for k, n in sorted(r["rejected_by"].items()))
        print(f"| {short(r['log'])} | {sum(d.values())} | {d['accepted']} | {d['unverified']} | {d['rejected']}{f' ({by})' if by else ''} "
              f"| {a['agree']} / {a['contradict']} / {a['status_contradict']} / {a['untestable']} | {fmt_share(a)} "
              f"| {u['agree']} / {u['contradict']} / {u['status_contradict']} "
              f"| {x['agree']} / {x['contradict']} / {x['status_contradict']} |")
    a, x = total["accepted"], total["rejected"]
    print(f"\n{len(results)} logs mined ({quiet} gave no candidate and are not listed; --all lists them)."
          f"\nAccepted rules' held-out merges: {a['agree']} confirmed, {a['contradict']} contradicted, "
          f"{a['status_contradict']} answer 200 against 404, {a['untestable']} untestable; "
          f"confirmed of testable: {fmt_share(a)}."
          f"\nRejected candidates' held-out merges: {x['agree']} confirmed, {x['contradict']} contradicted, "
          f"{x['status_contradict']} answer 200 against 404.")
    for log, why in skipped:
        print(f"not mined: {short(log)}: {why}")
    if args.json:
        args.json.write_text(json.dumps({"mined": results, "not_mined": skipped}, indent=1) + "\n")
    missing = [r for r in results if r["rule_missing_aim"]]
    for r in missing:
        print(f"aim missed: {short(r['log'])}: rule {r['rule_missing_aim']}", file=sys.stderr)
    return 1 if (args.check and missing) else 0


if __name__ == "__main__":
    sys.exit(main())
