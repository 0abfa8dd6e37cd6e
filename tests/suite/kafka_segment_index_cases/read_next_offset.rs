//! `LogSegment.readNextOffset` of a last segment the load does not recover (a clean
//! shutdown, no missing or corrupt index): `LogLoader.recoverLog` takes the log end from it
//! (`deleteSegmentsIfLogStartGreaterThanLogEnd`), and it reads the `.log` from the position
//! of the offset index's last entry (`OffsetIndex.lastOffset`, `LogSegment.translateOffset`)
//! — not from byte 0. Where the index and the log agree that is the log's framed end
//! (`LogSegmentTest.testNextOffsetCalculation`, `LogLoaderTest.testCleanShutdownFile`);
//! where the `.log` ends before the index's last entry nothing is found and the segment's
//! base is the log end; an entry pointing inside a batch frames what it points at.

use super::{file, recovered_names, verify, write};
use klogscan::testkit::{
    Batch, LogDirBuilder, Manifest, PartitionBuilder, PartitionFileOptions, Producer,
};
use std::path::PathBuf;

/// Two segments, 0..5 and 5..10, one single-record batch each offset, an index entry per
/// batch (`index.interval.bytes` 1).
fn two_segments() -> PartitionBuilder {
    let mut p = PartitionBuilder::new("rn", 0)
        .broker_files(PartitionFileOptions::default().index_interval(1));
    for i in 0..10 {
        if i == 5 {
            p.roll();
        }
        p.append(Batch::new(Producer::PLAIN).values([format!("{i}")]));
    }
    p
}

fn path(m: &Manifest, base: i64, ext: &str) -> PathBuf {
    m.dir.join(file(base, ext))
}

/// The `(relative offset, position)` entries of an offset index file.
fn index_entries(m: &Manifest, base: i64) -> Vec<(i32, i32)> {
    std::fs::read(path(m, base, "index"))
        .unwrap()
        .chunks_exact(8)
        .map(|c| {
            (
                i32::from_be_bytes(c[..4].try_into().unwrap()),
                i32::from_be_bytes(c[4..].try_into().unwrap()),
            )
        })
        .collect()
}

/// Cut segment `base`'s `.log` to `len` bytes.
fn cut_log(m: &Manifest, base: i64, len: u64) {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path(m, base, "log"))
        .unwrap();
    f.set_len(len).unwrap();
}

/// A `.log` cut at its index's last entry after a clean shutdown: the read from that entry
/// finds nothing, so the broker's log end is the segment's base (5), not the walk's end
/// (9). Twins: the same cut after an unclean shutdown is recovered (the index rebuilt) and
/// ends where the walk does; the uncut log ends at 10 either way.
#[test]
fn a_log_cut_below_the_last_index_entry_ends_at_the_segment_base() {
    for (clean, cut, want) in [
        (true, true, 5),
        (false, true, 9),
        (true, false, 10),
        (false, false, 10),
    ] {
        let (_d, m) = write(LogDirBuilder::new(1).clean_shutdown(clean), two_segments());
        let last = *index_entries(&m, 5).last().unwrap();
        assert_eq!(last.0, 4, "{:?}", index_entries(&m, 5));
        if cut {
            cut_log(&m, 5, last.1 as u64);
        }
        let v = verify(&m);
        assert_eq!(
            v.prediction.log_end_offset_after,
            Some(want),
            "clean {clean} cut {cut}"
        );
        assert_eq!(
            recovered_names(&v).contains(&file(5, "log")),
            !clean,
            "clean {clean} cut {cut}"
        );
        assert!(
            v.prediction.load_failure.is_none(),
            "{:?}",
            v.prediction.load_failure
        );
        if clean {
            assert_eq!(v.prediction.recovery_point_after, Some(want));
        }
    }
}

/// The log end read that way is what `deleteSegmentsIfLogStartGreaterThanLogEnd` compares
/// with the log start checkpoint (7): 5 is below it, so every segment is deleted and the
/// log restarts empty at 7. Twin: the uncut log ends at 10, above it, and is kept.
#[test]
fn a_log_end_read_below_the_log_start_empties_the_log() {
    for cut in [true, false] {
        let ld = LogDirBuilder::new(1).log_start_offset("rn", 0, 7);
        let (_d, m) = write(ld, two_segments());
        if cut {
            let last = *index_entries(&m, 5).last().unwrap();
            cut_log(&m, 5, last.1 as u64);
        }
        let v = verify(&m);
        if cut {
            assert_eq!(v.prediction.log_end_offset_after, Some(7));
            assert_eq!(v.prediction.log_start_offset_after, Some(7));
            assert_eq!(
                v.prediction.deleted_segments,
                [file(0, "log"), file(5, "log")]
            );
        } else {
            assert_eq!(v.prediction.log_end_offset_after, Some(10));
            assert!(v.prediction.deleted_segments.is_empty());
        }
    }
}

/// An index whose last entry names an offset no batch reaches (here 99, at the last batch's
/// position): `translateOffset` finds nothing, the log ends at the base. An entry pointing
/// 9 bytes into a batch reads a size field of 0 there: `FileLogInputStream.nextBatch`
/// throws `CorruptRecordException` and the load fails.
#[test]
fn the_last_index_entry_decides_where_the_read_starts() {
    let (_d, m) = write(LogDirBuilder::new(1), two_segments());
    let mut entries = index_entries(&m, 5);
    let last = *entries.last().unwrap();
    let write_index = |e: &[(i32, i32)]| {
        let b: Vec<u8> = e
            .iter()
            .flat_map(|(o, p)| [o.to_be_bytes(), p.to_be_bytes()].concat())
            .collect();
        std::fs::write(path(&m, 5, "index"), b).unwrap();
    };
    *entries.last_mut().unwrap() = (99 - 5, last.1);
    write_index(&entries);
    let v = verify(&m);
    assert_eq!(v.prediction.log_end_offset_after, Some(5));
    assert!(v.prediction.load_failure.is_none());

    *entries.last_mut().unwrap() = (last.0, last.1 + 9);
    write_index(&entries);
    let v = verify(&m);
    let f = v.prediction.load_failure.as_deref().expect("load failure");
    assert_eq!(f.exception, "CorruptRecordException");
    assert!(
        f.message.contains(&format!("byte {}", last.1 + 9)),
        "{}",
        f.message
    );
}

/// A swapped-in last segment is read the same way after a clean shutdown: `5.log.swap`
/// (a copy of `5.log` whose first batch fails its CRC) with `5.index.swap` replaces the
/// segment at 5 (`LogLoader.load`'s passes); no recovery runs on it, so the log ends where
/// `readNextOffset` ends through the swapped index — 10, CRCs unchecked — not where a
/// recovery would stop (5, the log end after an unclean shutdown, which recovers it).
/// Cut below the swapped index's last entry, the read finds nothing: the log ends at 5.
/// Without an `.index.swap` the first pass creates an empty index: read from byte 0, 10.
#[test]
fn a_swapped_in_last_segment_is_read_through_its_swapped_index() {
    for (clean, cut, index_swap, want) in [
        (true, false, true, 10),
        (false, false, true, 5),
        (true, true, true, 5),
        (true, false, false, 10),
    ] {
        let (_d, m) = write(LogDirBuilder::new(1).clean_shutdown(clean), two_segments());
        let swap = m.dir.join(format!("{}.swap", file(5, "log")));
        let mut log = std::fs::read(path(&m, 5, "log")).unwrap();
        log[62] ^= 0xff;
        let last = *index_entries(&m, 5).last().unwrap();
        if cut {
            log.truncate(last.1 as usize);
        }
        std::fs::write(&swap, log).unwrap();
        if index_swap {
            let index = std::fs::read(path(&m, 5, "index")).unwrap();
            std::fs::write(m.dir.join(format!("{}.swap", file(5, "index"))), index).unwrap();
        }
        let v = verify(&m);
        assert_eq!(
            v.prediction.log_end_offset_after,
            Some(want),
            "clean {clean} cut {cut} index swap {index_swap}"
        );
        assert!(
            v.prediction.load_failure.is_none(),
            "{:?}",
            v.prediction.load_failure
        );
    }
}

/// `LogLoader.load`'s first pass reads the next offset of every `.log.swap` segment
/// (`readNextOffset`, through the empty index it creates: from byte 0) before anything is
/// recovered, whatever the shutdown and whichever segment it is: a swap whose tail is 64
/// zero bytes makes `FileLogInputStream.nextBatch` throw `CorruptRecordException` there,
/// and the load fails — the swap's recovery (unclean shutdown) never runs, and a swap that
/// is not the last segment is read too. Twin: the same swaps without the zeros load.
#[test]
fn the_first_pass_reads_every_swap_and_a_throw_fails_the_load() {
    for (clean, base, zeros) in [
        (true, 5, true),
        (false, 5, true),
        (true, 0, true),
        (false, 0, true),
        (true, 5, false),
        (false, 0, false),
    ] {
        let (_d, m) = write(LogDirBuilder::new(1).clean_shutdown(clean), two_segments());
        let mut log = std::fs::read(path(&m, base, "log")).unwrap();
        if zeros {
            log.extend_from_slice(&[0u8; 64]);
        }
        std::fs::write(m.dir.join(format!("{}.swap", file(base, "log"))), log).unwrap();
        let v = verify(&m);
        let case = format!("clean {clean} base {base} zeros {zeros}");
        if !zeros {
            assert!(
                v.prediction.load_failure.is_none(),
                "{case}: {:?}",
                v.prediction.load_failure
            );
            continue;
        }
        let f = v.prediction.load_failure.as_ref().expect(&case);
        assert_eq!(f.exception, "CorruptRecordException", "{case}");
        assert!(f.message.contains("first pass"), "{case}: {}", f.message);
        assert!(
            f.message.contains(&format!("{}.swap", file(base, "log"))),
            "{case}: {}",
            f.message
        );
        assert_eq!(f.kind, "preallocated_tail", "{case}");
    }
}

/// A `5.index.swap` that is a FIFO is no index at load: the first pass reads the swap
/// through it as an empty one (`RandomAccessFile` opens it, it maps as 0 bytes), the second
/// deletes the replaced segment's `5.index` (its offset lies in the swapped range) and no
/// pass renames what is not a file (`File.isFile`), so `loadSegmentFiles` finds no offset
/// index for the swapped-in segment and recovers it, whatever the shutdown. Twin: no
/// `5.index.swap` at all, the first pass creates one, renamed with the log: no recovery.
#[cfg(unix)]
#[test]
fn a_fifo_index_swap_leaves_the_swapped_in_segment_without_an_index() {
    for fifo in [true, false] {
        let (_d, m) = write(LogDirBuilder::new(1).clean_shutdown(true), two_segments());
        let swap = format!("{}.swap", file(5, "log"));
        std::fs::copy(path(&m, 5, "log"), m.dir.join(&swap)).unwrap();
        if fifo {
            let at = m.dir.join(format!("{}.swap", file(5, "index")));
            let ok = std::process::Command::new("mkfifo")
                .arg(&at)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "mkfifo {}", at.display());
        }
        let v = verify(&m);
        let want: Vec<String> = if fifo { vec![swap] } else { vec![] };
        assert_eq!(recovered_names(&v), want, "fifo {fifo}");
        assert!(
            v.prediction.load_failure.is_none(),
            "{:?}",
            v.prediction.load_failure
        );
    }
}
