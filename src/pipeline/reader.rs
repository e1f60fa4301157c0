//! The reader thread: opens each input, settles its format, and cuts it
//! into pieces of whole lines for the workers.

use std::fs::File;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};

use super::stats::{FileReport, SkippedInput, Stats};
use super::{ByteRange, Event, FileCtx, Job, Mode, Options, OutputFormat};
use crate::input::mapped::MapSpans;
use crate::input::{self, Chunker, Input, Piece, Source};
use crate::log::detect::{detect_input, Undetected};
use crate::log::LogFormat;

/// Why a binary input is not read.
const BINARY: &str = "not a text log (binary: a NUL byte in its first bytes)";

/// How much of an input the format guess looks at.
const DETECT_BYTES: usize = 64 * 1024;

/// The reader's channels and shared flags.
pub(super) struct Reader<'a> {
    pub opts: &'a Options,
    pub jobs: Sender<Job>,
    /// Empty buffers: a fixed pool, so memory stays bounded.
    pub free: Receiver<Vec<u8>>,
    /// Raw (compressed) bytes read so far, for progress.
    pub raw_read: Arc<AtomicU64>,
    /// Set when the output failed: stop.
    pub stop: Arc<AtomicBool>,
    /// Ends followed inputs.
    pub follow_stop: Arc<AtomicBool>,
    /// Sequence number of the next job: the writer puts results back in
    /// this order.
    seq: u64,
    /// Buffers taken from the pool that did not go out in a piece (the end
    /// of an input, an error, an input that is not read on) must be made up
    /// for, or the pool shrinks by one per input until the reader waits
    /// forever. The reader counts them and uses a new empty buffer instead
    /// of waiting for one. (Not by sending to the pool itself: holding a
    /// sender would keep `recv` from failing when the writer has stopped.
    /// The workers of a run into sinks hold senders, but each gives its
    /// buffer back before it hands its piece to the writer, and stops when
    /// the writer is gone, so a waiting `recv` still gets a buffer or fails.)
    spare: usize,
    /// The workers read byte ranges into buffers of their own (a run into
    /// sinks: `worker::work`): ranges go out without one from the pool.
    own_buffers: bool,
}

/// The receiving side is gone (the writer stopped): stop reading.
struct Stopped;

impl<'a> Reader<'a> {
    pub(super) fn new(
        opts: &'a Options,
        jobs: Sender<Job>,
        free: Receiver<Vec<u8>>,
        raw_read: Arc<AtomicU64>,
        stop: Arc<AtomicBool>,
        follow_stop: Arc<AtomicBool>,
        own_buffers: bool,
    ) -> Reader<'a> {
        Reader {
            opts,
            jobs,
            free,
            raw_read,
            stop,
            follow_stop,
            seq: 0,
            spare: 0,
            own_buffers,
        }
    }

    /// Reads every input in order.
    pub(super) fn run(mut self, sources: &[Source]) {
        for (id, source) in sources.iter().enumerate() {
            if self.stop.load(Ordering::Relaxed) || self.input(id, source).is_err() {
                return;
            }
        }
    }

    fn send(&mut self, job: impl FnOnce(u64) -> Job) -> Result<(), Stopped> {
        let job = job(self.seq);
        self.seq += 1;
        self.jobs.send(job).map_err(|_| Stopped)
    }

    fn event(&mut self, event: Event) -> Result<(), Stopped> {
        self.send(|seq| Job::Event { seq, event })
    }

    fn take(&mut self) -> Result<Vec<u8>, Stopped> {
        if self.spare > 0 {
            self.spare -= 1;
            Ok(Vec::new())
        } else {
            self.free.recv().map_err(|_| Stopped)
        }
    }

    /// Reads one input: opens it, settles its format from its first piece,
    /// then hands out its pieces (by byte ranges when it can).
    fn input(&mut self, id: usize, source: &Source) -> Result<(), Stopped> {
        let name: Arc<str> = Arc::from(source.name());
        let mut report = FileReport {
            name: name.to_string(),
            format: None,
            detected: false,
            json_preset: None,
            compression: "none",
            error: None,
            stats: Stats::default(),
        };
        let input = match self.open(source) {
            Ok(input) => input,
            Err(error) => {
                report.error = Some(error);
                return self.event(Event::Start(Box::new(report)));
            }
        };
        report.compression = input.compression.name();
        let Input {
            reader,
            head,
            size,
            counted,
            file,
            ..
        } = input;
        let mut chunker = self.chunker(head, reader, size.is_none());
        let buf = self.take()?;
        let first = chunker.next_piece(buf);
        let Some(ctx) = self.settle(id, name, source, &mut chunker, &first, report)? else {
            return Ok(());
        };
        if let (Some(file), Some(len), Some(start)) = (file, size, self.range_start(&ctx, &first)) {
            return self.first_then_ranges(&ctx, first, file, start, len);
        }
        self.pieces(&ctx, &mut chunker, first, counted)
    }

    /// Opens `source`; the message of the input's error when it cannot be.
    fn open(&self, source: &Source) -> Result<Input, String> {
        let opened = match source {
            Source::Follow(path) => input::follow::open(path, Arc::clone(&self.follow_stop)),
            _ => input::open(source, Arc::clone(&self.raw_read)),
        };
        opened.map_err(|e| match e.kind() {
            // A compression that is not read: the message says which.
            io::ErrorKind::Unsupported => e.to_string(),
            _ => format!("cannot open: {e}"),
        })
    }

    /// The chunker of an open input (`head`, then `reader`), looking for
    /// the header lines of the given format (of any format while it is not
    /// known yet).
    fn chunker(&self, head: Vec<u8>, reader: Box<dyn Read + Send>, streaming: bool) -> Chunker {
        let opts = self.opts;
        let mut chunker = Chunker::with_head(head, reader, opts.chunk_len, opts.max_line);
        chunker.track_header(
            opts.format
                .map_or_else(LogFormat::any_header_line, LogFormat::header_line),
        );
        chunker.set_streaming(streaming);
        chunker
    }

    /// Settles the input's format from its first piece and announces the
    /// input to the writer: its context, or `None` when it is not read on
    /// (binary, or a format that cannot be told: the event says so).
    fn settle(
        &mut self,
        id: usize,
        name: Arc<str>,
        source: &Source,
        chunker: &mut Chunker,
        first: &io::Result<Option<Piece>>,
        mut report: FileReport,
    ) -> Result<Option<Arc<FileCtx>>, Stopped> {
        let opts = self.opts;
        // A first line too long to read whole still shows the record's
        // shape in its first bytes.
        let sample: &[u8] = match first {
            Ok(Some(Piece::Lines { buf, .. }))
            | Ok(Some(Piece::TooLong { buf, .. }))
            | Ok(Some(Piece::Fragment { buf, .. })) => &buf[..buf.len().min(DETECT_BYTES)],
            _ => &[],
        };
        // What was read of the start, up to the sample's length: the first
        // piece may end before a NUL that the rest of the read holds.
        let rest = chunker.carried();
        let rest = &rest[..rest.len().min(DETECT_BYTES - sample.len())];
        let binary = input::is_binary(sample) || input::is_binary(rest);
        // A file found in a directory is one of many, and directories of
        // logs hold other files (error logs, READMEs, archives): one that
        // is not a log of a format told is skipped with a warning. A file
        // named on the command line was meant: there it is an error.
        let found = matches!(source, Source::Found(_));
        if found && binary {
            self.spare += 1;
            let skipped = SkippedInput {
                name: report.name,
                reason: "binary",
            };
            return self
                .event(Event::Skipped(skipped, BINARY.to_string()))
                .map(|()| None);
        }
        report.detected = opts.format.is_none();
        let detected = match detect_input(opts.format, opts.json_paths.as_ref(), sample) {
            Ok(detected) => detected,
            Err(undetected) => {
                self.spare += 1;
                // A format given (JSON whose objects match no preset) says
                // what it found: the file was read as that format, binary
                // or not (a log truncated by copytruncate starts with NULs).
                let why = match binary && opts.format.is_none() {
                    true => format!("{BINARY}; give the format with -f if it is a log"),
                    false => undetected_message(&undetected, sample),
                };
                if found {
                    let skipped = SkippedInput {
                        name: report.name,
                        reason: "unknown-format",
                    };
                    return self.event(Event::Skipped(skipped, why)).map(|()| None);
                }
                report.error = Some(why);
                self.event(Event::Start(Box::new(report)))?;
                return Ok(None);
            }
        };
        // The first piece was read before the format was known.
        match first {
            Ok(Some(Piece::Lines { buf, .. })) => {
                chunker.retrack_header(detected.format.header_line(), buf);
            }
            _ => chunker.track_header(detected.format.header_line()),
        }
        report.format = Some(detected.format);
        report.json_preset = detected.json_preset;
        let ctx = Arc::new(FileCtx {
            id,
            name,
            format: detected.format,
            json_paths: detected.json_paths,
        });
        self.event(Event::Start(Box::new(report)))?;
        Ok(Some(ctx))
    }

    /// Where the byte ranges of a regular file start (the end of its first
    /// piece), when the workers read the rest of it themselves, so that the
    /// kernel's copy runs on every core. Not for formats whose lines depend
    /// on a header line before them, nor when rows are numbered (a range
    /// does not know its first line's number), nor after a first piece
    /// that is not whole lines.
    fn range_start(&self, ctx: &FileCtx, first: &io::Result<Option<Piece>>) -> Option<u64> {
        let opts = self.opts;
        let numbered = matches!(opts.mode, Mode::Records | Mode::Pipe)
            && matches!(opts.output, OutputFormat::Tsv | OutputFormat::Jsonl);
        match first {
            Ok(Some(Piece::Lines { buf, .. })) if !numbered && !ctx.format.has_header_state() => {
                Some(buf.len() as u64)
            }
            _ => None,
        }
    }

    /// Hands out the first piece, then `start..len` of `file` as byte
    /// ranges, then the input's end.
    fn first_then_ranges(
        &mut self,
        ctx: &Arc<FileCtx>,
        first: io::Result<Option<Piece>>,
        file: Arc<File>,
        start: u64,
        len: u64,
    ) -> Result<(), Stopped> {
        self.raw_read.fetch_add(start, Ordering::Relaxed);
        if let Ok(Some(piece)) = first {
            let piece_ctx = Arc::clone(ctx);
            self.send(|seq| Job::Piece {
                seq,
                ctx: piece_ctx,
                piece,
            })?;
        }
        self.ranges(ctx, file, start, len)?;
        self.event(Event::End(None))
    }

    /// Hands out the chunker's pieces, from `first` to the end of the
    /// input, and then the input's end (with its error, if any).
    fn pieces(
        &mut self,
        ctx: &Arc<FileCtx>,
        chunker: &mut Chunker,
        first: io::Result<Option<Piece>>,
        counted: bool,
    ) -> Result<(), Stopped> {
        let mut next = first;
        let mut handed_out = 0;
        let end = loop {
            if !counted {
                // Uncompressed: the bytes handed out are the bytes read.
                self.raw_read
                    .fetch_add(chunker.bytes - handed_out, Ordering::Relaxed);
                handed_out = chunker.bytes;
            }
            match next {
                Ok(Some(piece)) => {
                    let ctx = Arc::clone(ctx);
                    self.send(|seq| Job::Piece { seq, ctx, piece })?;
                }
                Ok(None) => {
                    self.spare += 1;
                    break None;
                }
                Err(e) => {
                    self.spare += 1;
                    break Some(read_error(&e));
                }
            }
            if self.stop.load(Ordering::Relaxed) {
                return Err(Stopped);
            }
            let buf = self.take()?;
            next = chunker.next_piece(buf);
        };
        self.event(Event::End(end))
    }
}

impl Reader<'_> {
    /// Hands out `start..len` of `file` as byte ranges of a piece's length.
    fn ranges(
        &mut self,
        ctx: &Arc<FileCtx>,
        file: Arc<File>,
        mut start: u64,
        len: u64,
    ) -> Result<(), Stopped> {
        let chunk = self.opts.chunk_len.max(1) as u64;
        let mut spans = MapSpans::new();
        while start < len {
            if self.stop.load(Ordering::Relaxed) {
                return Err(Stopped);
            }
            let end = start.saturating_add(chunk).min(len);
            let buf = match self.own_buffers {
                true => None,
                false => Some(self.take()?),
            };
            // Mapped here (a span of ranges at a time), with its pages
            // populated, while the workers read the ranges before it: see
            // `input/mapped.rs`.
            let map = match self.opts.mmap {
                true => spans.range(&file, start, end, len),
                false => None,
            };
            let range = ByteRange {
                file: Arc::clone(&file),
                start,
                end,
                file_len: len,
                map,
            };
            let ctx = Arc::clone(ctx);
            self.send(|seq| Job::Range {
                seq,
                ctx,
                range,
                buf,
            })?;
            self.raw_read.fetch_add(end - start, Ordering::Relaxed);
            start = end;
        }
        Ok(())
    }
}

fn read_error(e: &io::Error) -> String {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        // The decoder's own words (`failed to fill whole buffer`, from
        // the read that found the end) say nothing more to a reader.
        "input is truncated (compressed stream ends early)".to_string()
    } else {
        format!("read error: {e}")
    }
}

/// What to tell the user about an input whose format cannot be told.
#[cold]
fn undetected_message(undetected: &Undetected, sample: &[u8]) -> String {
    match undetected {
        Undetected::JsonFields(keys) => {
            const SHOWN: usize = 16;
            let mut list = keys
                .iter()
                .take(SHOWN)
                .map(|k| k.chars().take(40).collect::<String>())
                .collect::<Vec<_>>()
                .join(", ");
            if keys.len() > SHOWN {
                list.push_str(", ...");
            }
            format!(
                "JSON log whose fields match no preset (first record has: {list}); \
                 give the paths with --json-target/--json-request, --json-host, \
                 --json-scheme, --json-referer, or a --json-preset"
            )
        }
        _ => {
            let why = crate::log::detect::why_undetected(sample)
                .map(|why| format!("{why}; "))
                .unwrap_or_default();
            format!(
                "cannot detect the log format ({why}first line: {}); give it with -f",
                first_line_preview(sample)
            )
        }
    }
}

fn first_line_preview(sample: &[u8]) -> String {
    let line = sample.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = &line[..line.len().min(80)];
    // bstr shows bytes that are not UTF-8 as `\xFF`, losing none.
    format!("{:?}", bstr::BStr::new(line))
}
