//! What an archive may not do to the disk or to the analysis: bombs, full file systems,
//! entries that clash or repeat, archives cut short.

use super::*;

/// A tar of `(name, bytes)` entries written raw (names the builder would refuse too).
fn tar_raw(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, data) in files {
        let mut h = tar::Header::new_old();
        h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append(&h, *data).unwrap();
    }
    b.into_inner().unwrap()
}

fn prepared(dir: &tempfile::TempDir, name: &str, bytes: &[u8], limits: &Limits) -> Prepared {
    let ar = dir.path().join(name);
    std::fs::write(&ar, bytes).unwrap();
    prepare(std::slice::from_ref(&ar), limits).unwrap()
}

const LOG: &str = "t-0/00000000000000000000.log";

/// A file's bytes as the read layer gives them (an uncompressed tar's segments are read in
/// place: their paths are placeholders whose own bytes are a hole).
pub(super) fn content(p: &Path) -> Vec<u8> {
    use crate::read::segment::{ReadPolicy, read_file};
    let read = read_file(p, ReadPolicy::Read, None).unwrap().to_vec();
    let mapped = read_file(p, ReadPolicy::Map, None).unwrap().to_vec();
    assert_eq!(read, mapped, "{}", p.display());
    read
}

#[test]
fn a_bomb_stops_at_the_ratio_past_the_floor() {
    let d = tempfile::tempdir().unwrap();
    let zeros = vec![0u8; 4 << 20];
    let tar = tar_raw(&[(LOG, &zeros), ("t-1/00000000000000000000.log", b"abc")]);
    let zst = zstd::encode_all(tar.as_slice(), 3).unwrap();
    assert!(zst.len() < 64 << 10);
    let limits = Limits {
        max_ratio: 10,
        ratio_floor: 1 << 20,
        ..Limits::default()
    };
    let p = prepared(&d, "bomb.tar.zst", &zst, &limits);
    let w = p.warnings.join("\n");
    assert!(w.contains("a decompression bomb"), "{w}");
    assert!(w.contains(&format!("bomb.tar.zst!/{LOG}: skipped")), "{w}");
    // The small entry after it still fits.
    assert!(p.paths[0].join("t-1/00000000000000000000.log").is_file());
    assert!(!p.paths[0].join(LOG).exists());
    // Under the default ratio (and floor) the same archive extracts whole.
    let p = prepared(&d, "ok.tar.zst", &zst, &Limits::default());
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(
        std::fs::metadata(p.paths[0].join(LOG)).unwrap().len(),
        4 << 20
    );
}

#[test]
fn an_entry_larger_than_the_free_space_is_refused_by_name() {
    let d = tempfile::tempdir().unwrap();
    // A header declaring a petabyte (no data follows: the archive then ends early).
    let mut h = tar::Header::new_old();
    h.as_old_mut().name[..LOG.len()].copy_from_slice(LOG.as_bytes());
    h.set_size(1 << 50);
    h.set_mode(0o644);
    h.set_cksum();
    let limits = Limits {
        max_entry_bytes: u64::MAX,
        max_total_bytes: u64::MAX,
        max_ratio: u64::MAX,
        ..Limits::default()
    };
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    io::Write::write_all(&mut gz, h.as_bytes()).unwrap();
    let p = prepared(&d, "huge.tar.gz", &gz.finish().unwrap(), &limits);
    let w = p.warnings.join("\n");
    assert!(
        w.contains(&format!(
            "huge.tar.gz!/{LOG}: skipped: 1125899906842624 bytes, more than the temporary file system"
        )),
        "{w}"
    );
    // Uncompressed, the member is read in place: a size past the archive's end is an
    // archive cut short, named, and nothing is placed.
    let p = prepared(&d, "huge.tar", h.as_bytes(), &limits);
    let why = &p.failed[0].1;
    assert!(
        why.contains(&format!(
            "{LOG} is cut short: the archive ends 0 bytes into its 1125899906842624 bytes"
        )),
        "{why}"
    );
    assert!(p.paths.is_empty(), "{:?}", p.paths);
}

#[test]
fn a_cut_archive_keeps_its_readable_prefix_and_names_where_it_stops() {
    let d = tempfile::tempdir().unwrap();
    let data = vec![7u8; 4096];
    let tar = tar_raw(&[
        (LOG, b"first"),
        ("t-0/00000000000000000000.index", &data),
        ("t-1/00000000000000000000.log", &data),
    ]);
    // Cut inside the third entry's data.
    let cut = &tar[..tar.len() - 1024 - 2048];
    let p = prepared(&d, "cut.tar", cut, &Limits::default());
    assert_eq!(p.failed.len(), 1, "{:?}", p.failed);
    let why = &p.failed[0].1;
    assert!(
        why.contains("past entry t-0/00000000000000000000.index")
            && why.contains("the 2 Kafka files up to it are analysed"),
        "{why}"
    );
    let root = &p.paths[0];
    assert_eq!(content(&root.join(LOG)), b"first");
    assert!(root.join("t-0/00000000000000000000.index").is_file());
    assert!(
        !root.join("t-1/00000000000000000000.log").exists(),
        "a cut entry is not analysed as if whole"
    );
}

#[test]
fn clashing_and_repeated_entries_are_named() {
    let d = tempfile::tempdir().unwrap();
    let tar = tar_raw(&[
        (LOG, b"one"),
        (LOG, b"two"),
        // A file where a directory is needed, and a directory where a file is.
        (
            "t-0/00000000000000000000.log/00000000000000000001.log",
            b"x",
        ),
        (
            "u-0/00000000000000000001.log/00000000000000000002.log",
            b"y",
        ),
        ("u-0/00000000000000000001.log", b"z"),
        ("/abs-0/00000000000000000000.log", b"a"),
    ]);
    let p = prepared(&d, "c.tar", &tar, &Limits::default());
    assert!(p.failed.is_empty(), "{:?}", p.failed);
    let w = p.warnings.join("\n");
    assert!(
        w.contains(&format!(
            "c.tar!/{LOG}: appears more than once in the archive: the last copy is analysed"
        )),
        "{w}"
    );
    assert_eq!(content(&p.paths[0].join(LOG)), b"two");
    assert!(
        w.contains("c.tar!/t-0/00000000000000000000.log/00000000000000000001.log: skipped: its directory cannot be made"),
        "{w}"
    );
    assert!(
        w.contains(
            "c.tar!/u-0/00000000000000000001.log: skipped: an earlier entry made a directory"
        ),
        "{w}"
    );
    assert!(
        w.contains("c.tar!/abs-0/00000000000000000000.log: skipped: its path is absolute"),
        "{w}"
    );
    assert!(!w.contains("!//"), "{w}");
}
