//! Holes in sparse and preallocated segments.
//!
//! A broker with `log.preallocate=true` (or a topic's `preallocate`) creates each segment
//! at `segment.bytes` and appends into it: after a crash the file ends in zeros, usually a
//! hole the file system never allocated (a sparse copy has the same shape). Reading a
//! 10 GiB hole byte by byte to learn that it is zeros costs seconds and, mapped, gigabytes
//! of page cache. The file system knows where its data ends (`lseek` `SEEK_HOLE` /
//! `SEEK_DATA`): the walks read up to there and take the rest as the zeros it is. Where
//! the file system keeps no hole information it reports the whole file as data, and the
//! walks read every byte as before.

use super::Handle;
use std::fs::File;

/// Data extents looked at before giving up on finding where the data ends (a crafted file
/// of alternating holes and data then is read whole, as without hole information).
const MAX_EXTENTS: usize = 4096;

/// Where the data of `file`'s first `len` bytes ends: the start of the hole that runs
/// from there to `len` (its bytes read as zeros), or `len` when there is none or the file
/// system cannot tell. Moves the descriptor's position (the walks read with `pread`). For
/// a member of an archive read in place the holes are the archive's, within the member.
pub(crate) fn data_end(file: &Handle, len: u64) -> u64 {
    let (raw, base) = file.raw();
    match base.checked_add(len) {
        Some(end) => file_data_end(raw, base, end).saturating_sub(base),
        None => len,
    }
}

/// [`data_end`] over `[from, len)` of a plain descriptor.
fn file_data_end(file: &File, from: u64, len: u64) -> u64 {
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
    {
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        let seek = |at: u64, whence| {
            let at = libc::off_t::try_from(at).ok()?;
            // SAFETY: lseek on a descriptor this function borrows; no memory is passed.
            let r = unsafe { libc::lseek(fd, at, whence) };
            if r >= 0 {
                Some(Ok(r as u64))
            } else {
                Some(Err(std::io::Error::last_os_error().raw_os_error()))
            }
        };
        let mut at = from;
        for _ in 0..MAX_EXTENTS {
            let hole = match seek(at, libc::SEEK_HOLE) {
                Some(Ok(h)) if h < len => h,
                _ => return len,
            };
            match seek(hole, libc::SEEK_DATA) {
                // No data after the hole: it runs to the end of the file.
                Some(Err(Some(libc::ENXIO))) => return hole,
                Some(Ok(d)) if d >= len => return hole,
                Some(Ok(d)) => at = d,
                _ => return len,
            }
        }
        len
    }
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
    {
        let _ = (file, from);
        len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trailing_hole_is_found_and_inner_holes_are_data() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let f = std::fs::File::create(&p).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, &[1u8; 5000], 0).unwrap();
        f.set_len(64 << 20).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        let end = file_data_end(&f, 0, 64 << 20);
        // The file system rounds to its blocks; without hole support it says `len`.
        assert!(end == 64 << 20 || (5000..=1 << 20).contains(&end), "{end}");
        // Data after a hole: the hole inside is not the end.
        let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&f, &[1u8; 10], (64 << 20) - 10).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        assert_eq!(file_data_end(&f, 0, 64 << 20), 64 << 20);
        // A length inside the data.
        assert_eq!(file_data_end(&f, 0, 3000), 3000);
    }
}
