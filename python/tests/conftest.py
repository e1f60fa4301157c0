"""Shared helpers of the pytest suite: where the shared data and the canonurl binary are."""

import os
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def shared_data() -> pathlib.Path | None:
    path = pathlib.Path(os.environ.get("CANONURL_SHARED_DATA") or ROOT.parent / "shared" / "data")
    return path if path.is_dir() else None


@pytest.fixture(scope="session")
def data() -> pathlib.Path:
    path = shared_data()
    if path is None:
        pytest.skip("shared data not found (../shared/data; set CANONURL_SHARED_DATA)")
    return path


@pytest.fixture(scope="session")
def canonurl_bin() -> str:
    """The canonurl command: $CANONURL_BIN (tests/python.rs passes the one cargo built),
    else target/release/canonurl, else one on PATH."""
    for candidate in (os.environ.get("CANONURL_BIN"), str(ROOT / "target" / "release" / "canonurl"),
                      shutil.which("canonurl")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    pytest.skip("the canonurl binary is not built (cargo build --release)")


def url_lines(path: pathlib.Path, limit: int | None = None) -> list[bytes]:
    """The lines of a URL list, as bytes, without line ends."""
    lines = path.read_bytes().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
    return lines[:limit] if limit else lines


DATASETS = ["kasztp.txt", "userbait.txt", "isaacs_files.txt", "node_files.txt"]
