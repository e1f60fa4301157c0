#!/usr/bin/env python3
"""SVG bar charts of the benchmark results, for BENCHMARKS.md.

Python 3 standard library only: the SVG is written by hand, so the charts can
be redrawn on any machine that ran the benches, with nothing to install.

- docs/bench-peers.svg: median time per URL of canonurl (whatwg, rfc3986,
  aggressive) beside ada, url (rust-url) and urlnorm, and the line-copy
  floor, per input set, read from criterion's results of
  `cargo bench --bench canonicalize`
  (CRITERION/<set>/<function>/new/estimates.json and benchmark.json, with `/`
  in a function name written `_`, as criterion names the directories).
- docs/bench-e2e.svg: end-to-end GB/s of the canonurl binary with one thread
  and with one per CPU beside `cat` and `wc -l`, read from the table
  benches/e2e.sh writes (target/e2e/results.tsv).

usage: benches/chart.py [--criterion DIR] [--e2e TSV] [--out-dir DIR] [--note TEXT]

A chart whose input is missing is skipped with a note; it is an error when
neither can be drawn.
"""

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from xml.sax.saxutils import escape

# Same order as FUNCTIONS in benches/canonicalize.rs: canonurl first.
PEER_FUNCTIONS = [
    ("canonurl/whatwg", "canonurl whatwg", "#1f5fa8"),
    ("canonurl/rfc3986", "canonurl rfc3986", "#4a8fd9"),
    ("canonurl/aggressive", "canonurl aggressive", "#9cc3ee"),
    ("ada", "ada (C++)", "#d9822b"),
    ("url", "url (rust-url)", "#3c9a5f"),
    ("urlnorm", "urlnorm (url + dedup key)", "#a05eb5"),
    ("baseline/copy", "copy each line (floor)", "#a8a8a8"),
]
# Same order as URL_SETS and LOG_SET in benches/common/mod.rs.
PEER_SETS = ["kasztp", "node_files", "userbait", "isaacs_files", "log_targets"]

FONT = "font-family='DejaVu Sans, Helvetica, Arial, sans-serif'"


def machine():
    """CPU model and CPU count of this machine (the one that ran the bench)."""
    model = platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, nproc {os.cpu_count()}"


def elements(benchmark):
    """URLs per iteration from criterion's benchmark.json: `throughput` is one
    `{"ElementsAndBytes": {...}}` (or `Elements`) or a list of them, depending
    on the criterion version."""
    throughput = benchmark.get("throughput")
    if isinstance(throughput, list):
        throughput = throughput[0] if throughput else None
    if not throughput:
        return None
    kind, value = next(iter(throughput.items()))
    if kind == "ElementsAndBytes":
        return value["elements"]
    if kind == "Elements":
        return value
    return None


def read_peers(criterion):
    """{set: {function: ns per URL}}, {set: URLs}, and the newest result's time."""
    results, sizes, newest = {}, {}, 0.0
    for group in PEER_SETS:
        for function, _, _ in PEER_FUNCTIONS:
            new = criterion / group / function.replace("/", "_") / "new"
            try:
                estimates = json.loads((new / "estimates.json").read_text())
                benchmark = json.loads((new / "benchmark.json").read_text())
            except (OSError, ValueError):
                continue
            n = elements(benchmark)
            if not n:
                print(f"chart.py: {new}: no element count, left out", file=sys.stderr)
                continue
            ns = estimates["median"]["point_estimate"] / n
            results.setdefault(group, {})[function] = ns
            sizes[group] = n
            newest = max(newest, (new / "estimates.json").stat().st_mtime)
    return results, sizes, newest


def read_e2e(path):
    """The rows of benches/e2e.sh's TSV and its `# key: value` comments."""
    facts, rows, header = {}, [], None
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            key, _, value = line[1:].strip().partition(": ")
            if value:
                facts[key] = value
            continue
        cells = line.split("\t")
        if header is None:
            header = cells
            continue
        row = dict(zip(header, cells))
        for key in ("seconds", "gb_per_s", "lines_per_s"):
            row[key] = float(row[key])
        rows.append(row)
    return facts, rows


def nice_max(value):
    """A round axis end at or above value: 1, 2, 2.5 or 5 times a power of 10."""
    if value <= 0:
        return 1.0
    power = 10 ** len(str(int(value))) / 10 if value >= 1 else 1.0
    while power > value:
        power /= 10
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def fmt(value):
    """A number with about three significant digits."""
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


class Svg:
    """Just enough SVG: text, rectangles, lines."""

    def __init__(self, width, height):
        self.width, self.height = width, height
        self.parts = [f"<rect width='{width}' height='{height}' fill='white'/>"]

    def text(self, x, y, s, size=12, anchor="start", weight="normal", fill="#222"):
        self.parts.append(
            f"<text x='{x:.1f}' y='{y:.1f}' font-size='{size}' text-anchor='{anchor}' "
            f"font-weight='{weight}' fill='{fill}' {FONT}>{escape(s)}</text>"
        )

    def rect(self, x, y, w, h, fill, title=None):
        tip = f"<title>{escape(title)}</title>" if title else ""
        self.parts.append(
            f"<rect x='{x:.1f}' y='{y:.1f}' width='{max(w, 0.5):.1f}' height='{h:.1f}' "
            f"fill='{fill}'>{tip}</rect>"
        )

    def line(self, x1, y1, x2, y2, stroke="#ccc", dash=None):
        d = f" stroke-dasharray='{dash}'" if dash else ""
        self.parts.append(
            f"<line x1='{x1:.1f}' y1='{y1:.1f}' x2='{x2:.1f}' y2='{y2:.1f}' "
            f"stroke='{stroke}' stroke-width='1'{d}/>"
        )

    def write(self, path):
        body = "\n".join(self.parts)
        path.write_text(
            "<?xml version='1.0' encoding='UTF-8'?>\n"
            f"<svg xmlns='http://www.w3.org/2000/svg' width='{self.width}' "
            f"height='{self.height}' viewBox='0 0 {self.width} {self.height}'>\n{body}\n</svg>\n"
        )


def axis(svg, x0, x1, y_top, y_bottom, top, unit):
    """Vertical grid lines with tick labels below, for values 0..top."""
    for i in range(6):
        value = top * i / 5
        x = x0 + (x1 - x0) * i / 5
        svg.line(x, y_top, x, y_bottom, dash=None if i == 0 else "3,3")
        svg.text(x, y_bottom + 16, f"{value:g}", size=11, anchor="middle")
    svg.text((x0 + x1) / 2, y_bottom + 36, unit, size=12, anchor="middle")


def legend(svg, x, y, entries, width):
    """Colour swatches with labels, wrapped to width; returns the next y."""
    cx = x
    for label, colour in entries:
        w = 20 + 6.6 * len(label)
        if cx + w > x + width:
            cx, y = x, y + 20
        svg.rect(cx, y - 10, 12, 12, colour)
        svg.text(cx + 17, y, label, size=12)
        cx += w + 14
    return y + 20


def peers_chart(results, sizes, when, note, out):
    row_h, gap, label_w, bar_w, left = 15, 16, 150, 560, 20
    rows = sum(len(results[s]) for s in results)
    legend_entries = [(label, c) for f, label, c in PEER_FUNCTIONS]
    width = left + label_w + bar_w + 90
    height = 140 + rows * row_h + len(results) * (gap + 18) + 50
    svg = Svg(width, height)
    svg.text(left, 28, "canonurl and its peers: median time per URL (lower is better)",
             size=17, weight="bold")
    date = time.strftime("%Y-%m-%d", time.gmtime(when))
    svg.text(left, 48, f"cargo bench --bench canonicalize (criterion), one thread; {machine()}; "
             f"{date}{note}", size=11, fill="#555")
    y = legend(svg, left, 74, legend_entries, width - 2 * left)
    x0 = left + label_w
    top = nice_max(max(max(r.values()) for r in results.values()))
    y_top = y
    y += 6
    for group in PEER_SETS:
        if group not in results:
            continue
        svg.text(left, y + 12, group, size=13, weight="bold")
        svg.text(left + 8 + 8 * len(group), y + 12, f"{sizes[group]:,} URLs", size=11, fill="#555")
        y += 18
        for function, label, colour in PEER_FUNCTIONS:
            ns = results[group].get(function)
            if ns is None:
                continue
            w = bar_w * ns / top
            svg.text(x0 - 6, y + row_h - 4, label, size=10, anchor="end", fill="#444")
            svg.rect(x0, y + 1, w, row_h - 2, colour,
                     title=f"{group} {function}: {ns:.1f} ns/URL, {1e3 / ns:.1f} M URLs/s")
            svg.text(x0 + w + 4, y + row_h - 4, f"{fmt(ns)} ns", size=10)
            y += row_h
        y += gap
    axis(svg, x0, x0 + bar_w, y_top, y, top, "ns per URL (median; one URL = one line of the set)")
    svg.write(out)


def e2e_chart(facts, rows, note, out):
    left, label_w, bar_w, row_h = 20, 270, 430, 34
    width = left + label_w + bar_w + 150
    height = 150 + len(rows) * row_h + 50
    svg = Svg(width, height)
    svg.text(left, 28, "canonurl end to end: throughput on a combined access log "
             "(higher is better)", size=17, weight="bold")
    first = rows[0]
    runs = facts.get("input", "").partition("; ")[2]
    svg.text(left, 48, f"benches/e2e.sh: a generated combined log of "
             f"{int(first['bytes']) / 2**20:,.0f} MiB, {int(first['lines']):,} lines; {runs}",
             size=11, fill="#555")
    svg.text(left, 64, f"{facts.get('cpu', machine())}; commit {facts.get('commit', '?')}; "
             f"{facts.get('date', '')}{note}", size=11, fill="#555")
    entries = [("floor: cat reads the file, wc -l counts its lines", "#a8a8a8"),
               ("canonurl, one thread", "#4a8fd9"),
               ("canonurl, one thread per CPU", "#1f5fa8")]
    y = legend(svg, left, 90, entries, width - 2 * left) + 4
    x0 = left + label_w
    top = nice_max(max(r["gb_per_s"] for r in rows))
    y_top = y
    for r in rows:
        command = r["command"]
        colour = "#1f5fa8" if command.startswith("canonurl") else "#a8a8a8"
        if command.startswith("canonurl -j 1"):
            colour = "#4a8fd9"
        w = bar_w * r["gb_per_s"] / top
        svg.text(x0 - 8, y + row_h / 2 + 4, command, size=12, anchor="end")
        svg.rect(x0, y + 4, w, row_h - 8, colour,
                 title=f"{command}: {r['seconds']:.3f} s")
        svg.text(x0 + w + 5, y + row_h / 2 + 4,
                 f"{r['gb_per_s']:.2f} GB/s, {r['lines_per_s'] / 1e6:.1f} M lines/s", size=11)
        y += row_h
    axis(svg, x0, x0 + bar_w, y_top, y + 4, top, "GB/s (10⁹ bytes of log per second, best run)")
    svg.write(out)


def main():
    root = Path(__file__).resolve().parent.parent
    target = Path(os.environ.get("CARGO_TARGET_DIR", root / "target"))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--criterion", type=Path,
                        default=Path(os.environ.get("CRITERION_HOME", target / "criterion")),
                        help="criterion's results (default: $CRITERION_HOME or target/criterion)")
    parser.add_argument("--e2e", type=Path, default=target / "e2e" / "results.tsv",
                        help="benches/e2e.sh's table (default: target/e2e/results.tsv)")
    parser.add_argument("--out-dir", type=Path, default=root / "docs",
                        help="where the SVGs go (default: docs/)")
    parser.add_argument("--note", default="",
                        help="appended to each chart's subtitle, e.g. how busy the machine was")
    args = parser.parse_args()
    note = f"; {args.note}" if args.note else ""

    drawn = 0
    results, sizes, when = read_peers(args.criterion)
    if results:
        out = args.out_dir / "bench-peers.svg"
        peers_chart(results, sizes, when, note, out)
        print(f"wrote {out} ({', '.join(results)})")
        drawn += 1
    else:
        print(f"chart.py: no criterion results under {args.criterion}; "
              "run cargo bench --bench canonicalize", file=sys.stderr)
    if args.e2e.is_file():
        facts, rows = read_e2e(args.e2e)
        out = args.out_dir / "bench-e2e.svg"
        e2e_chart(facts, rows, note, out)
        print(f"wrote {out} ({len(rows)} commands)")
        drawn += 1
    else:
        print(f"chart.py: {args.e2e} not found; run benches/e2e.sh", file=sys.stderr)
    return 0 if drawn else 1


if __name__ == "__main__":
    sys.exit(main())
