#!/usr/bin/env python3
"""End-to-end check of examples/spark/mine_job.py against `canonurl mine` alone.

Writes two synthetic sites with data/gen-dust-site.py (the second with its
hosts renamed, so that the two are different sites), cut by time into five
log files in one directory (one gzipped, as rotated logs are) plus an empty
one, runs the job with ``spark-submit --master local[2]`` on that directory
(``--partitions 3``, a hint: Spark made two here; per-file summaries, merged
per partition, then merged and mined in one task), and checks that its rules file and its
evidence are byte for byte those of ``canonurl mine`` run alone on the same
files, and that the rules file has active rules (so that the comparison is
not of two empty files).

Exit status: 0 when they match, 1 on a mismatch or failure, and 0 with a
"skipping" notice only when Java or python venv/pip is missing. Uses the
pinned pyspark of test_spark.py's virtual environment (target/spark-venv).

usage: python3 examples/spark/test_mine_job.py [--keep]
"""

import gzip
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_spark import HERE, ROOT, TARGET, prepare, run  # noqa: E402

WORK = os.path.join(TARGET, "spark-mine-test")


def skip(why):
    print(f"test_mine_job: skipping: {why}")
    sys.exit(0)


def fail(why):
    print(f"test_mine_job: FAIL: {why}", file=sys.stderr)
    sys.exit(1)


def generate(logs):
    """Two sites cut into files under `logs`; returns their number of lines."""
    gen = os.path.join(ROOT, "data", "gen-dust-site.py")
    # (seed, options, host renames, files it is cut into)
    sites = [
        (11, ["--days", "8", "--requests", "60000", "--scale", "0.5"], [], 3),
        (12, ["--days", "8", "--requests", "30000", "--scale", "0.3"],
         [(".example", ".test"), ("203.0.113.7", "198.51.100.7")], 2),
    ]
    total = 0
    for seed, options, renames, parts in sites:
        log = os.path.join(WORK, f"site{seed}.log")
        run([sys.executable, gen, "--seed", str(seed), *options, "--holdout", "0.3",
             "--log", log, "--truth", os.path.join(WORK, f"truth{seed}.tsv")])
        with open(log, encoding="ascii") as f:
            lines = f.readlines()
        for old, new in renames:
            lines = [line.replace(old, new) for line in lines]
        total += len(lines)
        # Cut by time (the log is in time order), as daily rotation does.
        step = -(-len(lines) // parts)
        for i in range(parts):
            chunk = "".join(lines[i * step:(i + 1) * step]).encode("ascii")
            name = os.path.join(logs, f"site{seed}-{i}.log")
            if i == 1:
                with gzip.open(name + ".gz", "wb") as f:
                    f.write(chunk)
            else:
                with open(name, "wb") as f:
                    f.write(chunk)
    open(os.path.join(logs, "empty.log"), "wb").close()
    return total


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    binary, submit, env = prepare(WORK, skip)
    logs = os.path.join(WORK, "logs")
    os.makedirs(logs)
    lines = generate(logs)
    files = sorted(os.listdir(logs))

    # canonurl mine alone, on the same files.
    local_rules = os.path.join(WORK, "local.toml")
    local_evidence = os.path.join(WORK, "local.jsonl")
    run([binary, "mine", "--evidence", local_evidence, "-o", local_rules,
         *[os.path.join(logs, f) for f in files]])

    out = os.path.join(WORK, "out")
    run(submit + [os.path.join(HERE, "mine_job.py"), "--input", logs, "--output", out,
                  "--partitions", "3"], env=env)

    rules, evidence = read(local_rules), read(local_evidence)
    spark_rules = read(os.path.join(out, "rules", "part-00000"))
    spark_evidence = read(os.path.join(out, "evidence", "part-00000"))
    active = [l for l in rules.decode().splitlines() if l.strip() and not l.lstrip().startswith("#")]
    if not any(l.lstrip().startswith(("{ regex", "drop-params", "rules =")) for l in active):
        fail(f"canonurl mine alone learned no active rule: nothing to compare\n{rules.decode()}")
    if spark_rules != rules:
        fail(f"the rules differ:\n--- canonurl mine ---\n{rules.decode()}\n"
             f"--- mine_job.py ---\n{spark_rules.decode()}")
    if spark_evidence != evidence:
        fail(f"the evidence differs ({len(evidence.splitlines())} candidates alone, "
             f"{len(spark_evidence.splitlines())} from Spark)")
    print(f"test_mine_job: identical rules ({len(active)} active lines) and evidence "
          f"({len(evidence.splitlines())} candidates): {len(files)} files, {lines} lines")
    if "--keep" not in sys.argv:
        shutil.rmtree(WORK)
    print("test_mine_job: ok")


if __name__ == "__main__":
    main()
