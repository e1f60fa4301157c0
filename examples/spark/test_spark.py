#!/usr/bin/env python3
"""End-to-end check of examples/spark/canonurl_job.py against canonurl alone.

Installs pyspark (the version pinned in requirements.txt) into a virtual
environment under target/, runs the job with ``spark-submit --master local[2]``
on the shared access logs (../shared/data/logs-*, or $CANONURL_SHARED_DATA),
and checks that its result equals the single-process run of the same binary:
the same canonical URLs, the same counts, the same fingerprints.

- files mode: every shared log file, whole, against ``canonurl --count --key``;
- lines mode: the combined/common logs that Spark's line reader sees exactly
  as canonurl does (valid UTF-8, no lone CR), split into many partitions and
  piped through ``canonurl --pipe``, against ``canonurl -f combined --count --key``.

Exit status: 0 when both match, 1 on a mismatch or failure, and 0 with a
"skipping" notice only when Java, python venv/pip, or the shared data is missing.

usage: python3 examples/spark/test_spark.py [--keep]
"""

import glob
import os
import shutil
import subprocess
import sys
import venv

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "examples", "spark")
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
VENV = os.path.join(TARGET, "spark-venv")
WORK = os.path.join(TARGET, "spark-test")


def skip(why):
    print(f"test_spark: skipping: {why}")
    sys.exit(0)


def fail(why):
    print(f"test_spark: FAIL: {why}", file=sys.stderr)
    sys.exit(1)


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def shared_data():
    path = os.environ.get("CANONURL_SHARED_DATA") or os.path.join(ROOT, "..", "shared", "data")
    return path if os.path.isdir(path) else None


def venv_python():
    return os.path.join(VENV, "bin", "python")


def ensure_pyspark():
    """Creates the venv and installs the pinned pyspark unless already there."""
    with open(os.path.join(HERE, "requirements.txt")) as f:
        pinned = f.read().strip()
    marker = os.path.join(VENV, ".installed")
    if os.path.exists(marker) and open(marker).read().strip() == pinned:
        return
    if os.path.isdir(VENV):
        shutil.rmtree(VENV)
    try:
        venv.EnvBuilder(with_pip=True).create(VENV)
    except Exception as e:  # ensurepip missing (Debian without python3-venv)
        skip(f"cannot create a virtual environment with pip: {e}")
    run([venv_python(), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-r", os.path.join(HERE, "requirements.txt")])
    with open(marker, "w") as f:
        f.write(pinned + "\n")


def read_counts(path):
    """{url: (count, key)} from TSV rows url, count, key (or url, key, count)."""
    rows = {}
    for name in sorted(glob.glob(os.path.join(path, "part-*"))) if os.path.isdir(path) else [path]:
        with open(name, "rb") as f:
            for line in f:
                fields = line.rstrip(b"\n").split(b"\t")
                if len(fields) != 3:
                    fail(f"{name}: not 3 columns: {line!r}")
                rows[fields[0]] = fields[1:]
    return rows


def canonurl_counts(binary, args, files, out):
    """Single-process `canonurl --count --key`: rows url, key, count."""
    with open(out, "wb") as f:
        proc = subprocess.run([binary, "--count", "--key", *args, *files], stdout=f,
                              stderr=subprocess.PIPE)
    if proc.returncode not in (0, 2):
        fail(f"canonurl exited {proc.returncode}: {proc.stderr[-2000:]!r}")
    rows = {}
    with open(out, "rb") as f:
        for line in f:
            url, key, count = line.rstrip(b"\n").split(b"\t")
            rows[url] = [count, key]
    return rows


def compare(name, spark_rows, local_rows):
    if spark_rows == local_rows:
        total = sum(int(c) for c, _ in local_rows.values())
        print(f"test_spark: {name}: identical: {len(local_rows)} distinct URLs, {total} URLs")
        return
    only_spark = set(spark_rows) - set(local_rows)
    only_local = set(local_rows) - set(spark_rows)
    differ = [u for u in set(spark_rows) & set(local_rows) if spark_rows[u] != local_rows[u]]
    fail(f"{name}: results differ: {len(only_spark)} URLs only from Spark "
         f"{sorted(only_spark)[:3]}, {len(only_local)} only from canonurl "
         f"{sorted(only_local)[:3]}, {len(differ)} with other count/key "
         f"{[(u, spark_rows[u], local_rows[u]) for u in differ[:3]]}")


def line_clean(path):
    """True when Spark's line reader sees the file as canonurl does."""
    if path.endswith(".gz"):
        return False
    data = open(path, "rb").read()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\r" not in data.replace(b"\r\n", b"")


def prepare(work, skip=skip):
    """Java and the pinned pyspark, the binary to test, an empty `work`
    directory: (binary, spark-submit command up to the job, its environment).
    Calls `skip` (which exits) when Java or venv/pip is missing."""
    if shutil.which("java") is None:
        skip("java not found (Spark needs Java 17 or newer)")
    ensure_pyspark()
    # tests/spark.rs passes the binary cargo built for the tests.
    binary = os.environ.get("CANONURL_BIN")
    if not binary:
        run(["cargo", "build", "--release", "--bin", "canonurl"], cwd=ROOT)
        binary = os.path.join(TARGET, "release", "canonurl")
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    env = dict(os.environ)
    env["PATH"] = os.path.join(VENV, "bin") + os.pathsep + env.get("PATH", "")
    env["PYSPARK_PYTHON"] = venv_python()
    env["PYSPARK_DRIVER_PYTHON"] = venv_python()
    submit = [os.path.join(VENV, "bin", "spark-submit"), "--master", "local[2]",
              "--conf", "spark.ui.enabled=false", "--files", binary]
    return binary, submit, env


def main():
    data = shared_data()
    if data is None:
        skip("shared data not found (../shared/data; set CANONURL_SHARED_DATA)")
    binary, submit, env = prepare(WORK)
    submit = submit + [os.path.join(HERE, "canonurl_job.py")]

    # files mode: every shared log file, whole.
    logs = sorted(p for p in glob.glob(os.path.join(data, "logs-*", "*")) if os.path.isfile(p))
    if not logs:
        skip(f"no logs-*/ files in {data}")
    out = os.path.join(WORK, "files-out")
    run(submit + ["--input", ",".join(logs), "--output", out, "--mode", "files"], env=env)
    compare("files mode (all shared logs)", read_counts(out),
            canonurl_counts(binary, [], logs, os.path.join(WORK, "files-local.tsv")))

    # lines mode: split combined/common logs, piped line by line.
    combined = [p for p in logs if "/logs-combined/" in p.replace(os.sep, "/") and line_clean(p)]
    if not combined:
        fail("no line-clean combined log among the shared logs")
    out = os.path.join(WORK, "lines-out")
    run(submit + ["--input", ",".join(combined), "--output", out, "--mode", "lines",
                  "--partitions", "16", "--canonurl-args", "-f combined"], env=env)
    compare(f"lines mode ({len(combined)} combined logs, 16+ partitions)", read_counts(out),
            canonurl_counts(binary, ["-f", "combined"], combined,
                            os.path.join(WORK, "lines-local.tsv")))
    if "--keep" not in sys.argv:
        shutil.rmtree(WORK)
    print("test_spark: ok")


if __name__ == "__main__":
    main()
