//! No heap allocation per URL on the writer thread of `--unique` and
//! `--count`: the distinct table grows its few buffers (a logarithmic
//! number of times) and writes every row through one reused buffer, in
//! memory and when it spills sorted runs past `--memory`.

use crate::counting;

use std::io::Write;
use std::path::PathBuf;

use canonurl::input::Source;
use canonurl::log::{Field, LogFormat};
use canonurl::pipeline::{self, Mode, Options, OutputFormat, Sinks};
use counting::count_allocations;

/// Distinct URLs in the input (each twice).
const URLS: usize = 100_000;

fn input() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("alloc-distinct-{}.txt", std::process::id()));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).expect("scratch file"));
    for round in 0..2 {
        for i in 0..URLS {
            // The second round in another order, so counts tie across runs.
            let i = if round == 0 { i } else { URLS - 1 - i };
            writeln!(f, "http://h{}.example/p/{i}?q={}", i % 100, i % 7).expect("write");
        }
    }
    f.flush().expect("flush");
    path
}

#[test]
fn writer_does_not_allocate_per_url() {
    let path = input();
    let sources = [Source::Path(path.clone())];
    for mode in [Mode::Unique, Mode::Count] {
        for output in [OutputFormat::Plain, OutputFormat::Jsonl] {
            for memory in [None, Some(1 << 20)] {
                let opts = Options {
                    format: Some(LogFormat::Plain),
                    field: Field::Both,
                    mode,
                    output,
                    threads: 1,
                    memory_limit: memory,
                    ..Options::default()
                };
                let mut written = CountingSink(0);
                let mut diag = std::io::sink();
                let mut summary = None;
                let allocations = count_allocations(|| {
                    summary = Some(
                        pipeline::run(
                            &sources,
                            &opts,
                            Sinks {
                                out: &mut written,
                                rejects: None,
                                diag: &mut diag,
                                progress: None,
                            },
                        )
                        .expect("run"),
                    );
                });
                let summary = summary.expect("ran");
                assert_eq!(summary.distinct, Some(URLS as u64));
                assert!(written.0 as usize >= URLS, "every URL was written");
                let spills = summary.spill.expect("spill statistics").table_spills;
                assert_eq!(spills > 0, memory.is_some(), "{mode:?} {memory:?}");
                eprintln!(
                    "{mode:?} {output:?} memory {memory:?}: {allocations} allocations for {URLS} distinct URLs, {spills} spills"
                );
                // Per piece, per table growth and per run, not per URL.
                assert!(
                    allocations < URLS / 50,
                    "{mode:?} {output:?} memory {memory:?}: {allocations} allocations"
                );
            }
        }
    }
    let _ = std::fs::remove_file(path);
}

/// Counts the rows written (lines), allocating nothing.
struct CountingSink(u64);

impl Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
