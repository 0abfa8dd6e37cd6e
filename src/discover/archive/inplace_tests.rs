//! An uncompressed tar's segments, indexes and snapshots read in place: no byte of them on
//! the disk, the same bytes through every read of the read layer, the caps on extraction
//! not in the way; sparse members refused by name, long names followed.

use super::bounds_tests::content;
use super::*;
use std::os::unix::fs::MetadataExt;

/// `(name, bytes)` entries as GNU tar writes them (long names as `L` entries).
fn gnu_tar(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, data) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, name, *data).unwrap();
    }
    b.into_inner().unwrap()
}

fn prepared(dir: &tempfile::TempDir, name: &str, bytes: &[u8], limits: &Limits) -> Prepared {
    let ar = dir.path().join(name);
    std::fs::write(&ar, bytes).unwrap();
    prepare(std::slice::from_ref(&ar), limits).unwrap()
}

#[test]
fn segments_are_read_where_they_lie_and_never_written() {
    let d = tempfile::tempdir().unwrap();
    // 3 MiB of varied bytes (mapped under the default policy), not page-aligned in the
    // archive (a 5-byte member before it).
    let seg: Vec<u8> = (0..3u32 << 20).map(|i| (i % 251) as u8).collect();
    let long = format!("{}-0/00000000000000000000.index", "t".repeat(150));
    let tar = gnu_tar(&[
        ("README", b"hello"),
        ("t-0/00000000000000000000.log", &seg),
        ("t-0/00000000000000000000.timeindex", b"0123456789ab"),
        (&long, b"idx"),
        ("t-0/leader-epoch-checkpoint", b"0\n1\n0 0\n"),
    ]);
    // A total cap below the segment's size: it caps what is written, and nothing is.
    let limits = Limits {
        max_total_bytes: 1 << 20,
        ..Limits::default()
    };
    let p = prepared(&d, "b.tar", &tar, &limits);
    assert!(p.failed.is_empty() && p.warnings.is_empty(), "{p:?}");
    let root = p.paths[0].clone();
    let log = root.join("t-0/00000000000000000000.log");
    let meta = std::fs::metadata(&log).unwrap();
    assert_eq!(meta.len(), seg.len() as u64);
    assert_eq!(meta.blocks(), 0, "a placeholder holds no data block");
    assert_eq!(content(&log), seg);
    assert_eq!(
        content(&root.join("t-0/00000000000000000000.timeindex")),
        b"0123456789ab"
    );
    assert_eq!(content(&root.join(&long)), b"idx");
    // A checkpoint is a small text file, copied.
    let cp = root.join("t-0/leader-epoch-checkpoint");
    assert_eq!(std::fs::read(&cp).unwrap(), b"0\n1\n0 0\n");
    // Pieces of the segment through `pread` at offsets inside the member.
    let (h, len) = crate::read::segment::open_regular(&log).unwrap();
    assert_eq!(len, seg.len() as u64);
    let mut buf = [0u8; 100];
    h.read_exact_at(&mut buf, 1_000_003).unwrap();
    assert_eq!(&buf[..], &seg[1_000_003..1_000_103]);
    // A read never passes the member's end into the next one.
    assert!(h.read_exact_at(&mut buf, len - 50).is_err());
    assert_eq!(h.read_at(&mut buf, len - 50).unwrap(), 50);
    drop(h);
    drop(p);
    assert!(
        !root.exists(),
        "the temporary directory goes with the inputs"
    );
}

#[test]
fn compressed_archives_are_still_extracted() {
    let d = tempfile::tempdir().unwrap();
    let seg = vec![9u8; 10_000];
    let tar = gnu_tar(&[("t-0/00000000000000000000.log", &seg)]);
    let zst = zstd::encode_all(tar.as_slice(), 3).unwrap();
    let p = prepared(&d, "b.tar.zst", &zst, &Limits::default());
    let log = p.paths[0].join("t-0/00000000000000000000.log");
    assert!(std::fs::metadata(&log).unwrap().blocks() > 0, "written out");
    assert_eq!(std::fs::read(&log).unwrap(), seg);
}

#[test]
fn a_sparse_member_is_refused_by_name_and_the_rest_is_read() {
    let d = tempfile::tempdir().unwrap();
    let mut tar = gnu_tar(&[("t-0/00000000000000000000.index", b"abcd")]);
    // A GNU sparse header ('S') for a segment: its holes are not in the archive.
    let mut h = tar::Header::new_gnu();
    h.set_path("t-0/00000000000000000000.log").unwrap();
    h.set_entry_type(tar::EntryType::GNUSparse);
    h.set_size(0);
    h.set_mode(0o644);
    if let Some(g) = h.as_gnu_mut() {
        g.realsize = *b"00000000000\0";
    }
    h.set_cksum();
    let end = tar.len() - 1024;
    tar.splice(end..end, h.as_bytes().iter().copied());
    let p = prepared(&d, "s.tar", &tar, &Limits::default());
    let w = p.warnings.join("\n");
    assert!(
        w.contains("s.tar!/t-0/00000000000000000000.log: skipped: a sparse member"),
        "{w} {:?}",
        p.failed
    );
    assert!(!p.paths[0].join("t-0/00000000000000000000.log").exists());
    assert_eq!(
        content(&p.paths[0].join("t-0/00000000000000000000.index")),
        b"abcd"
    );
}

#[test]
fn names_read_in_place() {
    for n in [
        "00000000000000000000.log",
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
        "00000000000000000000.txnindex",
        "00000000000000000042.snapshot",
        "00000000000000000000.log.deleted",
        "00000000000000000000.index.swap",
        "00000000000000000000.log.cleaned",
    ] {
        assert!(read_in_place(n), "{n}");
    }
    for n in [
        "leader-epoch-checkpoint",
        "meta.properties",
        "partition.metadata",
        "00000000000000000000-0000000001.checkpoint",
        ".log",
        "x.deleted",
        "00000000000000000000.log.tmp",
    ] {
        assert!(!read_in_place(n), "{n}");
    }
}

#[test]
fn an_archive_cut_under_its_members_reads_as_a_file_that_changed() {
    let d = tempfile::tempdir().unwrap();
    let seg = vec![7u8; 200_000];
    let tar = gnu_tar(&[("t-0/00000000000000000000.log", &seg)]);
    let p = prepared(&d, "c.tar", &tar, &Limits::default());
    let log = p.paths[0].join("t-0/00000000000000000000.log");
    // The archive shrinks after it was listed: half the member is gone.
    let ar = std::fs::OpenOptions::new()
        .write(true)
        .open(d.path().join("c.tar"))
        .unwrap();
    ar.set_len(512 + 100_000).unwrap();
    let (h, len) = crate::read::segment::open_regular(&log).unwrap();
    assert_eq!(len, 100_000, "the member's bytes still in the archive");
    assert_eq!(h.current_len().unwrap(), 100_000);
    let mut buf = [0u8; 16];
    assert!(h.read_exact_at(&mut buf, 150_000).is_err());
    // The content read is what is left, never zeros of the placeholder past it.
    assert_eq!(content(&log), &seg[..100_000]);
}
