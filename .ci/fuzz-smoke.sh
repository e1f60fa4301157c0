#!/usr/bin/env bash
# Fuzz smoke run: every cargo-fuzz target for ${FUZZ_SECONDS:-60} seconds on
# the stable toolchain, without sanitizer (`-s none`), one after the other on
# one job. Exits non-zero when a target crashes (the input is left in
# fuzz/artifacts/<target>/) or does not build.
#
# Installs cargo-fuzz 0.13.2 when `cargo fuzz` is missing. Seeds the corpora
# with fuzz/seed.py when the shared test data is there (../shared/data, or
# $CANONURL_SHARED_DATA); otherwise the targets start from an empty corpus
# (or from what fuzz/corpus/ already holds). Runs from the repository root.
#
# usage: .ci/fuzz-smoke.sh [TARGET...]     (default: every target)
set -euo pipefail

cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
shared="${CANONURL_SHARED_DATA:-../shared/data}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "==> installing cargo-fuzz 0.13.2"
    cargo install --locked cargo-fuzz --version 0.13.2
fi
cargo fuzz --version

if [ -d "$shared" ]; then
    echo "==> seeding fuzz/corpus from $shared"
    python3 fuzz/seed.py "$shared"
else
    echo "==> no shared data at $shared: not seeding (fuzz/corpus/ as it is)"
fi

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cd fuzz && cargo fuzz list)
fi

echo "==> building ${targets[*]}"
if [ "$#" -gt 0 ]; then
    # Only the targets named (every one is a build of its own, and
    # `whatwg_differential` builds ada-url's C++).
    for target in "${targets[@]}"; do
        (cd fuzz && cargo fuzz build -s none "$target")
    done
else
    (cd fuzz && cargo fuzz build -s none)
fi

failed=()
for target in "${targets[@]}"; do
    echo "==> $target: ${seconds}s"
    mkdir -p "fuzz/corpus/$target" "fuzz/artifacts/$target" fuzz/target
    log="fuzz/target/fuzz-smoke-$target.log"
    # -max_total_time ends the run; `timeout` only guards against a hang
    # that libFuzzer's own -timeout (per input) does not catch.
    set +e
    (cd fuzz && timeout "$((seconds + 300))" cargo fuzz run -s none -j1 "$target" -- \
        -max_total_time="$seconds" -print_final_stats=1) >"$log" 2>&1
    status=$?
    set -e
    grep -E '^(Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" || true
    if [ "$status" -ne 0 ]; then
        echo "==> $target: FAILED (exit $status); the end of $log:"
        tail -n 60 "$log"
        failed+=("$target")
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "==> fuzz smoke: crashes in ${failed[*]}"
    exit 1
fi
echo "==> fuzz smoke: ${#targets[@]} targets, ${seconds}s each, no crash"
