#!/usr/bin/env python3
"""Builds the Python package's wheel, installs it into a virtual environment and runs its pytest suite.

What CI runs (through tests/python.rs in `cargo test --release`), and what a
developer runs by hand:

    python3 python/test_python.py [pytest arguments...]

1. creates target/python-venv and installs python/requirements-test.txt
   into it (pinned: maturin, pytest, pyarrow, polars, duckdb, pandas,
   pyspark), unless it is there already with the same requirements;
2. builds the wheel with `maturin build --release` into
   target/python-wheels (the build shares target/ with the root crate, see
   python/.cargo/config.toml) and installs it with pip;
3. runs `pytest python/tests` with that environment's Python, where
   `import canonurl` is the installed wheel, not the source tree.

Exit status: pytest's, or 1 when a step fails; 0 with a "skipping" notice
only when Python cannot make a virtual environment with pip.
"""

import glob
import os
import shutil
import subprocess
import sys
import time
import venv

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
VENV = os.path.join(TARGET, "python-venv")
WHEELS = os.path.join(TARGET, "python-wheels")
REQUIREMENTS = os.path.join(HERE, "requirements-test.txt")


def say(msg):
    print(f"test_python: {msg}", flush=True)


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def venv_bin(name):
    return os.path.join(VENV, "bin", name)


def ensure_venv():
    with open(REQUIREMENTS) as f:
        wanted = f.read()
    marker = os.path.join(VENV, ".installed")
    if os.path.exists(marker) and open(marker).read() == wanted:
        return
    if os.path.isdir(VENV):
        shutil.rmtree(VENV)
    try:
        venv.EnvBuilder(with_pip=True).create(VENV)
    except Exception as e:  # ensurepip missing (Debian without python3-venv)
        say(f"skipping: cannot create a virtual environment with pip: {e}")
        sys.exit(0)
    run([venv_bin("python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-r", REQUIREMENTS])
    with open(marker, "w") as f:
        f.write(wanted)


def build_and_install():
    if os.path.isdir(WHEELS):
        shutil.rmtree(WHEELS)
    run([venv_bin("maturin"), "build", "--release", "--quiet", "--interpreter", venv_bin("python"),
         "--out", WHEELS], cwd=HERE)
    wheels = glob.glob(os.path.join(WHEELS, "canonurl-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"test_python: FAIL: expected one wheel in {WHEELS}, found {wheels}")
    run([venv_bin("python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--force-reinstall", "--no-deps", wheels[0]])
    return wheels[0]


def main():
    started = time.monotonic()
    ensure_venv()
    installed = time.monotonic()
    wheel = build_and_install()
    built = time.monotonic()
    say(f"venv {installed - started:.0f} s, wheel {os.path.basename(wheel)} built and installed "
        f"in {built - installed:.0f} s")
    # pytest run from the repository root: python/tests goes on sys.path, python/
    # does not, so `import canonurl` is the wheel just installed.
    args = sys.argv[1:] or ["-q", "-rs"]
    code = subprocess.run([venv_bin("python"), "-P", "-m", "pytest", os.path.join(HERE, "tests"),
                           "-p", "no:cacheprovider", *args], cwd=ROOT).returncode
    say(f"pytest exited {code} after {time.monotonic() - built:.0f} s")
    sys.exit(code)


if __name__ == "__main__":
    main()
