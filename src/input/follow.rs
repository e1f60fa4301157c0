//! Following a file as it grows, as `tail -F` does (`--follow`).
//!
//! [`FollowReader`] reads a file to its end and then, instead of returning
//! end-of-input, waits for more: it polls the file every [`POLL`]. Rotation
//! is seen by name, as `tail -F` sees it:
//!
//! - **rename and create** (`logrotate`'s default, `create`): the path now
//!   names another file (device and inode differ). The old file is read to
//!   its end first (a writer may still add to it until it reopens its log),
//!   then the new one from its start. While the path names no file (between
//!   the rename and the create) the reader keeps reading the old file and
//!   waits.
//! - **truncation** (`copytruncate`, `> access.log`): the file is shorter than
//!   the position read; it is read again from its start.
//!
//! To the chunker and the pipeline this is one input, one stream of lines:
//! `--unique`/`--count` state is kept across rotations, and line numbers in
//! diagnostics count the lines read since the run started, across files
//! (they are not line numbers within the current file). So that a line never
//! joins bytes of two files, a file whose last line has no line end yet when
//! the reader moves on (to the next file, or to the start after truncation)
//! gets one: that partial line is a line of its own.
//!
//! The reader ends when its stop flag is set (the command sets it on SIGINT
//! and SIGTERM): it reads on to the file's current end (and through a
//! rotation that it sees then), and returns end-of-input. A last line
//! without a line end is then handed out as such, as at the end of a file.
//!
//! Limits, shared with `tail -F`: bytes that a writer adds to the old file
//! after the reader has moved on to the new one are not read; a truncation
//! is seen only if the file is still shorter than the position read when
//! the reader next looks (within [`POLL`] of being idle); rotation by
//! rename is seen by device and inode, so on platforms without them (not
//! Unix) only truncation is.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::{Compression, Input};

/// How often an idle reader looks at the file: short enough that lines show
/// up and a stop takes effect promptly, long enough that the two system
/// calls it costs (`read`, `stat`) do not matter. (Polling needs no extra
/// dependency and works on every file system, network ones included, where
/// change notification does not.)
pub const POLL: Duration = Duration::from_millis(100);

/// Which file a path names: device and inode.
type Identity = Option<(u64, u64)>;

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> Identity {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> Identity {
    None
}

/// A file read as it grows; see the [module docs](self).
///
/// ```
/// use std::io::Read;
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::sync::Arc;
/// use canonurl::input::follow::FollowReader;
///
/// let dir = std::env::temp_dir().join("canonurl-doc-follow");
/// std::fs::create_dir_all(&dir).unwrap();
/// let log = dir.join("access.log");
/// std::fs::write(&log, "first\n").unwrap();
/// let stop = Arc::new(AtomicBool::new(false));
/// let mut reader = FollowReader::new(&log, Arc::clone(&stop)).unwrap();
/// let mut buf = [0u8; 64];
/// let n = reader.read(&mut buf).unwrap();
/// assert_eq!(&buf[..n], b"first\n");
/// // Rotated: renamed away, a new file created.
/// std::fs::rename(&log, dir.join("access.log.1")).unwrap();
/// std::fs::write(&log, "second\n").unwrap();
/// // At the end of the old file the reader would wait for more; stopped,
/// // it reads what is there (the new file too) and ends.
/// stop.store(true, Ordering::Relaxed);
/// let mut rest = String::new();
/// reader.read_to_string(&mut rest).unwrap();
/// assert_eq!(rest, "second\n");
/// ```
#[derive(Debug)]
pub struct FollowReader {
    path: PathBuf,
    file: File,
    id: Identity,
    /// The read position in `file`.
    pos: u64,
    /// The file the path names now, once a rotation was seen: read when
    /// `file` is read to its end.
    next: Option<(File, Identity)>,
    /// The last byte handed out ended a line (or nothing was handed out).
    at_line_start: bool,
    stop: Arc<AtomicBool>,
    /// The stop was seen: end at the next end of the data.
    stopping: bool,
}

/// What a look at the path found.
enum Change {
    None,
    Truncated,
    Replaced(File, Identity),
}

impl FollowReader {
    /// Opens `path` for following until `stop` is set. Fails when it cannot
    /// be opened, is not a regular file, or is compressed (a compressed file
    /// is not appended to line by line, so it cannot be followed).
    pub fn new(path: &Path, stop: Arc<AtomicBool>) -> io::Result<FollowReader> {
        let mut file = File::open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file (a pipe or a device streams without --follow)",
            ));
        }
        let head = super::stream::read_head(&mut file, 4)?;
        let compression = Compression::sniff(&head);
        if compression != Compression::None {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{}-compressed; only an uncompressed file can be followed",
                    compression.name()
                ),
            ));
        }
        file.seek(SeekFrom::Start(0))?;
        Ok(FollowReader {
            path: path.to_path_buf(),
            file,
            id: identity(&meta),
            pos: 0,
            next: None,
            at_line_start: true,
            stop,
            stopping: false,
        })
    }

    /// Looks at the path and at the open file.
    fn check(&mut self) -> io::Result<Change> {
        // By name first: after a rename the open file looks as before. A
        // path that names nothing (rotation under way) or cannot be opened
        // for now is waited for, as `tail -F` does.
        if let Ok(meta) = std::fs::metadata(&self.path) {
            let id = identity(&meta);
            if meta.is_file() && id != self.id {
                if let Ok(file) = File::open(&self.path) {
                    // The identity of what was opened, which may be newer
                    // than what was looked at.
                    let meta = file.metadata()?;
                    let id = identity(&meta);
                    if meta.is_file() && id != self.id {
                        return Ok(Change::Replaced(file, id));
                    }
                }
            }
        }
        if self.file.metadata()?.len() < self.pos {
            return Ok(Change::Truncated);
        }
        Ok(Change::None)
    }

    /// Puts a line end into `buf` when the last line handed out has none,
    /// before the reader moves on to other bytes.
    fn end_line(&mut self, buf: &mut [u8]) -> Option<usize> {
        if self.at_line_start {
            return None;
        }
        self.at_line_start = true;
        buf[0] = b'\n';
        Some(1)
    }
}

impl Read for FollowReader {
    /// Reads what the file has; at its end, waits for more (or a rotation)
    /// and returns 0 only once the stop flag is set.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let mut n = match self.file.read(buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n > 0 {
                self.pos += n as u64;
                // The chunker hands out the lines it has when a read comes
                // back short, and reads on after a full one. A full read
                // that ends at the file's end would leave its lines waiting
                // for the next write: give back its last byte, so that the
                // read is short and the next one returns that byte.
                if n == buf.len() && n > 1 && self.file.metadata()?.len() <= self.pos {
                    self.file.seek(SeekFrom::Current(-1))?;
                    self.pos -= 1;
                    n -= 1;
                }
                self.at_line_start = buf[n - 1] == b'\n';
                return Ok(n);
            }
            // At the end of the data.
            if let Some((file, id)) = self.next.take() {
                // The old file is read to its end: go on with the new one.
                self.file = file;
                self.id = id;
                self.pos = 0;
                if let Some(n) = self.end_line(buf) {
                    return Ok(n);
                }
                continue;
            }
            if self.stopping {
                return Ok(0);
            }
            // Seen before looking at the file, so that what was written
            // before the stop is read.
            let stop = self.stop.load(Ordering::Relaxed);
            let change = self.check()?;
            self.stopping = stop;
            match change {
                // Read the old file to its end first, then the new one.
                Change::Replaced(file, id) => self.next = Some((file, id)),
                Change::Truncated => {
                    self.file.seek(SeekFrom::Start(0))?;
                    self.pos = 0;
                    if let Some(n) = self.end_line(buf) {
                        return Ok(n);
                    }
                }
                Change::None if stop => return Ok(0),
                Change::None => std::thread::sleep(POLL),
            }
        }
    }
}

/// Opens `path` for following until `stop` is set: an [`Input`] without a
/// size (so the chunker hands out lines as they arrive), not compressed.
pub(crate) fn open(path: &Path, stop: Arc<AtomicBool>) -> io::Result<Input> {
    Ok(Input {
        reader: Box::new(FollowReader::new(path, stop)?),
        head: Vec::new(),
        compression: Compression::None,
        size: None,
        counted: false,
        file: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "canonurl-follow-unit-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("log")
    }

    fn append(path: &Path, data: &[u8]) {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .unwrap();
        f.write_all(data).unwrap();
    }

    /// A stop flag that a watchdog sets after a while: a read that would
    /// wait for ever ends instead, and the test fails.
    fn stop_flag() -> Arc<AtomicBool> {
        let stop = Arc::new(AtomicBool::new(false));
        let watchdog = Arc::downgrade(&stop);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(20));
            if let Some(stop) = watchdog.upgrade() {
                stop.store(true, Ordering::Relaxed);
            }
        });
        stop
    }

    /// Reads until `want` bytes came; fails at the end of the input.
    fn read_n(r: &mut FollowReader, want: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut buf = [0u8; 64];
        while out.len() < want {
            let n = r.read(&mut buf).unwrap();
            assert!(n > 0, "end of input before the stop: {out:?}");
            out.extend_from_slice(&buf[..n]);
        }
        out
    }

    #[test]
    fn follows_rename_truncation_and_ends_on_stop() {
        let path = temp("rotate");
        append(&path, b"a\nb");
        let stop = stop_flag();
        let mut r = FollowReader::new(&path, Arc::clone(&stop)).unwrap();
        assert_eq!(read_n(&mut r, 3), b"a\nb");
        // Rename, the old file still written, then a new file.
        let old = path.with_extension("1");
        std::fs::rename(&path, &old).unwrap();
        append(&old, b"c\n");
        assert_eq!(read_n(&mut r, 2), b"c\n");
        // The old file's partial last line is ended before the new file.
        append(&old, b"e");
        append(&path, b"dddd");
        assert_eq!(read_n(&mut r, 6), b"e\ndddd");
        // Truncation: shorter than read, read again from the start; the
        // partial line is ended first.
        std::fs::write(&path, b"").unwrap();
        append(&path, b"f\n");
        assert_eq!(read_n(&mut r, 3), b"\nf\n");
        append(&path, b"g\n");
        stop.store(true, Ordering::Relaxed);
        // What was written before the stop is read, then the input ends.
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, b"g\n");
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }

    #[test]
    fn a_full_read_at_the_end_of_the_file_is_short() {
        let path = temp("short");
        append(&path, b"0123456789\n");
        let mut r = FollowReader::new(&path, stop_flag()).unwrap();
        let mut buf = [0u8; 11];
        assert_eq!(r.read(&mut buf).unwrap(), 10);
        assert_eq!(r.read(&mut buf).unwrap(), 1);
        assert_eq!(buf[0], b'\n');
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }

    #[test]
    fn compressed_and_non_files_are_refused() {
        let path = temp("refused");
        std::fs::write(&path, [0x1f, 0x8b, 8, 0]).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let e = FollowReader::new(&path, Arc::clone(&stop)).unwrap_err();
        assert!(e.to_string().contains("gzip-compressed"), "{e}");
        let e = FollowReader::new(path.parent().unwrap(), stop).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
}
