//! Inputs: where lines come from ([`Source`]) and how they are compressed
//! ([`Compression`]). The pipeline reads each input one of two ways: a
//! regular uncompressed file as byte ranges that the workers read
//! themselves, mapped into memory (`input/mapped.rs`) or with positioned
//! reads (`input/range.rs`, `--no-mmap`), anything else
//! (pipes, stdin, decompressors) opened and cut into pieces of whole lines
//! on the reader thread (`input/stream.rs`, `input/chunk.rs`); all three
//! are crate-internal. [`follow`] reads a file as it grows, as `tail -F`
//! does.
//!
//! Compressed input is recognised by its magic bytes, not by its name, and
//! decompressed in-process: gzip (all members of a multi-member file, as
//! `cat a.gz b.gz` or `logrotate` make them), zstd, xz and bzip2 (all
//! streams of a multi-stream file, for each). Other compressions that have
//! magic bytes (lz4, zip, 7z, ...) are named in the input's error, with
//! the command that decompresses them. Pipes and decompressors are read
//! with `read()` into a few reused buffers; a regular file's byte ranges are
//! each mapped on their own and unmapped once read, so the resident memory
//! stays at the ranges in flight instead of growing with the file.

use std::path::PathBuf;

mod chunk;
pub mod follow;
pub(crate) mod mapped;
pub(crate) mod range;
#[cfg(any(target_os = "linux", target_os = "android"))]
mod sigbus;
pub(crate) mod stream;

pub(crate) use chunk::{Chunker, Piece, TOO_LONG_HEAD};
pub(crate) use stream::{is_binary, open, Input};

/// Where lines come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Standard input (`-`, or no file given).
    Stdin,
    /// A file.
    Path(PathBuf),
    /// A file read as it grows, through rotations, as `tail -F` reads it
    /// (`--follow`): see [`follow`]. A separate kind of input rather than an
    /// option, because it is read differently from its first byte (no size,
    /// no end, no decompression) and only the reader needs to know.
    Follow(PathBuf),
    /// A file found in a directory argument: read as [`Source::Path`] is,
    /// except that a binary one (a NUL byte in its first decompressed bytes,
    /// as ripgrep and grep decide) is skipped rather than read.
    Found(PathBuf),
}

impl Source {
    /// The name used in diagnostics: the path as given, or `<stdin>`.
    ///
    /// ```
    /// use canonurl::input::Source;
    ///
    /// assert_eq!(Source::Stdin.name(), "<stdin>");
    /// assert_eq!(Source::Path("logs/access.log".into()).name(), "logs/access.log");
    /// ```
    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".to_string(),
            Source::Path(p) | Source::Follow(p) | Source::Found(p) => p.display().to_string(),
        }
    }
}

/// How an input is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed.
    None,
    /// gzip (RFC 1952), one or more members.
    Gzip,
    /// Zstandard.
    Zstd,
    /// xz (the `.xz` container of LZMA2), one or more streams.
    Xz,
    /// bzip2, one or more streams.
    Bzip2,
}

impl Compression {
    /// Recognises a compressed stream by its first bytes.
    ///
    /// ```
    /// use canonurl::input::Compression;
    ///
    /// assert_eq!(Compression::sniff(b"\x1f\x8b\x08\x00"), Compression::Gzip);
    /// assert_eq!(Compression::sniff(b"\x28\xb5\x2f\xfd"), Compression::Zstd);
    /// assert_eq!(Compression::sniff(b"GET / HTTP/1.1"), Compression::None);
    /// assert_eq!(Compression::Bzip2.name(), "bzip2");
    /// ```
    pub fn sniff(head: &[u8]) -> Compression {
        match head {
            [0x1f, 0x8b, ..] => Compression::Gzip,
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Compression::Zstd,
            [0xfd, b'7', b'z', b'X', b'Z', 0x00, ..] => Compression::Xz,
            // `BZh` and the block size in hundreds of kB, `1` to `9`.
            [b'B', b'Z', b'h', b'1'..=b'9', ..] => Compression::Bzip2,
            _ => Compression::None,
        }
    }

    /// The name of a compression or archive that `head` starts with and
    /// that is recognised but not read (`lz4`, `zip`, `7z`, `lzip`, `rar`,
    /// `compress`): the pipeline refuses such an input with an error that
    /// names it and the command that decompresses it. [`sniff`](Self::sniff)
    /// says `None` for these, as it does for plain text.
    ///
    /// ```
    /// use canonurl::input::Compression;
    ///
    /// assert_eq!(Compression::unread(b"\x1f\x9d\x90"), Some("compress"));
    /// assert_eq!(Compression::unread(b"\x04\x22\x4d\x18"), Some("lz4"));
    /// assert_eq!(Compression::unread(b"\x1f\x8b\x08"), None); // gzip is read
    /// assert_eq!(Compression::unread(b"GET / HTTP/1.1"), None);
    /// ```
    pub fn unread(head: &[u8]) -> Option<&'static str> {
        stream::unread_compression(head).map(|(name, _)| name)
    }

    /// `none`, `gzip`, `zstd`, `xz` or `bzip2`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
            Compression::Bzip2 => "bzip2",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compression_is_sniffed_by_magic_bytes() {
        use Compression::*;
        for (head, want) in [
            (&b"\x1f\x8b\x08\x00"[..], Gzip),
            (b"\x28\xb5\x2f\xfd\x00", Zstd),
            (b"\xfd7zXZ\x00\x00", Xz),
            (b"BZh91AY&SY", Bzip2),
            (b"BZh1", Bzip2),
            // Not quite: a block size of 0, a magic cut short, plain text.
            (b"BZh0", None),
            (b"BZh", None),
            (b"\xfd7zXZ", None),
            (b"\x1f", None),
            (b"1.2.3.4 - -", None),
            (b"", None),
        ] {
            assert_eq!(Compression::sniff(head), want, "{head:?}");
        }
        assert_eq!(Xz.name(), "xz");
        assert_eq!(Bzip2.name(), "bzip2");
    }
}
