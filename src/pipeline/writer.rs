//! The writer, on the calling thread: puts the workers' results back in
//! input order and writes them, or hands their URLs to the distinct table.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};

use super::distinct::Distinct;
use super::stats::Summary;
use super::worker::PieceOut;
use super::{Done, Event, FileCtx, Mode, Options, OutputFormat, Sinks};
use crate::output::tabs::escape_controls;
use crate::output::Columns;

/// What the writer does with the URLs of a piece, chosen once per run.
enum Collect {
    /// Write the rows as they come.
    Stream,
    /// `--unique`/`--count`: count each URL in the distinct table.
    Distinct(Box<Distinct>),
}

/// The writer's state.
pub(super) struct Writer<'a, 's> {
    pub opts: &'a Options,
    pub sinks: Sinks<'s>,
    /// Input buffers go back to the reader's pool (those the workers did
    /// not send back themselves), results to the workers.
    pub free: Sender<Vec<u8>>,
    pub out_free: Sender<Box<PieceOut>>,
    pub raw_read: &'a AtomicU64,
    /// Set when the output is closed: the reader stops.
    stop: [&'a AtomicBool; 2],
    collect: Collect,
    summary: Summary,
    /// Rejected lines described on stderr so far.
    described: usize,
    /// A `--rejects` line's input name and bytes, escaped.
    escaped: Vec<u8>,
}

impl<'a, 's> Writer<'a, 's> {
    pub(super) fn new(
        opts: &'a Options,
        sinks: Sinks<'s>,
        free: Sender<Vec<u8>>,
        out_free: Sender<Box<PieceOut>>,
        raw_read: &'a AtomicU64,
        stop: [&'a AtomicBool; 2],
    ) -> Writer<'a, 's> {
        let mut summary = Summary::default();
        let rules = opts
            .rules
            .as_ref()
            .map_or(opts.profile.rule_mask(), |r| r.any_enabled());
        summary.rules = (!rules.is_empty()).then_some(rules);
        let collect = match opts.mode {
            Mode::Unique | Mode::Count => Collect::Distinct(Box::new(Distinct::new(opts))),
            Mode::Records | Mode::Pipe => Collect::Stream,
        };
        Writer {
            opts,
            sinks,
            free,
            out_free,
            raw_read,
            stop,
            collect,
            summary,
            described: 0,
            escaped: Vec::new(),
        }
    }

    /// Writes every result in input order until the workers are done.
    ///
    /// When the reader of the output goes away (`| head`), the output ends
    /// there: the reader is stopped, and what was read until then is only
    /// counted, so that the summary (`--stats`) says what was read; the
    /// summary notes it ([`Summary::output_closed`]).
    pub(super) fn run(mut self, done: Receiver<Done>, started: Instant) -> io::Result<Summary> {
        let opts = self.opts;
        if opts.header && opts.output == OutputFormat::Tsv {
            let header = Columns::new(opts).header();
            let written = self.sinks.out.write_all(&header);
            self.output(written)?;
        }
        let mut waiting: BTreeMap<u64, Done> = BTreeMap::new();
        let mut next = 0u64;
        loop {
            let mut msg = match done.try_recv() {
                Ok(msg) => msg,
                Err(_) => {
                    // Nothing ready: the input is slower than we are (a pipe
                    // from `tail -f`). Flush what was written so that it is
                    // seen now, not when the buffer fills.
                    if !self.summary.output_closed {
                        let flushed = self.sinks.out.flush();
                        self.output(flushed)?;
                    }
                    match done.recv() {
                        Ok(msg) => msg,
                        Err(_) => break,
                    }
                }
            };
            if let Done::Piece { map, .. } = &mut msg {
                // Unmapped as soon as the worker is done with it (see
                // `Done::Piece::map`), not when its turn to be written comes.
                drop(map.take());
            }
            waiting.insert(msg.seq(), msg);
            while let Some(msg) = waiting.remove(&next) {
                next += 1;
                match msg {
                    Done::Event { event, .. } => self.event(event)?,
                    Done::Piece {
                        buf, result, ctx, ..
                    } => self.piece(buf, result, &ctx)?,
                }
            }
        }
        let total_rejected = self.summary.stats.rejected_total();
        let described = self.described as u64;
        if opts.max_diagnostics > 0 && total_rejected > described {
            writeln!(
                self.sinks.diag,
                "canonurl: {} more rejected lines not shown (--rejects FILE lists them all)",
                total_rejected - described
            )?;
        }
        if !self.summary.output_closed {
            let written = match std::mem::replace(&mut self.collect, Collect::Stream) {
                Collect::Distinct(d) => d.finish(self.sinks.out, &mut self.summary),
                Collect::Stream => Ok(()),
            }
            .and_then(|()| self.sinks.out.flush());
            self.output(written)?;
        }
        self.summary.seconds = started.elapsed().as_secs_f64();
        Ok(self.summary)
    }

    /// The result of a write to the output: a closed output (a broken pipe)
    /// ends the output and stops the reader; other errors end the run.
    fn output(&mut self, written: io::Result<()>) -> io::Result<()> {
        match written {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.summary.output_closed = true;
                for stop in self.stop {
                    stop.store(true, Ordering::Relaxed);
                }
                Ok(())
            }
            other => other,
        }
    }

    fn event(&mut self, event: Event) -> io::Result<()> {
        match event {
            Event::Start(report) => {
                if let Some(e) = &report.error {
                    writeln!(self.sinks.diag, "canonurl: {}: {e}", report.name)?;
                }
                self.summary.files.push(*report);
            }
            Event::End(Some(e)) => {
                if let Some(f) = self.summary.files.last_mut() {
                    writeln!(self.sinks.diag, "canonurl: {}: {e}", f.name)?;
                    f.error = Some(e);
                }
            }
            Event::End(None) => {}
            Event::Skipped(skipped, why) => {
                writeln!(
                    self.sinks.diag,
                    "canonurl: warning: {}: skipped: {why}",
                    skipped.name
                )?;
                self.summary.inputs_skipped.push(skipped);
            }
        }
        Ok(())
    }

    fn piece(
        &mut self,
        buf: Option<Vec<u8>>,
        mut result: Box<PieceOut>,
        ctx: &FileCtx,
    ) -> io::Result<()> {
        if !self.summary.output_closed {
            let written = match &mut self.collect {
                Collect::Distinct(d) => result.distinct.iter().try_for_each(|u| {
                    d.add(
                        self.sinks.out,
                        u.key,
                        u.field,
                        &result.out[u.start..u.end],
                        u.pre,
                    )
                }),
                Collect::Stream => self.sinks.out.write_all(&result.out),
            };
            self.output(written)?;
        }
        // The lines of this input before the piece: the pieces of an input
        // arrive in order, and each counts every one of its lines.
        let file = self.summary.files.last_mut();
        let before = file.as_ref().map_or(0, |f| f.stats.lines);
        self.rejected(&result, before, ctx)?;
        if let Some(e) = result.error.take() {
            // Said once per input: a file that shrank fails every range
            // past its new end alike (one line per range was 135 lines for
            // a 190 MB log cut to 1 MB).
            let file = self.summary.files.last_mut();
            if file.as_ref().is_none_or(|f| f.error.is_none()) {
                writeln!(self.sinks.diag, "canonurl: {}: {e}", ctx.name)?;
            }
            if let Some(f) = file {
                f.error.get_or_insert(e);
            }
        }
        if let Some(f) = self.summary.files.last_mut() {
            f.stats.merge(&result.stats);
        }
        self.summary.stats.merge(&result.stats);
        if let Some(p) = self.sinks.progress.as_mut() {
            p(
                self.raw_read.load(Ordering::Relaxed),
                self.summary.stats.lines,
            );
        }
        result.clear();
        let _ = self.out_free.send(result);
        if let Some(buf) = buf {
            let _ = super::worker::give_back(buf, Some(&self.free), self.opts.chunk_len);
        }
        Ok(())
    }

    /// Describes the first rejected lines on stderr and writes every one to
    /// `--rejects`, numbered in the input (`before`: its lines before the
    /// piece).
    fn rejected(&mut self, result: &PieceOut, before: u64, ctx: &FileCtx) -> io::Result<()> {
        for r in &result.rejected {
            let line = before + r.index + 1;
            if self.described < self.opts.max_diagnostics {
                writeln!(
                    self.sinks.diag,
                    "canonurl: {}:{line}: {} at byte {}",
                    ctx.name, r.why, r.at
                )?;
                self.described += 1;
            }
            if let Some(out) = self.sinks.rejects.as_mut() {
                let mut itoa = itoa::Buffer::new();
                // Escaped, the name as the line: one rejected line per
                // line, no raw control byte.
                self.escaped.clear();
                escape_controls(ctx.name.as_bytes(), &mut self.escaped);
                out.write_all(&self.escaped)?;
                out.write_all(b":")?;
                out.write_all(itoa.format(line).as_bytes())?;
                out.write_all(b"\t")?;
                out.write_all(r.why.name().as_bytes())?;
                out.write_all(b"\t")?;
                out.write_all(itoa.format(r.at).as_bytes())?;
                out.write_all(b"\t")?;
                self.escaped.clear();
                escape_controls(&result.rejected_lines[r.start..r.end], &mut self.escaped);
                out.write_all(&self.escaped)?;
                out.write_all(b"\n")?;
            }
        }
        Ok(())
    }
}
