//! Many inputs in one run: each input's end (and an input that is empty,
//! undetectable or unreadable) must give its buffer back to the pool, or a
//! run over more inputs than the pool has buffers stops forever. A regression
//! test: that is what happened before the pool was made up for.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RECORD: &[u8] =
    b"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.1\" 200 1 \"-\" \"ua\"\n";

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("many-inputs");
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_hundred_inputs_with_one_thread_finish() {
    let d = dir();
    let mut files = Vec::new();
    for i in 0..100 {
        let path = d.join(format!("in-{i}.log"));
        let contents: Vec<u8> = match i % 4 {
            0 => Vec::new(),                              // empty
            1 => b"\x00\x01\x02 garbage \x7f\n".to_vec(), // undetectable
            _ => RECORD.repeat(i),                        // i records
        };
        std::fs::write(&path, contents).unwrap();
        files.push(path);
    }
    files.push(d.join("does-not-exist.log"));
    let expected_records: usize = (0..100).filter(|i| i % 4 >= 2).sum();

    let mut child = Command::new(env!("CARGO_BIN_EXE_canonurl"))
        .args(["-j", "1", "--count"])
        .args(&files)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("canonurl did not finish 101 inputs within 60 s: the buffer pool ran dry");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    // Undetectable and missing inputs are fatal for themselves: exit 2, the
    // others are read.
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("/a\t{expected_records}\n")
    );
}
