//! What a merge reads one bundle from.
//!
//! A bundle is read twice (its head, then its frames). A regular file is opened again for
//! each read; a pipe or FIFO cannot be read twice (`merge <(ssh broker klogscan collect …
//! --out -)`, or `merge -` for standard input), so its bytes are copied once into an
//! anonymous temporary file — unlinked, so nothing is left behind however the process
//! ends — checked to start as a bundle as soon as its first bytes are in (a stream of
//! anything else is refused before it reaches the disk), and bounded by the room on the
//! temporary file system (less a margin). A FIFO is opened without waiting for a writer
//! (a FIFO no process writes to reads as empty, and is refused as such); sockets and
//! devices are refused by [`super::file::open`].

use super::file::{FileError, MAGIC, open};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// A bundle to read: its file, or the bytes of a pipe copied once.
#[derive(Debug)]
pub(crate) enum Source {
    File(PathBuf),
    Spooled(std::fs::File),
}

/// The name of standard input among the bundles given to `merge`.
pub(crate) const STDIN: &str = "-";

impl Source {
    /// The source of the bundle at `path` (`-`: standard input).
    pub(crate) fn of(path: &Path) -> Result<Source, FileError> {
        if path.as_os_str() == STDIN {
            return spool(io::stdin().lock()).map(Source::Spooled);
        }
        if is_fifo(&std::fs::metadata(path)?) {
            return spool(open_fifo(path)?).map(Source::Spooled);
        }
        open(path)?;
        Ok(Source::File(path.to_path_buf()))
    }

    /// A reader of the bundle from its first byte.
    pub(crate) fn reader(&self) -> io::Result<std::fs::File> {
        match self {
            Source::File(path) => open(path),
            Source::Spooled(f) => {
                let mut f = f.try_clone()?;
                f.seek(SeekFrom::Start(0))?;
                Ok(f)
            }
        }
    }
}

#[cfg(unix)]
fn is_fifo(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    meta.file_type().is_fifo()
}

#[cfg(not(unix))]
fn is_fifo(_: &std::fs::Metadata) -> bool {
    false
}

/// Open a FIFO (or pipe) for reading without waiting for a writer, then make its reads
/// wait for the writer's bytes: only the open must not block.
#[cfg(unix)]
fn open_fifo(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let fd = f.as_raw_fd();
    // SAFETY: fcntl on a descriptor `f` owns, with integer arguments only.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(f)
}

#[cfg(not(unix))]
fn open_fifo(path: &Path) -> io::Result<std::fs::File> {
    open(path)
}

/// Copy `r` into an anonymous temporary file: refused as soon as its first bytes are not
/// a bundle's, and once it holds more than the temporary file system has room for.
fn spool(r: impl Read) -> Result<std::fs::File, FileError> {
    let base = crate::discover::archive::temp_base();
    let room = crate::discover::archive::room_on(&base).unwrap_or(u64::MAX);
    spool_into(r, tempfile::tempfile_in(&base)?, room, &base)
}

/// [`spool`] into `out`, at most `room` bytes (`base`: the temporary directory, named in
/// the error).
fn spool_into(
    mut r: impl Read,
    mut out: std::fs::File,
    room: u64,
    base: &Path,
) -> Result<std::fs::File, FileError> {
    let mut head: Vec<u8> = Vec::with_capacity(MAGIC.len());
    let mut buf = vec![0u8; 1 << 20];
    let mut total: u64 = 0;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if head.len() < MAGIC.len() {
            let take = (MAGIC.len() - head.len()).min(n);
            head.extend_from_slice(&buf[..take]);
            if head[..] != MAGIC[..head.len()] {
                return Err(FileError::NotABundle);
            }
        }
        total += n as u64;
        if total > room {
            return Err(FileError::Corrupt(format!(
                "more than the {room} bytes the temporary file system at {} has room for (beyond its margin) came through the pipe: set TMPDIR to a larger one, or write the bundle to a file first",
                crate::escape::path(base)
            )));
        }
        out.write_all(&buf[..n])?;
    }
    if total == 0 {
        return Err(FileError::Corrupt(
            "nothing came through the pipe (no writer, or it wrote nothing)".into(),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spooled(bytes: &[u8], room: u64) -> Result<Vec<u8>, FileError> {
        let d = tempfile::tempdir().unwrap();
        let f = tempfile::tempfile_in(d.path()).unwrap();
        let mut f = spool_into(bytes, f, room, d.path())?;
        f.seek(SeekFrom::Start(0)).unwrap();
        let mut out = Vec::new();
        f.read_to_end(&mut out).unwrap();
        Ok(out)
    }

    #[test]
    fn a_stream_is_copied_whole_once_it_starts_as_a_bundle() {
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&[7u8; 100]);
        assert_eq!(spooled(&b, 1 << 20).unwrap(), b);
        // A stream of anything else is refused at its first bytes; an empty one too.
        assert!(matches!(
            spooled(&[0u8; 64], 1 << 20),
            Err(FileError::NotABundle)
        ));
        assert!(spooled(b"klogscan", 1 << 20).is_ok());
        assert!(matches!(spooled(b"", 1 << 20), Err(FileError::Corrupt(_))));
        // Past the room on the temporary file system.
        let e = spooled(&b, 50).unwrap_err().to_string();
        assert!(e.contains("room for"), "{e}");
    }
}
