"""DUST rules learned from a directory of access logs on Apache Spark (issue 15).

`canonurl mine` in three steps, with canonurl doing the work in Spark tasks
(shipped with ``spark-submit --files``, as in canonurl_job.py):

1. stage 0, per file: each log file goes whole to one ``canonurl summarize``
   (``sc.binaryFiles``: gzip, zstd and W3C files as they are), which writes
   its per-URL summary;
2. merge: each partition merges its files' summaries with ``canonurl
   summarize --merge``, then one task merges the partitions' summaries the
   same way. Summaries merge exactly, in any order, so the result is the
   summary the whole input gives in one process;
3. mining, in that one task: ``canonurl mine --summaries`` on the merged
   summary. Its rules file and evidence come back to the driver and are
   written to ``OUTPUT/rules/part-00000`` and ``OUTPUT/evidence/part-00000``.

The rules are the ones ``canonurl mine --profile P FILES...`` learns alone on
the same files (examples/spark/test_mine_job.py checks it). Stages 1 and 2
spread over the cluster; the mining itself is one process, whose memory is
bounded by ``--memory`` in ``--mine-args``.

    spark-submit --master 'local[2]' --files target/release/canonurl \\
        examples/spark/mine_job.py --input 'logs/' --output mined/
"""

import argparse
import os
import shlex
import subprocess
import sys
import tempfile

from pyspark import SparkFiles
from pyspark.sql import SparkSession

BINARY = "canonurl"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", required=True, help="files, directories or globs (any Hadoop path)")
    p.add_argument("--output", required=True,
                   help="output directory: rules/part-00000 (TOML), evidence/part-00000 (JSONL)")
    p.add_argument("--profile", default="aggressive",
                   help="the profile URLs are canonicalized with (your dedup key's; "
                        "default aggressive, as canonurl mine's)")
    p.add_argument("--summarize-args", default="",
                   help="more canonurl summarize flags, e.g. '-f combined --window 12h'")
    p.add_argument("--mine-args", default="",
                   help="more canonurl mine flags, e.g. '--min-support 10 --memory 256MiB'")
    p.add_argument("--canonurl", default=None,
                   help="path of the canonurl binary on the executors (default: the one "
                        "shipped with --files)")
    p.add_argument("--partitions", type=int, default=None, help="minimum input partitions")
    return p.parse_args(argv)


def canonurl(binary, args, stdin=None, where="", ok=(0,)):
    """Runs canonurl; returns its stdout, or raises with the end of its stderr
    when the exit status is not in `ok`."""
    exe = binary or SparkFiles.get(BINARY)
    proc = subprocess.run([exe, *args], input=stdin, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, check=False)
    if proc.returncode not in ok:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(f"mine_job: {where}: canonurl {args[0]} exited "
                           f"{proc.returncode}: {message[-3:]}")
    return proc.stdout


def merge(binary, summaries, where):
    """`canonurl summarize --merge` of summary bytes (through temporary files)."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, summary in enumerate(summaries):
            path = os.path.join(tmp, f"{i}.tsv")
            with open(path, "wb") as f:
                f.write(summary)
            paths.append(path)
        return canonurl(binary, ["summarize", "--merge", *paths], where=where)


def summarize_partition(pairs, binary, args):
    """Stage 0 for the files of one partition, merged: one summary (bytes)."""
    summaries = []
    # `canonurl mine` summarizes logs by hour (and compares in the window
    # that fits the log): the same here, unless --summarize-args sets one.
    window = [] if any(a.split("=")[0] == "--window" for a in args) else ["--window", "1h"]
    for path, content in pairs:
        # Exit 1: no line of the file gave a URL (an empty log): it adds
        # nothing, as in the single-process run.
        summary = canonurl(binary, ["summarize", *window, *args, "-"], stdin=content, where=path,
                           ok=(0, 1))
        if summary:
            summaries.append(summary)
    if summaries:
        yield merge(binary, summaries, "a partition's summaries")


def merge_and_mine(summaries, binary, args):
    """The last merge and the mining, in one task: (rules, evidence) bytes."""
    summaries = list(summaries)
    if not summaries:
        return
    merged = merge(binary, summaries, "the partitions' summaries")
    with tempfile.TemporaryDirectory() as tmp:
        summary = os.path.join(tmp, "summary.tsv")
        evidence = os.path.join(tmp, "evidence.jsonl")
        with open(summary, "wb") as f:
            f.write(merged)
        rules = canonurl(binary, ["mine", "--summaries", *args, "--evidence", evidence, summary],
                         where="mining")
        with open(evidence, "rb") as f:
            yield rules, f.read()


def write_text(sc, text, path):
    """`text` as the single file PATH/part-00000, byte for byte (its lines
    are written one per row, each with its line end)."""
    if text and not text.endswith("\n"):
        raise ValueError(f"mine_job: {path}: output without a final line end")
    sc.parallelize(text.splitlines(), 1).saveAsTextFile(path)


def main(argv):
    args = parse_args(argv)
    spark = SparkSession.builder.appName("canonurl-mine").getOrCreate()
    sc = spark.sparkContext
    sc.setLogLevel("WARN")
    profile = ["--profile", args.profile]
    summarize_args = profile + shlex.split(args.summarize_args)
    mine_args = profile + shlex.split(args.mine_args)
    binary = args.canonurl

    files = sc.binaryFiles(args.input, minPartitions=args.partitions)
    partitions = files.mapPartitions(lambda it: summarize_partition(it, binary, summarize_args))
    result = partitions.coalesce(1).mapPartitions(
        lambda it: merge_and_mine(it, binary, mine_args)).collect()
    if not result:
        raise SystemExit(f"mine_job: no input files in {args.input}")
    [(rules, evidence)] = result

    write_text(sc, rules.decode("utf-8"), args.output.rstrip("/") + "/rules")
    write_text(sc, evidence.decode("utf-8"), args.output.rstrip("/") + "/evidence")
    active = sum(1 for line in rules.decode("utf-8").splitlines()
                 if line.strip() and not line.lstrip().startswith("#"))
    print(f"canonurl_mine_job: {files.getNumPartitions()} partitions, "
          f"{len(evidence.splitlines())} candidates, {len(rules)} bytes of rules "
          f"({active} active lines), output in {args.output}")
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
