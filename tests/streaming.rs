//! Streaming: a record that arrives on a pipe is written out while the pipe
//! is still open (`tail -f access.log | canonurl --unique`), not when a piece
//! fills up or the input ends.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn first_output_line_while_stdin_is_open(args: &[&str], input: &[u8]) -> Option<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_canonurl"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("canonurl runs");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    stdin.write_all(input).expect("write");
    stdin.flush().expect("flush");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    // Generous: the machine may be busy; without streaming the answer would
    // never come while stdin is open.
    let got = rx.recv_timeout(Duration::from_secs(20)).ok();
    drop(stdin);
    let _ = child.wait();
    got
}

const RECORD: &[u8] =
    b"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a/./b HTTP/1.1\" 200 1 \"-\" \"ua\"\n";

#[test]
fn a_record_on_an_open_pipe_is_written_at_once() {
    for args in [
        &["-f", "combined"][..],
        &["-f", "combined", "--unique"][..],
        &["-f", "combined", "--pipe", "-j", "2"][..],
    ] {
        let line = first_output_line_while_stdin_is_open(args, RECORD);
        assert_eq!(line.as_deref(), Some("/a/b\n"), "{args:?}");
    }
}

#[test]
fn format_detection_waits_for_no_more_than_what_arrived() {
    // With auto detection the first piece decides the format; it must not
    // wait for a full piece either.
    let line = first_output_line_while_stdin_is_open(&[], RECORD);
    assert_eq!(line.as_deref(), Some("/a/b\n"));
}
