"""canonurl inside the engines: Polars, DuckDB and PySpark, as python/README.md shows them.

The PySpark test runs the README's Arrow UDFs on the URLs of the shared access
logs and compares them with ``canonurl --pipe`` run on the same logs: the same
canonical URLs, and fingerprints equal to ``--key`` and to Spark's own
``xxhash64``.
"""

import json
import os
import shutil
import subprocess
import sys

import pyarrow as pa
import pytest

import canonurl
from canonurl import Canonicalizer

from conftest import url_lines


def test_polars_map_batches(data):
    pl = pytest.importorskip("polars")
    urls = [u.decode("utf-8", "replace") for u in url_lines(data / "url-dataset" / "kasztp.txt", 20000)]
    urls[5] = None
    urls[6] = "http://exa<mple.com/"
    df = pl.DataFrame({"url": urls})

    # The README's example.
    def canonical(s: pl.Series) -> pl.Series:
        return pl.Series(canonurl.canonicalize_arrow(s.to_arrow(), "aggressive"))

    out = df.with_columns(
        pl.col("url").map_batches(canonical, return_dtype=pl.String).alias("canonical"),
    )
    c = Canonicalizer("aggressive")
    assert out["canonical"].to_list() == [None if u is None else c.canonicalize(u) for u in urls]
    assert out["canonical"].null_count() >= 2
    deduped = out.unique("canonical", keep="first", maintain_order=True)
    assert 0 < deduped.height < df.height


def test_duckdb_arrow_udf(data):
    duckdb = pytest.importorskip("duckdb")
    from duckdb.sqltypes import BIGINT, VARCHAR

    urls = [u.decode("utf-8", "replace") for u in url_lines(data / "url-dataset" / "userbait.txt", 20000)]
    con = duckdb.connect()
    # The README's example.
    con.create_function("canonurl", lambda a: canonurl.canonicalize_arrow(a, "safe"),
                        [VARCHAR], VARCHAR, type="arrow", null_handling="special")
    con.create_function("canonurl_key", lambda a: canonurl.canonicalize_arrow(a, "safe", output="fingerprint"),
                        [VARCHAR], BIGINT, type="arrow", null_handling="special")
    con.register("urls", pa.table({"i": range(len(urls)), "url": urls}))
    rows = con.execute("SELECT canonurl(url), canonurl_key(url) FROM urls ORDER BY i").fetchall()
    c = Canonicalizer("safe")
    assert [r[0] for r in rows] == [c.canonicalize(u) for u in urls]
    assert [r[1] for r in rows] == [c.fingerprint(u) for u in urls]
    distinct = con.execute("SELECT count(DISTINCT canonurl(url)) FROM urls").fetchone()[0]
    assert distinct == len({c.canonicalize(u) for u in urls} - {None})


def cli_records(binary: str, log: str) -> tuple[list[bytes], list[str | None], list[int | None]]:
    """canonurl -f combined --pipe --format jsonl: each record's target, URL and key."""
    out = subprocess.run([binary, "-f", "combined", "--pipe", "--format", "jsonl", log],
                         capture_output=True, check=False).stdout
    targets, urls, keys = [], [], []
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        row = json.loads(line)
        if "target" not in row:
            continue  # the line gave no record
        targets.append(row["target"].encode("utf-8", "surrogateescape"))
        urls.append(row.get("url"))
        # A JSON string: a bare 64-bit integer loses digits in most readers.
        keys.append(int(row["key"]) if "key" in row else None)
    return targets, urls, keys


@pytest.fixture(scope="module")
def spark():
    if shutil.which("java") is None:
        pytest.skip("java not found (Spark needs Java 17 or newer)")
    pyspark = pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (SparkSession.builder.master("local[2]").appName("canonurl-test")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .getOrCreate())
    assert pyspark.__version__
    yield session
    session.stop()


def test_pyspark_udfs_equal_canonurl_pipe(spark, data, canonurl_bin):
    import pandas as pd
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf

    logs = sorted(p for p in (data / "logs-combined").iterdir() if p.is_file())
    targets, urls, keys = [], [], []
    for log in logs:
        t, u, k = cli_records(canonurl_bin, str(log))
        targets += t
        urls += u
        keys += k
    assert len(targets) > 20000 and sum(u is None for u in urls) < len(urls) // 100

    # The README's examples: a pandas UDF, and mapInArrow (Arrow batches, no pandas).
    @pandas_udf("string")
    def canonical(targets: pd.Series) -> pd.Series:
        return canonurl.canonicalize_arrow(pa.array(targets, pa.binary()), target=True).to_pandas()

    @pandas_udf("long")
    def fingerprint(targets: pd.Series) -> pd.Series:
        out = canonurl.canonicalize_arrow(pa.array(targets, pa.binary()), target=True, output="fingerprint")
        return out.to_pandas(integer_object_nulls=True)

    def batches(it):
        for batch in it:
            yield pa.RecordBatch.from_arrays(
                [batch.column("i"), canonurl.canonicalize_arrow(batch.column("target"), target=True)],
                names=["i", "url"])

    df = spark.createDataFrame(pd.DataFrame({"i": range(len(targets)), "target": targets})).repartition(8)
    got = (df.select("i", canonical("target").alias("url"), fingerprint("target").alias("key"))
             .withColumn("spark_key", F.xxhash64("url"))
             .orderBy("i").collect())
    assert [r["url"] for r in got] == urls
    assert [r["key"] for r in got] == keys
    # Spark's own xxhash64 of the canonical URL is canonurl's fingerprint (--key).
    assert all(r["spark_key"] == r["key"] for r in got if r["url"] is not None)

    arrow = df.mapInArrow(batches, "i long, url string").orderBy("i").collect()
    assert [r["url"] for r in arrow] == urls
    print(f"pyspark: {len(urls)} records of {len(logs)} shared logs equal canonurl --pipe")


def test_pyspark_plain_list_equals_canonurl_pipe(spark, data, canonurl_bin):
    """A URL list through the UDF equals canonurl -f plain --pipe, line by line."""
    import pandas as pd
    from pyspark.sql.functions import pandas_udf

    path = data / "url-dataset" / "kasztp.txt"
    lines = url_lines(path)
    piped = subprocess.run([canonurl_bin, "-f", "plain", "--pipe", "--profile", "aggressive", str(path)],
                           capture_output=True, check=True).stdout.split(b"\n")[:-1]
    assert len(piped) == len(lines)

    @pandas_udf("string")
    def canonical(lines: pd.Series) -> pd.Series:
        return canonurl.canonicalize_arrow(pa.array(lines, pa.binary()), "aggressive", target=True).to_pandas()

    df = spark.createDataFrame(pd.DataFrame({"i": range(len(lines)), "line": lines}))
    got = df.select("i", canonical("line").alias("url")).orderBy("i").collect()
    assert [(r["url"] or "").encode() for r in got] == piped
