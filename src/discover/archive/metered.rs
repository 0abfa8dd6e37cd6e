//! A bound on what the tar reader reads between two entries.
//!
//! Between the entries it hands out, the `tar` crate reads headers, and reads whole into
//! memory the data of the extension entries that describe the next member: a GNU long
//! name or long link (`L`, `K`) or a PAX header (`x`, `g`), whatever size their header
//! claims. A compressed archive of a few kilobytes can claim gigabytes of zeros for a long
//! name. Counting the bytes read between two entries (an entry's own data is read, or
//! drained, while the count is off) bounds that memory: past [`MAX_BETWEEN`] the archive
//! is refused as damaged.

use std::cell::Cell;
use std::io::{self, Read, Seek, SeekFrom};
use std::rc::Rc;

/// Bytes of headers and extension entries read before one member: far above any real
/// path (4 KiB on Linux) or PAX record set.
pub(super) const MAX_BETWEEN: u64 = 1 << 20;

/// Whether the count runs (`Some(bytes so far)`: between two entries) or not (an entry's
/// data is being read).
#[derive(Debug, Clone, Default)]
pub(super) struct Gap(Rc<Cell<Option<u64>>>);

impl Gap {
    /// Start counting (before asking for the next entry).
    pub(super) fn open(&self) {
        self.0.set(Some(0));
    }

    /// Stop counting (an entry was handed out).
    pub(super) fn close(&self) {
        self.0.set(None);
    }
}

/// A reader whose reads count against the [`Gap`] while it is open.
pub(super) struct Metered<R> {
    inner: R,
    gap: Gap,
}

impl<R> Metered<R> {
    pub(super) fn new(inner: R, gap: &Gap) -> Self {
        Metered {
            inner,
            gap: gap.clone(),
        }
    }
}

impl<R: Read> Read for Metered<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(so_far) = self.gap.0.get() {
            let so_far = so_far + n as u64;
            if so_far > MAX_BETWEEN {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "more than {MAX_BETWEEN} bytes of headers before the next entry (a long name or extended header of absurd size)"
                    ),
                ));
            }
            self.gap.0.set(Some(so_far));
        }
        Ok(n)
    }
}

impl<R: Seek> Seek for Metered<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    /// A tar whose first header is a GNU long name of `len` bytes (zeros), then a segment.
    fn long_name_bomb(len: u64) -> Vec<u8> {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::GNULongName);
        h.set_path("././@LongLink").unwrap();
        h.set_size(len);
        h.set_mode(0o644);
        h.set_cksum();
        let mut out = h.as_bytes().to_vec();
        out.resize(out.len() + len.div_ceil(512) as usize * 512, 0);
        let mut b = tar::Builder::new(out);
        let mut f = tar::Header::new_gnu();
        f.set_size(3);
        f.set_mode(0o644);
        f.set_cksum();
        b.append_data(&mut f, "t-0/00000000000000000000.log", &b"abc"[..])
            .unwrap();
        b.into_inner().unwrap()
    }

    #[test]
    fn an_absurd_long_name_is_refused_not_read_into_memory() {
        let d = tempfile::tempdir().unwrap();
        // 64 MiB of long name: compressed, a few kilobytes.
        let zst = zstd::encode_all(long_name_bomb(64 << 20).as_slice(), 3).unwrap();
        assert!(zst.len() < 64 << 10);
        for (name, bytes) in [
            ("bomb.tar.zst", zst),
            ("bomb.tar", long_name_bomb(64 << 20)),
        ] {
            let ar = d.path().join(name);
            std::fs::write(&ar, &bytes).unwrap();
            let p = prepare(std::slice::from_ref(&ar), &Limits::default()).unwrap();
            let why = &p
                .failed
                .first()
                .unwrap_or_else(|| panic!("{name}: {p:?}"))
                .1;
            assert!(
                why.contains("bytes of headers before the next entry"),
                "{name}: {why}"
            );
        }
    }

    #[test]
    fn long_names_of_real_size_are_read() {
        let d = tempfile::tempdir().unwrap();
        // 3 KiB of path (each component within NAME_MAX).
        let dirs = format!("{}/", "d".repeat(200)).repeat(15);
        let long = format!("{dirs}t-0/00000000000000000000.log");
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(3);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, &long, &b"abc"[..]).unwrap();
        let tar = b.into_inner().unwrap();
        let gz = {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            io::Write::write_all(&mut gz, &tar).unwrap();
            gz.finish().unwrap()
        };
        for (name, bytes) in [("l.tar", tar), ("l.tgz", gz)] {
            let ar = d.path().join(name);
            std::fs::write(&ar, &bytes).unwrap();
            let p = prepare(std::slice::from_ref(&ar), &Limits::default()).unwrap();
            assert!(p.failed.is_empty(), "{name}: {:?}", p.failed);
            assert_eq!(
                super::super::bounds_tests::content(&p.paths[0].join(&long)),
                b"abc"
            );
        }
    }
}
