"""Canonical URLs from access logs on Apache Spark, with canonurl doing the work.

canonurl is shipped to the executors with ``spark-submit --files`` and run as a
subprocess per partition; Spark only moves bytes and aggregates. Two ways to
feed it:

``--mode files`` (the default)
    Each input file goes whole to one canonurl process (``sc.binaryFiles``):
    gzip files (which Spark cannot split), W3C logs whose ``#Fields:`` header
    governs the lines after it, any format canonurl detects. The bytes reach
    canonurl unchanged, so the result is byte-for-byte the single-process one.

``--mode lines``
    Spark splits the files into lines (``sc.textFile``) and ``RDD.pipe`` streams
    each partition through ``canonurl --pipe``, which writes exactly one line
    per input line and keeps no state across lines. For large, splittable,
    UTF-8 logs of a line-by-line format (combined, common, vhost, json, alb,
    haproxy; give it with ``--log-format``). Spark decodes lines as UTF-8 (an
    invalid byte becomes U+FFFD) and also ends lines at a lone CR, so for
    logs with such bytes use files mode.

Both end the same way: a DataFrame (url, key) where ``key`` is canonurl's
``--key`` fingerprint. The job checks that it equals Spark SQL's
``xxhash64(url)`` for every row, deduplicates in Spark SQL by that
fingerprint, and writes ``url<TAB>count<TAB>key`` rows, most frequent first.

    spark-submit --master 'local[2]' --files target/release/canonurl \\
        examples/spark/canonurl_job.py --input 'logs/*.gz' --output out/
"""

import argparse
import shlex
import subprocess
import sys
import tempfile

from pyspark import SparkFiles
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

BINARY = "canonurl"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input", required=True, help="files, directories or globs (any Hadoop path)")
    p.add_argument("--output", required=True, help="output directory (url, count, key as TSV)")
    p.add_argument("--mode", choices=["files", "lines"], default="files")
    p.add_argument(
        "--canonurl-args",
        default="",
        help="extra canonurl flags, e.g. '--profile whatwg' or '-f combined' (lines mode)",
    )
    p.add_argument(
        "--canonurl",
        default=None,
        help="path of the canonurl binary on the executors (default: the one shipped with "
        "--files; in lines mode on a cluster, ./canonurl in the task's directory)",
    )
    p.add_argument("--partitions", type=int, default=None, help="minimum input partitions")
    return p.parse_args(argv)


def run_files(pairs, binary, extra):
    """Runs canonurl once per (path, bytes) pair and yields (url, key) rows."""
    exe = binary or SparkFiles.get(BINARY)
    for path, content in pairs:
        with tempfile.TemporaryFile() as err:
            proc = subprocess.run(
                [exe, "--key", *extra, "-"],
                input=content,
                stdout=subprocess.PIPE,
                stderr=err,
                check=False,
            )
            if proc.returncode not in (0, 1):
                # canonurl wrote the complete lines it could (a truncated gzip,
                # an undetectable format): keep them, and say why it stopped,
                # as the single-process run does.
                err.seek(0)
                message = err.read().decode("utf-8", "replace").strip().splitlines()
                print(f"canonurl_job: {path}: exit {proc.returncode}: {message[-1:]}", file=sys.stderr)
        for line in proc.stdout.splitlines():
            url, key = line.split(b"\t")
            yield url.decode("ascii"), int(key)


def main(argv):
    args = parse_args(argv)
    spark = SparkSession.builder.appName("canonurl").getOrCreate()
    sc = spark.sparkContext
    sc.setLogLevel("WARN")
    extra = shlex.split(args.canonurl_args)

    if args.mode == "files":
        files = sc.binaryFiles(args.input, minPartitions=args.partitions)
        binary = args.canonurl
        rows = files.mapPartitions(lambda it: run_files(it, binary, extra))
    else:
        lines = sc.textFile(args.input, minPartitions=args.partitions)
        # The command string is fixed on the driver: in local mode the
        # shipped file's path is the same everywhere; on YARN and Kubernetes
        # --files land in the task's working directory.
        binary = args.canonurl or (
            SparkFiles.get(BINARY) if sc.master.startswith("local") else "./" + BINARY
        )
        command = shlex.join([binary, "--pipe", "--key", *extra])
        # checkCode: a canonurl failure fails the task instead of losing lines.
        piped = lines.pipe(command, checkCode=True)
        rows = piped.filter(lambda l: l != "").map(lambda l: (l.split("\t")[0], int(l.split("\t")[1])))

    # Cached: the checks and the write below read it several times, and each
    # read would run canonurl over the input again.
    df = spark.createDataFrame(rows, "url string, key long").cache()
    df.createOrReplaceTempView("urls")

    # canonurl's fingerprint must be Spark's own xxhash64 of the same string.
    mismatched = spark.sql("SELECT count(*) AS n FROM urls WHERE xxhash64(url) <> key").first().n
    if mismatched:
        raise SystemExit(f"canonurl_job: {mismatched} rows where --key differs from xxhash64(url)")

    # Deduplicate by the fingerprint; a key shared by two URLs would be a
    # 64-bit collision, which the job reports rather than merges silently.
    deduped = spark.sql(
        """
        SELECT xxhash64(url) AS key, min(url) AS url, count(*) AS count,
               count(DISTINCT url) AS urls_per_key
        FROM urls GROUP BY xxhash64(url)
        """
    )
    collisions = deduped.filter(F.col("urls_per_key") > 1).count()
    if collisions:
        raise SystemExit(f"canonurl_job: {collisions} fingerprints shared by different URLs")

    (
        deduped.orderBy(F.col("count").desc(), F.col("url"))
        .select("url", "count", "key")
        .coalesce(1)
        .write.mode("overwrite")
        .option("sep", "\t")
        .option("quote", "")
        .option("escape", "")
        .csv(args.output)
    )
    total = deduped.agg(F.sum("count")).first()[0] or 0
    print(f"canonurl_job: {deduped.count()} distinct URLs, {total} URLs, output in {args.output}")
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
