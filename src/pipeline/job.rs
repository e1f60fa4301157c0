//! What goes between the threads: jobs from the reader to the workers,
//! results from the workers to the writer, and the input each belongs to.

use std::sync::Arc;

use super::stats::{self, FileReport};
use super::worker::PieceOut;
use crate::input::Piece;
use crate::log::{JsonPaths, LogFormat};

/// What a piece belongs to.
#[derive(Debug)]
pub struct FileCtx {
    /// Index of the input.
    pub id: usize,
    /// Name in diagnostics.
    pub name: Arc<str>,
    /// Its format.
    pub format: LogFormat,
    /// JSON paths, for `json`.
    pub json_paths: Option<JsonPaths>,
}

pub(super) enum Job {
    /// A piece the reader read.
    Piece {
        seq: u64,
        ctx: Arc<FileCtx>,
        piece: Piece,
    },
    /// A byte range of a regular file, for the worker to read into `buf`
    /// (a buffer of the reader's pool), or with `None` into a buffer of its
    /// own (a run into sinks: `worker::work`).
    Range {
        seq: u64,
        ctx: Arc<FileCtx>,
        range: ByteRange,
        buf: Option<Vec<u8>>,
    },
    Event {
        seq: u64,
        event: Event,
    },
}

/// A byte range of a regular file: the worker that takes it reads the lines
/// that start in `start..end` ([`crate::input::range`]).
pub(super) struct ByteRange {
    pub(super) file: Arc<std::fs::File>,
    pub(super) start: u64,
    pub(super) end: u64,
    /// The file's length when it was opened: no range reads past it.
    pub(super) file_len: u64,
    /// The range's bytes mapped, for the worker to read in place; `None`:
    /// it reads them with `pread` (`--no-mmap`, or the map failed).
    pub(super) map: Option<crate::input::mapped::MappedRange>,
}

pub(super) enum Event {
    /// An input starts: its report so far.
    Start(Box<FileReport>),
    /// An input ended, maybe with an error.
    End(Option<String>),
    /// An input was not read (a file found in a directory that is binary
    /// or of no format detected), and the warning that says why.
    Skipped(stats::SkippedInput, String),
}

pub(super) enum Done {
    Piece {
        seq: u64,
        /// The piece's input buffer, for the writer to send back to the
        /// reader's pool; `None` when the worker did (`worker::give_back`).
        buf: Option<Vec<u8>>,
        result: Box<PieceOut>,
        ctx: Arc<FileCtx>,
        /// The map the piece was read from, for the writer to unmap: the
        /// page tables' teardown then runs off the worker, which with
        /// `-j 1` is the run's critical path.
        map: Option<crate::input::mapped::MappedRange>,
    },
    Event {
        seq: u64,
        event: Event,
    },
}

impl Done {
    pub(super) fn seq(&self) -> u64 {
        match self {
            Done::Piece { seq, .. } | Done::Event { seq, .. } => *seq,
        }
    }
}
