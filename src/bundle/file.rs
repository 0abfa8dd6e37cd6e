//! The bundle file: a fixed header, then one zstd stream of checksummed frames.
//!
//! ```text
//! "klogscan-bundle\n"  16 bytes, the magic
//! version              u32, little endian: FORMAT_VERSION
//! zstd stream          (with zstd's own content checksum) of frames:
//!     tag u8 | length u32 LE | payload | CRC-32C of tag, length and payload (u32 LE)
//! ```
//!
//! The last frame is [`Tag::End`], whose payload is the number of frames before it: a
//! file cut anywhere (a copy that stopped, a disk that filled) lacks it and reads as
//! truncated; a flipped bit fails zstd's checksum or a frame's CRC. Frames are written as
//! the collect produces them (nothing is buffered beyond one frame) and read one at a
//! time, each at most [`MAX_FRAME`] bytes.

use std::io::{self, Read, Write};

/// The first bytes of every bundle.
pub const MAGIC: &[u8; 16] = b"klogscan-bundle\n";
/// The version of the bundle format this build writes and reads. 2: the rest frame
/// carries the KRaft metadata logs and the small checkpoint files the cluster stage reads.
/// 3: a truncating partition's frame carries its recovery plan (the lost-data check's
/// input). 4: the header's options record whether the collect replayed the remote
/// history (`--remote-storage`), and a partition's frame carries its damaged remote
/// batches (what the merge links to the remote copy's finding). 5: a truncating
/// partition's recovery plan carries the transactions its truncation leaves open (the
/// input of `transaction_reopened_at_recovery`). 6: a KRaft metadata log carries the epoch
/// of its last batch (which copy of a cluster's log the history replays) and the records its
/// replay could not apply, and a partition's frame all its damaged batches (local ones too:
/// the lost-data check reads a copy's own damage). 7: a recovery stop's reason is stored
/// typed (`recovery::StopReason`, an object), not as its words: a build that reads 6 only
/// refuses it by its version instead of failing on the object. 8: a KRaft metadata log's
/// copy ends where the node's recovery truncates it (its first segment batch failing its
/// CRC: `MetadataLog::recovery_stop`, the records after it left out); a bundle of 6 or 7
/// carries them, and its merged history would replay them where a scan does not. 9: the
/// small files the collect could not read (`Rest::unread_small_files`): a bundle of 8
/// records such a `leader-epoch-checkpoint` as absent, and its merge would give verdicts
/// the scan withholds. 10: a recovery plan says where the load fails before recovering
/// anything (`load_fails`) and that the log start rests on a checkpoint the collect could
/// not read (`log_start_unread`), which the lost-data check reads; and the partition
/// stage's findings added since 9 (the KRaft start's reads of its metadata log) travel in
/// the frames: a 9 merged here would give a report the scan does not. 11: each committed
/// offset of a `__consumer_offsets` partition's load carries a value v1's expiry time and
/// the rule its coordinator's cleanup expires it by (`GroupCommit::expiry`), which the
/// consumer view and `committed_offset_below_log_start` read. 12: a partition's replay
/// outcome carries its producers' first transactional batches above sequence 0
/// (`ReplayOutcome::first_txn_batches`), which the transaction join holds against the
/// coordinator's transaction version (`invalid_first_sequence` of a TV2 producer): an 11
/// merged here would miss the findings the scan gives.
/// Older bundles lack what they added, and are refused rather than merged without it (the
/// merged report would differ from the scan's).
pub const FORMAT_VERSION: u32 = 12;
/// The oldest bundle format this build reads ([`FORMAT_VERSION`] and the ones since).
pub const OLDEST_READ_VERSION: u32 = 12;
/// The largest frame a reader accepts (a partition's results, a fingerprint block).
pub const MAX_FRAME: u32 = 1 << 30;
/// The most a bundle's frames may expand to, per byte of the file read so far (above
/// [`EXPANSION_FLOOR`]): a decompression bomb — a few kilobytes of zstd that inflate to
/// gigabytes of frames, each within [`MAX_FRAME`] — is refused as it inflates, before its
/// frames are held. What `collect` writes stays far below: 2.4–8.4× for the testkit's
/// scenarios and the real-data brokers, ≈ 62× for 1 000 near-identical generated
/// partitions (`examples/merge_scale`); a 61 KB bomb read whole took 2.1 GB and 11 s per
/// 600 MB frame.
pub const MAX_EXPANSION: u64 = 1000;
/// The frames' size a bundle may reach whatever its expansion (small bundles are never
/// refused for their ratio alone).
pub const EXPANSION_FLOOR: u64 = 64 << 20;
/// Bytes a frame's payload is read in, each step checked against [`MAX_EXPANSION`].
const READ_STEP: u64 = 8 << 20;

/// What a frame holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Tag {
    Header = 1,
    Inventory = 2,
    Partition = 3,
    Fingerprints = 4,
    Rest = 5,
    End = 0xff,
}

impl Tag {
    fn of(b: u8) -> Option<Tag> {
        Some(match b {
            1 => Tag::Header,
            2 => Tag::Inventory,
            3 => Tag::Partition,
            4 => Tag::Fingerprints,
            5 => Tag::Rest,
            0xff => Tag::End,
            _ => return None,
        })
    }
}

/// Why a file is not a readable bundle.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("not a klogscan bundle (no bundle header)")]
    NotABundle,
    #[error("bundle format version {found}; this klogscan ({}) reads versions {OLDEST_READ_VERSION} to {FORMAT_VERSION} (version 1 lacks the metadata logs and checkpoints the cluster checks read, version 2 the recovery plans the lost-data check reads, version 3 the remote history of tiered partitions, version 4 the transactions a truncation reopens, version 5 the epoch of each metadata log's last batch and the local damaged batches, versions 6 and 7 where the node's recovery ends each metadata log's copy, version 8 the small files the collect could not read, version 9 the recovery plans' load failures and unread log starts and the partition stage's newer findings, version 10 the committed offsets' expiry, version 11 the first transactional batches the TV2 sequence rule reads): collect again with this klogscan", env!("CARGO_PKG_VERSION"))]
    Version { found: u32 },
    #[error("truncated bundle (it ends before its last frame: an interrupted copy or collect)")]
    Truncated,
    #[error("corrupt bundle: {0}")]
    Corrupt(String),
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Open the bundle at `path` for reading, only if it is a regular file (symlinks to one
/// are followed): a bundle is read twice (its head, then its frames), which a pipe cannot
/// give, and a FIFO without a writer would block the open for ever. Checked before the
/// open and on the opened handle, opened with `O_NONBLOCK` (a FIFO swapped in between
/// cannot block); the error names the file type
/// ([`crate::read::segment::NotRegularFile`]).
pub(crate) fn open(path: &std::path::Path) -> io::Result<std::fs::File> {
    use crate::read::segment::{NotRegularFile, special_type};
    let refuse = |t| io::Error::new(io::ErrorKind::InvalidInput, NotRegularFile(t));
    if let Some(t) = special_type(std::fs::metadata(path)?.file_type()) {
        return Err(refuse(t));
    }
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = o.open(path)?;
    match special_type(file.metadata()?.file_type()) {
        Some(t) => Err(refuse(t)),
        None => Ok(file),
    }
}

/// Writes frames.
pub struct FrameWriter<W: Write> {
    zstd: zstd::Encoder<'static, W>,
    frames: u64,
}

impl<W: Write> FrameWriter<W> {
    /// Write the header and start the compressed stream.
    pub fn new(mut w: W) -> io::Result<Self> {
        w.write_all(MAGIC)?;
        w.write_all(&FORMAT_VERSION.to_le_bytes())?;
        let mut zstd = zstd::Encoder::new(w, 3)?;
        zstd.include_checksum(true)?;
        Ok(FrameWriter { zstd, frames: 0 })
    }

    /// Write one frame.
    pub fn frame(&mut self, tag: Tag, payload: &[u8]) -> io::Result<()> {
        let len = u32::try_from(payload.len())
            .ok()
            .filter(|&l| l <= MAX_FRAME)
            .ok_or_else(|| io::Error::other("bundle frame over 1 GiB"))?;
        let head = [[tag as u8].as_slice(), &len.to_le_bytes()].concat();
        let crc = crc32c::crc32c_append(crc32c::crc32c(&head), payload);
        self.zstd.write_all(&head)?;
        self.zstd.write_all(payload)?;
        self.zstd.write_all(&crc.to_le_bytes())?;
        self.frames += 1;
        Ok(())
    }

    /// Write the end frame and finish the stream.
    pub fn finish(mut self) -> io::Result<W> {
        let n = self.frames;
        self.frame(Tag::End, &n.to_le_bytes())?;
        self.zstd.finish()
    }
}

/// Reads frames.
pub struct FrameReader<R: Read> {
    zstd: zstd::Decoder<'static, io::BufReader<Counted<R>>>,
    frames: u64,
    ended: bool,
    /// Bytes of frames read (headers, payloads and CRCs).
    expanded: u64,
}

/// A reader that counts the bytes read through it (the bundle's compressed bytes).
struct Counted<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

fn stream_error(e: io::Error) -> FileError {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        FileError::Truncated
    } else {
        FileError::Corrupt(e.to_string())
    }
}

impl<R: Read> FrameReader<R> {
    /// Check the header; the stream is read frame by frame after it.
    pub fn new(mut r: R) -> Result<Self, FileError> {
        let mut head = [0u8; 20];
        let mut got = 0;
        while got < head.len() {
            match r.read(&mut head[got..])? {
                0 => break,
                n => got += n,
            }
        }
        if got < MAGIC.len() || &head[..16] != MAGIC {
            return Err(FileError::NotABundle);
        }
        if got < head.len() {
            return Err(FileError::Truncated);
        }
        let found = u32::from_le_bytes([head[16], head[17], head[18], head[19]]);
        if !(OLDEST_READ_VERSION..=FORMAT_VERSION).contains(&found) {
            return Err(FileError::Version { found });
        }
        let zstd = zstd::Decoder::new(Counted { inner: r, read: 20 }).map_err(stream_error)?;
        Ok(FrameReader {
            zstd,
            frames: 0,
            ended: false,
            expanded: 0,
        })
    }

    /// Count `n` more bytes of frames; an error once they expand past [`MAX_EXPANSION`]
    /// times the file's bytes read (and past [`EXPANSION_FLOOR`]).
    fn expand(&mut self, n: u64) -> Result<(), FileError> {
        self.expanded += n;
        let read = self.zstd.get_ref().get_ref().read;
        let allowed = read.saturating_mul(MAX_EXPANSION).max(EXPANSION_FLOOR);
        if self.expanded > allowed {
            return Err(FileError::Corrupt(format!(
                "its frames expand to more than {MAX_EXPANSION} times the file's bytes \
                 ({} bytes of frames from {read} bytes read): a decompression bomb, not \
                 what collect writes",
                self.expanded
            )));
        }
        Ok(())
    }

    /// A payload of `len` bytes, read in steps each checked by [`Self::expand`] (a bomb
    /// is refused before it is held).
    fn payload(&mut self, len: u32) -> Result<Vec<u8>, FileError> {
        let mut payload = Vec::new();
        let mut left = u64::from(len);
        while left > 0 {
            let step = left.min(READ_STEP);
            let got = (&mut self.zstd)
                .take(step)
                .read_to_end(&mut payload)
                .map_err(stream_error)?;
            self.expand(got as u64)?;
            if (got as u64) < step {
                return Err(FileError::Truncated);
            }
            left -= step;
        }
        Ok(payload)
    }

    /// The next frame; `None` after the end frame (checked: the count matches and nothing
    /// follows).
    pub fn next(&mut self) -> Result<Option<(Tag, Vec<u8>)>, FileError> {
        if self.ended {
            return Ok(None);
        }
        let mut head = [0u8; 5];
        self.zstd.read_exact(&mut head).map_err(stream_error)?;
        let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]);
        if len > MAX_FRAME {
            return Err(FileError::Corrupt(format!("frame of {len} bytes")));
        }
        self.expand(9)?;
        let payload = self.payload(len)?;
        let mut crc = [0u8; 4];
        self.zstd.read_exact(&mut crc).map_err(stream_error)?;
        if crc32c::crc32c_append(crc32c::crc32c(&head), &payload) != u32::from_le_bytes(crc) {
            return Err(FileError::Corrupt(format!(
                "checksum mismatch in frame {}",
                self.frames + 1
            )));
        }
        let tag = Tag::of(head[0])
            .ok_or_else(|| FileError::Corrupt(format!("unknown frame type {}", head[0])))?;
        if tag == Tag::End {
            let n = payload
                .get(..8)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
                .unwrap_or(u64::MAX);
            if n != self.frames {
                return Err(FileError::Corrupt(format!(
                    "end frame counts {n} frames, {} read",
                    self.frames
                )));
            }
            let mut rest = [0u8; 1];
            match self.zstd.read(&mut rest).map_err(stream_error)? {
                0 => {}
                _ => return Err(FileError::Corrupt("data after the end frame".into())),
            }
            self.ended = true;
            return Ok(None);
        }
        self.frames += 1;
        Ok(Some((tag, payload)))
    }
}
