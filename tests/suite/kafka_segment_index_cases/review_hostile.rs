//! Hostile cases of the recovery model's newest parts (the `.swap` handling since 3.0 and
//! before it, the index swaps, the read of the last segment's end): each a case where the
//! model went wrong before its fix, with its twin.

use super::loader_files::{four_segments, unclean};
use super::{file, verify, write};
use klogscan::testkit::{Batch, FaultKind, PartitionBuilder, Producer, Target};

/// Four segments of plain records (0, 2, 4, 6) after an unclean shutdown, recovery point 0.
/// The last ends in 64 zero bytes; segment 0's first batch is damaged when `damaged`.
fn four_unclean(damaged: bool) -> (tempfile::TempDir, klogscan::testkit::Manifest) {
    let mut p = PartitionBuilder::new("ll", 0);
    for i in 0..8 {
        if i > 0 && i % 2 == 0 {
            p.roll();
        }
        p.append(Batch::new(Producer::PLAIN).values([i.to_string()]));
    }
    p.fault(Target::Log(3), FaultKind::AppendZeros(64));
    let (d, m) = write(unclean(), p);
    if damaged {
        // The last byte of the first batch (its records: the CRC fails).
        let log = m.dir.join(file(0, "log"));
        let mut b = std::fs::read(&log).unwrap();
        let at = (m.batches[0].position + m.batches[0].size) as usize - 1;
        b[at] ^= 0x20;
        std::fs::write(&log, b).unwrap();
    }
    (d, m)
}

/// After an unclean shutdown, the recovery of segment 0 truncates at its damaged batch
/// and `recoverLog` deletes every later segment: the log's end is read off segment 0
/// (recovered), never off the deleted last segment, whose zero-filled tail then throws at
/// nobody. The prediction said the load fails reading the last segment's end. Twin:
/// without the damage in segment 0, every segment is recovered (the last one's tail cut by
/// its own recovery): no failure either.
#[test]
fn a_last_segment_deleted_by_the_truncation_is_not_read() {
    for damaged in [true, false] {
        let (_d, m) = four_unclean(damaged);
        let v = verify(&m);
        let p = &v.prediction;
        let t = p.truncation.as_ref().expect("a truncation");
        assert!(p.load_failure.is_none(), "{damaged}: {:#?}", p.load_failure);
        if damaged {
            assert_eq!(t.segment, file(0, "log"));
            assert_eq!(p.deleted_segments.len(), 3, "{p:#?}");
            assert_eq!(p.log_end_offset_after, Some(0));
        } else {
            assert_eq!(t.segment, file(6, "log"));
            assert_eq!(p.log_end_offset_after, Some(8));
        }
    }
}

/// A `-delete` directory is loaded without `recoverLog` (`LogLoader.load` ends it with
/// `RecoveryOffsets(0, 0)`): the last segment's end is never read, so a zero-filled tail
/// there fails nothing. Twin: the same directory live, after the same clean shutdown,
/// fails its load there.
#[test]
fn a_delete_directory_reads_no_last_segment_end() {
    for delete in [true, false] {
        let (_d, m) = four_segments();
        let log = m.dir.join(file(6, "log"));
        let mut b = std::fs::read(&log).unwrap();
        b.extend_from_slice(&[0u8; 64]);
        std::fs::write(&log, b).unwrap();
        let dir = if delete {
            let to = m
                .dir
                .with_file_name("ll-0.0123456789abcdef0123456789abcdef-delete");
            std::fs::rename(&m.dir, &to).unwrap();
            to
        } else {
            m.dir.clone()
        };
        let a = klogscan::request::verify(
            &klogscan::request::Request::new([dir.parent().unwrap()]),
            None,
        )
        .unwrap();
        let p = &a.report.partitions[0].prediction;
        assert_eq!(p.load_failure.is_some(), !delete, "delete {delete}: {p:#?}");
    }
}

/// A directory named like a swap (`2.log.swap/`): every pass of `LogLoader.load` skips what
/// is not a file (`File.isFile`), so nothing is swapped, no range cleared, segment 2
/// stays. Twin: a regular `2.log.swap` (a copy of `2.log`) is completed.
#[test]
fn a_directory_named_like_a_swap_swaps_nothing() {
    for dir in [true, false] {
        let (_d, m) = four_segments();
        let swap = m.dir.join(format!("{}.swap", file(2, "log")));
        match dir {
            true => std::fs::create_dir(&swap).unwrap(),
            false => std::fs::copy(m.dir.join(file(2, "log")), &swap)
                .map(|_| ())
                .unwrap(),
        }
        let v = verify(&m);
        let p = &v.prediction;
        assert!(p.load_failure.is_none(), "{dir}: {:#?}", p.load_failure);
        let completed =
            (p.leftovers.iter()).any(|l| l.action.starts_with("swap completed at startup"));
        assert_eq!(completed, !dir, "{dir}: {:#?}", p.leftovers);
        assert_eq!(p.log_end_offset_after, Some(8), "{dir}");
    }
}

/// A swap whose last batch ends at `Long.MAX_VALUE`: `readNextOffset` is that batch's
/// `nextOffset()`, `lastOffset + 1`, which wraps to `Long.MIN_VALUE` in Java, so the swap
/// adds nothing to the range's end (`maxSwapFileOffset`), and the second pass deletes no
/// file at its base: the producer snapshot there stays. The swap's batch (offsets
/// `MAX-4..MAX-1` as written) gets its base offset field, which no CRC covers, raised by
/// one. Twin: the swap as written, ending at `MAX - 1`, clears its base, the snapshot too.
#[test]
fn a_swap_ending_at_the_last_long_clears_no_range() {
    for at_max in [true, false] {
        let base = i64::MAX - 4;
        let mut p = PartitionBuilder::new("hx", 0).start_offset(base);
        p.append(Batch::new(Producer::PLAIN).records(4));
        let (_d, m) = write(klogscan::testkit::LogDirBuilder::new(1), p);
        let mut bytes = std::fs::read(m.dir.join(file(base, "log"))).unwrap();
        if at_max {
            bytes[..8].copy_from_slice(&(base + 1).to_be_bytes());
        }
        std::fs::write(m.dir.join(format!("{}.swap", file(base, "log"))), bytes).unwrap();
        let snap = file(base, "snapshot");
        std::fs::write(m.dir.join(&snap), b"").unwrap();
        let v = verify(&m);
        let cleared = (v.prediction.leftovers.iter())
            .any(|l| l.file == snap && l.kind == "snapshot_in_swapped_range");
        assert_eq!(cleared, !at_max, "{at_max}: {:#?}", v.prediction.leftovers);
    }
}

/// The first pass ends the swapped range where `readNextOffset` of the swap ends, read
/// through its `.index.swap`: `0.log.swap` holds segments 0 and 2's batches (offsets 0–3),
/// and its `0.index.swap`'s one entry names offset 10, which no batch reaches, so the read
/// finds nothing and returns the base: the range `[0, 0)` clears nothing, segment 2 stays
/// (the swap is renamed over segment 0). The model framed the whole file and cleared
/// `[0, 4)`. Twin: without the `.index.swap` (an empty index: read from byte 0) the range
/// is `[0, 4)` and segment 2 goes.
#[test]
fn the_swapped_range_ends_where_the_swaps_index_read_ends() {
    for odd_index in [true, false] {
        let (_d, m) = four_segments();
        let mut bytes = std::fs::read(m.dir.join(file(0, "log"))).unwrap();
        bytes.extend(std::fs::read(m.dir.join(file(2, "log"))).unwrap());
        std::fs::write(m.dir.join(format!("{}.swap", file(0, "log"))), bytes).unwrap();
        if odd_index {
            let mut e = 10i32.to_be_bytes().to_vec();
            e.extend(0i32.to_be_bytes());
            std::fs::write(m.dir.join(format!("{}.swap", file(0, "index"))), e).unwrap();
        }
        let v = verify(&m);
        let p = &v.prediction;
        let swap = (p.leftovers.iter())
            .find(|l| l.file == format!("{}.swap", file(0, "log")))
            .map(|l| l.action.clone())
            .unwrap_or_default();
        let want = if odd_index {
            "range [0, 0)"
        } else {
            "range [0, 4)"
        };
        assert!(swap.contains(want), "{odd_index}: {swap}");
    }
}

/// An empty swap above the log (`100.log.swap`, 0 bytes): its range `[100, 100)` clears
/// nothing, its rename makes a new last segment at 100, empty, so the log ends at 100 after
/// the clean shutdown (`readNextOffset` of an empty segment: its base). Twin: none.
#[test]
fn an_empty_swap_above_the_log_becomes_its_last_segment() {
    for swap in [true, false] {
        let (_d, m) = four_segments();
        if swap {
            std::fs::write(m.dir.join(format!("{}.swap", file(100, "log"))), b"").unwrap();
        }
        let v = verify(&m);
        let p = &v.prediction;
        assert!(p.load_failure.is_none(), "{swap}: {:#?}", p.load_failure);
        assert_eq!(
            p.log_end_offset_after,
            Some(if swap { 100 } else { 8 }),
            "{swap}: {p:#?}"
        );
        assert!(p.deleted_segments.is_empty(), "{swap}");
    }
}

/// A FIFO named like a swap (`2.log.swap`): no pass of the load touches what is not a file
/// (`File.isFile`), so nothing is swapped; klogscan neither blocks on it nor swaps it.
/// Twin: a regular swap is completed.
#[cfg(unix)]
#[test]
fn a_fifo_named_like_a_swap_swaps_nothing() {
    for fifo in [true, false] {
        let (_d, m) = four_segments();
        let swap = m.dir.join(format!("{}.swap", file(2, "log")));
        if fifo {
            crate::common::mkfifo(&swap);
        } else {
            std::fs::copy(m.dir.join(file(2, "log")), &swap).unwrap();
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let dir = m.clone();
        std::thread::spawn(move || tx.send(verify(&dir)).unwrap());
        let v = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("verify returns");
        let completed = (v.prediction.leftovers.iter())
            .any(|l| l.action.starts_with("swap completed at startup"));
        assert_eq!(completed, !fifo, "{fifo}: {:#?}", v.prediction.leftovers);
        assert!(v.prediction.load_failure.is_none(), "{fifo}");
    }
}
