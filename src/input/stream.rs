//! Opening an input: the file or stdin, its compression recognised by its
//! magic bytes and decompressed in-process.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use memchr::memchr;

use super::{follow, range, Compression, Source};

/// Bytes read from the start of an input to recognise its compression: the
/// longest magic of [`Compression::sniff`] and [`unread_compression`].
const HEAD_LEN: usize = 6;

/// Compressions and archives that are recognised by their magic bytes but
/// not read: their name and the command that writes their contents to
/// stdout (`FILE` stands for the input).
const UNREAD: &[(&[u8], &str, &str)] = &[
    (&[0x04, 0x22, 0x4d, 0x18], "lz4", "lz4 -dc FILE"),
    // The legacy lz4 frame, as `lz4 -l` writes it.
    (&[0x02, 0x21, 0x4c, 0x18], "lz4", "lz4 -dc FILE"),
    (b"PK\x03\x04", "zip", "unzip -p FILE"),
    (&[b'7', b'z', 0xbc, 0xaf, 0x27, 0x1c], "7z", "7z x -so FILE"),
    (b"LZIP", "lzip", "lzip -dc FILE"),
    (b"Rar!\x1a\x07", "rar", "unrar p -inul FILE"),
    // `compress` (.Z), which gzip reads.
    (&[0x1f, 0x9d], "compress", "gzip -dc FILE"),
];

/// The name of a compression or archive format that `head` starts with and
/// that is not read (lz4, zip, 7z, lzip, rar, compress), with the command
/// that decompresses it (`FILE` stands for the input). Brotli has no magic
/// bytes: it is not recognised.
pub(crate) fn unread_compression(head: &[u8]) -> Option<(&'static str, &'static str)> {
    UNREAD
        .iter()
        .find(|(magic, _, _)| head.starts_with(magic))
        .map(|&(_, name, command)| (name, command))
}

/// The error of an input in a compression that is not read: `lz4-compressed
/// input is not read; decompress it first (lz4 -dc FILE | canonurl ...)`,
/// of kind [`io::ErrorKind::Unsupported`].
fn unread_error(name: &str, command: &str, source: &Source) -> io::Error {
    let command = match source {
        Source::Stdin => format!("{} |", command.trim_end_matches(" FILE")),
        _ => format!("{} |", command.replace("FILE", &source.name())),
    };
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "{name}-compressed input is not read; decompress it first ({command} canonurl ...)"
        ),
    )
}

/// Whether the first decompressed bytes of an input show a binary file: a
/// NUL byte among them, as ripgrep and grep decide. A log line, in any of
/// the formats read, has none.
pub fn is_binary(start: &[u8]) -> bool {
    memchr(0, start).is_some()
}

/// An open input: decompressed bytes, and a counter of the raw bytes read
/// (for progress against the file size).
pub struct Input {
    /// The decompressed stream, after `head`.
    pub reader: Box<dyn Read + Send>,
    /// Bytes already read from the start of an uncompressed stream (to see
    /// its magic bytes); they come before `reader`'s.
    pub head: Vec<u8>,
    /// How it was compressed.
    pub compression: Compression,
    /// Size on disk, when it is a regular file (`None`: a pipe, a device,
    /// stdin).
    pub size: Option<u64>,
    /// True when the raw bytes are counted as they are read (compressed
    /// input); false when the caller counts the bytes it takes out.
    pub counted: bool,
    /// An uncompressed regular file, which workers can read by byte ranges
    /// with positioned reads instead of through `reader`.
    pub file: Option<Arc<File>>,
}

/// Counts the bytes read through it into a shared counter.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Size of the buffer that compressed bytes are read through.
const RAW_BUF_LEN: usize = 256 * 1024;

/// Opens `source`, detects compression and returns the decompressed stream.
/// `raw_read` counts the compressed bytes as they are read.
///
/// An uncompressed input is returned as it is (the file or stdin, after the
/// peeked `head`), so the chunker's reads go straight from the kernel into
/// its buffers: no intermediate buffer, no copy.
///
/// A [`Source::Follow`] opened here is followed until the process ends;
/// `follow::open` takes a flag that ends it.
pub fn open(source: &Source, raw_read: Arc<AtomicU64>) -> io::Result<Input> {
    let (mut raw, size, file): (Box<dyn Read + Send>, Option<u64>, _) = match source {
        Source::Stdin => (Box::new(io::stdin()), None, None),
        Source::Path(path) | Source::Found(path) => open_file(path)?,
        Source::Follow(path) => return follow::open(path, Arc::default()),
    };
    let head = read_head(&mut raw, HEAD_LEN)?;
    let compression = Compression::sniff(&head);
    if compression == Compression::None {
        if let Some((name, command)) = unread_compression(&head) {
            return Err(unread_error(name, command, source));
        }
        return Ok(Input {
            reader: raw,
            head,
            compression,
            size,
            counted: false,
            file,
        });
    }
    raw_read.fetch_add(head.len() as u64, Ordering::Relaxed);
    let buffered = BufReader::with_capacity(
        RAW_BUF_LEN,
        io::Cursor::new(head).chain(Counting {
            inner: raw,
            count: raw_read,
        }),
    );
    let reader: Box<dyn Read + Send> = match compression {
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(buffered)),
        Compression::Xz => Box::new(lzma_rust2::XzReader::new(buffered, true)),
        Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(buffered)),
        _ => Box::new(zstd::stream::read::Decoder::with_buffer(buffered)?),
    };
    Ok(Input {
        reader,
        head: Vec::new(),
        compression,
        size,
        counted: true,
        file: None,
    })
}

/// Opens a file: its reader, its size and (a regular file) a second handle
/// for positioned reads.
type Opened = (Box<dyn Read + Send>, Option<u64>, Option<Arc<File>>);

fn open_file(path: &Path) -> io::Result<Opened> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory",
        ));
    }
    let size = meta.is_file().then_some(meta.len());
    let positioned = match meta.is_file() && range::SUPPORTED {
        true => file.try_clone().ok().map(Arc::new),
        false => None,
    };
    Ok((Box::new(file), size, positioned))
}

/// Reads up to `n` bytes (fewer only at the end of the input): a pipe may
/// hand out the magic bytes over several reads.
pub(super) fn read_head(reader: &mut dyn Read, n: usize) -> io::Result<Vec<u8>> {
    let mut head = vec![0u8; n];
    let mut filled = 0;
    while filled < n {
        match reader.read(&mut head[filled..]) {
            Ok(0) => break,
            Ok(k) => filled += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    head.truncate(filled);
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unread_compressions_are_named() {
        let name = |h: &[u8]| unread_compression(h).map(|(n, _)| n);
        assert_eq!(name(b"\x04\x22\x4d\x18\x64\x40"), Some("lz4"));
        assert_eq!(name(b"PK\x03\x04\x14\x00"), Some("zip"));
        assert_eq!(name(b"7z\xbc\xaf\x27\x1c"), Some("7z"));
        assert_eq!(name(b"7z\xbc\xaf"), None);
        assert_eq!(name(b"PK\x03"), None);
        assert_eq!(name(b"GET /"), None);
        // What is read is not named.
        assert_eq!(name(b"\x1f\x8b\x08"), None);
        let e = unread_error("lz4", "lz4 -dc FILE", &Source::Path("a.lz4".into()));
        assert_eq!(e.kind(), io::ErrorKind::Unsupported);
        assert_eq!(
            e.to_string(),
            "lz4-compressed input is not read; decompress it first (lz4 -dc a.lz4 | canonurl ...)"
        );
        let e = unread_error("zip", "unzip -p FILE", &Source::Stdin);
        assert!(e.to_string().ends_with("(unzip -p | canonurl ...)"), "{e}");
    }

    #[test]
    fn binary_is_a_nul_byte() {
        assert!(is_binary(b"GET /\x00x"));
        assert!(!is_binary(b"GET /\xff\xfe x\n"));
        assert!(!is_binary(b""));
    }

    #[test]
    fn xz_and_bzip2_are_opened_and_read_to_the_end() {
        use std::io::Write;
        let data = b"one\ntwo\n".repeat(1000);
        // Two streams each, as `cat a.xz b.xz` makes them.
        let mut xz = Vec::new();
        let mut bz = Vec::new();
        for _ in 0..2 {
            let mut w =
                lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(1))
                    .unwrap();
            w.write_all(&data).unwrap();
            xz.extend(w.finish().unwrap());
            let mut w = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            w.write_all(&data).unwrap();
            bz.extend(w.finish().unwrap());
        }
        let dir = tempfile::tempdir().unwrap();
        for (bytes, want) in [(xz, Compression::Xz), (bz, Compression::Bzip2)] {
            let path = dir.path().join(want.name());
            std::fs::write(&path, &bytes).unwrap();
            let raw = Arc::new(AtomicU64::new(0));
            let mut input = open(&Source::Path(path), Arc::clone(&raw)).unwrap();
            assert_eq!(input.compression, want);
            let mut out = input.head.clone();
            input.reader.read_to_end(&mut out).unwrap();
            assert_eq!(out, data.repeat(2), "{want:?}");
            assert_eq!(raw.load(Ordering::Relaxed), bytes.len() as u64);
        }
    }
}
