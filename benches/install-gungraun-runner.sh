#!/usr/bin/env bash
# Installs gungraun-runner, the binary that `cargo bench --bench instructions`
# runs under the hood, at exactly the version of the `gungraun` dev-dependency
# (the two must match, or the bench refuses to run). Does nothing when that
# version is already on PATH.
#
# usage: benches/install-gungraun-runner.sh
#
# The version is read from Cargo.toml (`gungraun = "=X.Y.Z"`), so bumping the
# dev-dependency is the only edit needed. Needs valgrind to run the bench
# (not to install the runner).
set -euo pipefail
cd "$(dirname "$0")/.."

version="$(sed -n 's/^gungraun = "=\([0-9][0-9.]*\)".*/\1/p' Cargo.toml)"
if [ -z "$version" ]; then
    echo "install-gungraun-runner.sh: no exact 'gungraun = \"=X.Y.Z\"' line in Cargo.toml" >&2
    exit 2
fi

installed="$(gungraun-runner --version 2> /dev/null | awk '{ print $NF }' || true)"
if [ "$installed" = "$version" ]; then
    echo "gungraun-runner $version is already installed ($(command -v gungraun-runner))"
    exit 0
fi
if [ -n "$installed" ]; then
    echo "gungraun-runner $installed found, $version needed: reinstalling" >&2
fi

# Built in cargo's own temporary directory, not the project's target dir (it
# would share the lock with the bench builds and keep the runner's objects).
env -u CARGO_TARGET_DIR cargo install --locked --force gungraun-runner --version "$version"
gungraun-runner --version
