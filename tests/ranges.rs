//! Byte ranges: a regular file is read by the workers themselves, range by
//! range, from maps of the file (`input::mapped`) or with `pread`
//! (`input::range`, `--no-mmap`), while a compressed file goes through the
//! reader thread's chunker. All three must give the same output, `--rejects`
//! lines, diagnostics and counts, whatever the piece size, the thread
//! count, the line limit and the mode.

use std::io::Write;
use std::path::{Path, PathBuf};

use canonurl::input::Source;
use canonurl::log::LogFormat;
use canonurl::pipeline::{self, Mode, Options, OutputFormat, Sinks};

/// Lines of every kind: URLs, blank lines, rejects, `\r\n`, a line longer
/// than the limits below, a last line without a line end.
fn log(lines: usize) -> Vec<u8> {
    let mut data = Vec::new();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..lines {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        match seed % 11 {
            0 => data.extend_from_slice(b"\n"),
            1 => data.extend_from_slice(b"http://exa<mple.com/bad\n"),
            2 => data.extend_from_slice(b"  \t\r\n"),
            3 => {
                data.extend_from_slice(b"http://long.example/");
                data.extend(std::iter::repeat_n(b'a', 150 + (seed % 300) as usize));
                data.push(b'\n');
            }
            4 => data.extend_from_slice(format!("HTTP://Ex{}.COM/a/../b\r\n", seed % 5).as_bytes()),
            _ => data
                .extend_from_slice(format!("https://a.example/p/{}?q={i}\n", seed % 97).as_bytes()),
        }
    }
    data.extend_from_slice(b"http://last.example/no-line-end");
    data
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Output, rejects, diagnostics and the counts of one run. The input's name
/// is replaced, since the two files have different ones.
fn run(path: &Path, opts: &Options) -> (Vec<u8>, String, String, String) {
    let (mut out, mut rejects, mut diag) = (Vec::new(), Vec::new(), Vec::new());
    let summary = pipeline::run(
        &[Source::Path(path.to_path_buf())],
        opts,
        Sinks {
            out: &mut out,
            rejects: Some(&mut rejects),
            diag: &mut diag,
            progress: None,
        },
    )
    .unwrap();
    let name = path.display().to_string();
    let s = &summary.stats;
    let counts = format!(
        "lines {} emitted {} urls {} skipped {:?} rejected {:?} bytes {}",
        s.lines, s.emitted, s.urls, s.skipped, s.rejected, s.bytes
    );
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).replace(&name, "INPUT");
    (out, text(rejects), text(diag), counts)
}

#[test]
fn ranges_give_what_the_chunker_gives() {
    let dir = tempfile::tempdir().unwrap();
    let data = log(3000);
    let plain = write(dir.path(), "urls.txt", &data);
    let gz = write(dir.path(), "urls.txt.gz", &gzip(&data));
    let mut runs = 0;
    for mode in [Mode::Records, Mode::Pipe, Mode::Unique, Mode::Count] {
        for (chunk_len, max_line, threads) in [
            (1, 100, 1),
            (7, 300, 2),
            (64, 1 << 20, 3),
            (4096, 200, 2),
            (1 << 20, 64, 1),
        ] {
            let opts = Options {
                format: Some(LogFormat::Plain),
                output: OutputFormat::Plain,
                mode,
                chunk_len,
                max_line,
                threads,
                rejects: true,
                max_diagnostics: 5,
                ..Options::default()
            };
            let by_chunker = run(&gz, &opts);
            for mmap in [true, false] {
                let by_ranges = run(
                    &plain,
                    &Options {
                        mmap,
                        ..opts.clone()
                    },
                );
                let what = format!(
                    "{mode:?}, chunk {chunk_len}, max line {max_line}, -j {threads}, mmap {mmap}"
                );
                assert_eq!(by_ranges.3, by_chunker.3, "{what}");
                assert_eq!(by_ranges.1, by_chunker.1, "--rejects: {what}");
                assert_eq!(by_ranges.2, by_chunker.2, "diagnostics: {what}");
                assert!(by_ranges.0 == by_chunker.0, "output differs: {what}");
                assert!(!by_ranges.0.is_empty() && !by_ranges.1.is_empty(), "{what}");
                runs += 1;
            }
        }
    }
    assert_eq!(runs, 40);
}

/// Mapped and read with `pread`, a file gives the same: lines straddling
/// the ends of 4 KiB pieces, lines running more than the map's 16 KiB past
/// their range's end (read with `pread` then) and longer than the line
/// limit, a file without a last line end, an empty file.
#[test]
fn mapped_and_read_files_give_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let mut long = Vec::new();
    for i in 0..400 {
        long.extend_from_slice(format!("https://a.example/{i}/").as_bytes());
        let len = match i % 40 {
            3 => 20_000,
            17 => 70_000,
            _ => i * 7 % 300,
        };
        long.extend(std::iter::repeat_n(b'x', len));
        long.extend_from_slice(if i.is_multiple_of(9) {
            &b"\r\n"[..]
        } else {
            b"\n"
        });
    }
    let mut no_end = long.clone();
    no_end.extend_from_slice(b"https://last.example/no-line-end");
    let files = [
        ("long.txt", long),
        ("no-end.txt", no_end),
        ("one.txt", b"https://one.example/a/../b".to_vec()),
        ("empty.txt", Vec::new()),
    ];
    for (name, data) in files {
        let path = write(dir.path(), name, &data);
        for (chunk_len, max_line, threads) in
            [(4096, 1 << 20, 1), (4096, 30_000, 2), (100, 1024, 2)]
        {
            for mode in [Mode::Records, Mode::Count] {
                let opts = Options {
                    format: Some(LogFormat::Plain),
                    mode,
                    chunk_len,
                    max_line,
                    threads,
                    rejects: true,
                    ..Options::default()
                };
                let mapped = run(&path, &opts);
                let read = run(
                    &path,
                    &Options {
                        mmap: false,
                        ..opts
                    },
                );
                let what = format!("{name}, {mode:?}, chunk {chunk_len}, max line {max_line}");
                assert_eq!(mapped, read, "{what}");
                if !data.is_empty() {
                    assert!(!mapped.0.is_empty(), "{what}");
                }
            }
        }
    }
}

#[test]
fn a_combined_log_by_ranges_numbers_its_rejects_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = Vec::new();
    for i in 0..500 {
        if i % 50 == 7 {
            data.extend_from_slice(b"not a log line\n");
        } else {
            data.extend_from_slice(
                format!("1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a/{i} HTTP/1.1\" 200 1 \"-\" \"ua\"\n")
                    .as_bytes(),
            );
        }
    }
    let path = write(dir.path(), "access.log", &data);
    let opts = Options {
        format: Some(LogFormat::Combined),
        chunk_len: 333,
        threads: 2,
        rejects: true,
        ..Options::default()
    };
    let (out, rejects, _, _) = run(&path, &opts);
    assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 490);
    let numbers: Vec<&str> = rejects
        .lines()
        .map(|l| l.split('\t').next().unwrap().trim_start_matches("INPUT:"))
        .collect();
    let expected: Vec<String> = (0..500)
        .filter(|i| i % 50 == 7)
        .map(|i| (i + 1).to_string())
        .collect();
    assert_eq!(numbers, expected);
}
