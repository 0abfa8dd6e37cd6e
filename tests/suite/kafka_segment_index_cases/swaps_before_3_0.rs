//! A `.log.swap` by broker version. Brokers before 3.0 (`Log.loadSegments` in 2.8:
//! `removeTempFilesAndCollectSwapFiles`, `loadSegmentFiles`, then
//! `completeSwapOperations`) recover every swap segment, whatever the shutdown, and then
//! replace the segments its recovered offsets cover (`replaceSegments`); 3.0 and later
//! (`LogLoader.load`) read each swap's end in a first pass, delete every file of the one
//! range from the lowest swap base to the highest swap end, and rename the swaps. The
//! cases of Kafka 2.8.1's `LogTest.testRecoveryAfterCrashDuringSplitPhase*` are here for a
//! 2.8 broker (the 3.0 ones are in [`super::loader_files`]), each with what changes and what
//! does not against a current broker. Also: an index `.swap` file beside a `.log.swap`
//! that is a directory, and `scan`'s plan when the load fails in its first pass.

use super::loader_files::{
    EXTS, MAX, four_segments, leftovers, overflow_log, phase_5, put_new_segment, swapped_halves,
    unclean,
};
use super::{file, recovered, recovered_names, scan_dir, verify_as, write};
use klogscan::testkit::{LogDirBuilder, Manifest};
use klogscan::verify::{BrokerVersion, PartitionVerification};

const V2_8: Option<BrokerVersion> = Some(BrokerVersion(2, 8, 1));
const V3_0: Option<BrokerVersion> = Some(BrokerVersion(3, 0, 0));

/// The words of a swapped-in segment's recovery before 3.0.
const SWAP_REASON: &str = "completing its swap at load (brokers before 3.0";

fn swap_name(base: i64) -> String {
    format!("{}.swap", file(base, "log"))
}

/// The action on leftover `name`.
fn action(v: &PartitionVerification, name: &str) -> String {
    let l = leftovers(v);
    let found = l.iter().find(|x| x.0 == name);
    found.map(|x| x.2.clone()).unwrap_or_default()
}

/// Copy segment `base`'s `.log` to its `.log.swap`.
fn swap_copy(m: &Manifest, base: i64) {
    let bytes = std::fs::read(m.dir.join(file(base, "log"))).unwrap();
    std::fs::write(m.dir.join(swap_name(base)), bytes).unwrap();
}

/// The split's phases 3–5 (`LogTest.testRecoveryAfterCrashDuringSplitPhase3/4/5` at 2.8.1)
/// with `recoverAndCheck`'s unclean shutdown: a 2.8 broker recovers both swaps at load,
/// then the unclean pass the other segments from the recovery point 0; the log ends with
/// four segments (`numSegmentsInitial + 1`), every key kept, nothing truncated. Which
/// segments each swap replaces is the 2.8 rule's: the segments its offsets cover whose
/// own end lies above its base — in phase 3 the emptied original (at the first swap's
/// base, where the swap's rename overwrites it), in phases 4 and 5 none (deleted before,
/// or the first half already renamed `MAX.log`, ending at the second swap's base).
#[test]
fn split_phases_3_to_5_before_3_0() {
    for phase in [3, 4, 5] {
        let (_d, m) = overflow_log(unclean());
        if phase == 5 {
            phase_5(&m);
        } else {
            swapped_halves(&m, &[MAX, 2 * MAX]);
            if phase == 3 {
                std::fs::write(&m.segments[1].1, b"").unwrap();
            } else {
                for ext in EXTS {
                    std::fs::remove_file(m.dir.join(file(MAX, ext))).unwrap();
                }
            }
        }
        let v = verify_as(&m, V2_8);
        let case = format!("phase {phase}");
        let mut names = recovered_names(&v);
        names.sort();
        let mut want = vec![file(0, "log"), swap_name(2 * MAX), file(3 * MAX, "log")];
        want.push(match phase {
            5 => file(MAX, "log"),
            _ => swap_name(MAX),
        });
        want.sort();
        assert_eq!(names, want, "{case}");
        for (seg, reason) in recovered(&v) {
            assert_eq!(
                seg.ends_with(".swap"),
                reason.starts_with(SWAP_REASON),
                "{case}: {seg}: {reason}"
            );
        }
        assert!(v.prediction.truncation.is_none(), "{case}");
        assert!(v.prediction.deleted_segments.is_empty(), "{case}");
        assert!(v.prediction.load_failure.is_none(), "{case}");
        assert_eq!(v.prediction.log_end_offset_after, Some(4 * MAX), "{case}");
        let second = action(&v, &swap_name(2 * MAX));
        assert!(second.contains("brokers before 3.0"), "{case}: {second}");
        assert!(second.contains("replaces no segment"), "{case}: {second}");
        if phase != 5 {
            let first = action(&v, &swap_name(MAX));
            let replaced = match phase {
                3 => format!("replaces {} (", file(MAX, "log")),
                _ => "replaces no segment".into(),
            };
            assert!(first.contains(&replaced), "{case}: {first}");
            // The index swaps at a swap's base go with it, rebuilt by its recovery.
            let index = action(&v, &format!("{}.swap", file(MAX, "index")));
            assert!(
                index.starts_with("rebuilt at startup with"),
                "{case}: {index}"
            );
        }
    }
}

/// `LogTest.testRecoveryAfterCrashDuringSplitPhase2` at 2.8.1: a `.swap` at or above the
/// lowest `.cleaned` offset belongs to the unfinished split and is deleted with it, the
/// same before 3.0 as since (KAFKA-6264): nothing is swapped in, nothing recovered for it.
#[test]
fn split_phase_2_before_3_0_deletes_the_unfinished_split() {
    let (_d, m) = overflow_log(unclean());
    put_new_segment(&m, MAX, ".cleaned", b"");
    put_new_segment(&m, 2 * MAX, ".swap", b"");
    let v = verify_as(&m, V2_8);
    let a = action(&v, &swap_name(2 * MAX));
    assert!(
        a.starts_with("deleted at startup (belongs to an unfinished split"),
        "{a}"
    );
    let names = recovered_names(&v);
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(names.iter().all(|n| !n.ends_with(".swap")), "{names:?}");
}

/// Two swaps that are not adjacent over segments 0, 2, 4, 6 (`0.log.swap` holding 0–1,
/// `6.log.swap` 6–7): since 3.0 the one range `[0, 8)` deletes segments 2 and 4 too (and
/// the producer snapshots in it); a 2.8 broker replaces only the segments each swap
/// covers — 0 and 6 — and keeps 2 and 4 (and every snapshot at load: a replaced
/// segment's is deleted with its files, after `file.delete.delay.ms`, or kept when a swap
/// takes its base).
#[test]
fn before_3_0_each_swap_replaces_only_the_segments_it_covers() {
    for version in [V2_8, V3_0] {
        let (_d, m) = four_segments();
        for base in [0, 6] {
            swap_copy(&m, base);
        }
        let v = verify_as(&m, version);
        let case = format!("{version:?}");
        let snapshots_dropped = leftovers(&v)
            .iter()
            .any(|l| l.1 == "snapshot_in_swapped_range");
        let first = action(&v, &swap_name(0));
        if version == V2_8 {
            assert!(
                first.contains(&format!("replaces {} (", file(0, "log"))),
                "{case}: {first}"
            );
            let last = action(&v, &swap_name(6));
            assert!(
                last.contains(&format!("replaces {} (", file(6, "log"))),
                "{case}: {last}"
            );
            // The segments between stay: recovered for nothing, they are still the log's.
            assert!(!snapshots_dropped, "{case}");
            assert_eq!(recovered_names(&v), [swap_name(0), swap_name(6)], "{case}");
        } else {
            let all = [0, 2, 4, 6].map(|b| file(b, "log")).join(", ");
            assert!(
                first.contains(&format!("replaces {all} then")),
                "{case}: {first}"
            );
            assert!(recovered_names(&v).is_empty(), "{case}");
        }
        assert_eq!(v.prediction.log_end_offset_after, Some(8), "{case}");
    }
}

/// A 2.8 broker recovers a swap whatever the shutdown (`completeSwapOperations` →
/// `recoverSegment`): after a clean shutdown the swap is recovered, its zero-filled tail
/// cut (a truncation of its own: nothing after it deleted) and the load succeeds. Since
/// 3.0 the first pass reads the swap's end first and throws at the zeros: the load fails,
/// nothing recovered. Twin: an intact swap, recovered before 3.0 and not since.
#[test]
fn before_3_0_a_swap_is_recovered_whatever_the_shutdown() {
    for zeros in [true, false] {
        for version in [V2_8, V3_0] {
            let (_d, m) = four_segments();
            let mut bytes = std::fs::read(m.dir.join(file(2, "log"))).unwrap();
            let len = bytes.len() as u64;
            if zeros {
                bytes.extend_from_slice(&[0u8; 64]);
            }
            std::fs::write(m.dir.join(swap_name(2)), bytes).unwrap();
            let v = verify_as(&m, version);
            let case = format!("{version:?} zeros {zeros}");
            let p = &v.prediction;
            if version == V2_8 {
                assert_eq!(recovered_names(&v), [swap_name(2)], "{case}");
                assert!(p.load_failure.is_none(), "{case}: {:?}", p.load_failure);
                let t = p
                    .truncation
                    .as_ref()
                    .map(|t| (t.segment.clone(), t.position));
                assert_eq!(t, zeros.then(|| (swap_name(2), len)), "{case}");
                assert!(p.deleted_segments.is_empty(), "{case}");
            } else {
                assert!(recovered_names(&v).is_empty(), "{case}");
                assert_eq!(p.load_failure.is_some(), zeros, "{case}");
                assert!(p.truncation.is_none(), "{case}");
            }
            // Since 3.0 the load with the zeros stops reading the swap: no log end after.
            let fails = zeros && version == V3_0;
            assert_eq!(p.log_end_offset_after, (!fails).then_some(8), "{case}");
            if fails {
                assert_eq!(p.load_stops_at.as_deref(), Some("swap_read"), "{case}");
                let a = action(&v, &swap_name(2));
                assert!(a.starts_with("not reached"), "{case}: {a}");
            }
        }
    }
}

/// What a 2.8 broker's swap covers is read after its recovery: `0.log.swap` holds the
/// bytes of segments 0, 2 and 4 (offsets 0–5, a cleaner's merge) with the batch of offset 3
/// damaged (its CRC fails). Its recovery cuts it at offset 3, so it replaces 0 and 2 (2's
/// offsets reach past its base) but not 4 (based at the recovered end): the log is the
/// swap's 0–2, then 4 and 6. Since 3.0 the range is the swap's framed end, 6: segments 0,
/// 2 and 4 are deleted, and after the clean shutdown the swap is not recovered (its damage
/// is served).
#[test]
fn before_3_0_a_swap_replaces_what_its_recovered_offsets_cover() {
    for version in [V2_8, V3_0] {
        let (_d, m) = four_segments();
        let mut bytes = Vec::new();
        for base in [0, 2, 4] {
            let log = std::fs::read(m.dir.join(file(base, "log"))).unwrap();
            if base == 2 {
                let b = m.batches.iter().find(|b| b.base_offset == 3).unwrap();
                let at = bytes.len() + (b.position + b.size) as usize - 1;
                bytes.extend_from_slice(&log);
                bytes[at] ^= 0xff;
            } else {
                bytes.extend_from_slice(&log);
            }
        }
        std::fs::write(m.dir.join(swap_name(0)), bytes).unwrap();
        let v = verify_as(&m, version);
        let case = format!("{version:?}");
        let a = action(&v, &swap_name(0));
        if version == V2_8 {
            let want = format!("replaces {}, {} (", file(0, "log"), file(2, "log"));
            assert!(a.contains(&want), "{case}: {a}");
            let t = v.prediction.truncation.as_ref().expect(&case);
            assert_eq!((t.segment.as_str(), t.offset), (swap_name(0).as_str(), 3));
            assert_eq!(v.prediction.log_end_offset_after, Some(8), "{case}");
        } else {
            let want = [0, 2, 4].map(|b| file(b, "log")).join(", ");
            assert!(a.contains(&format!("replaces {want} then")), "{case}: {a}");
            assert!(v.prediction.truncation.is_none(), "{case}");
            assert!(
                v.prediction
                    .unrecovered_corruption
                    .iter()
                    .any(|u| u.starts_with(&swap_name(0))),
                "{case}: {:?}",
                v.prediction.unrecovered_corruption
            );
        }
    }
}

/// An index `.swap` file beside `2.log.swap` that is a directory. Since 3.0 the first pass
/// opens the swap segment (`LogSegment.open`: its `TransactionIndex` opens
/// `2.txnindex.swap` at once) and reads its end through its offset index (`2.index.swap`,
/// opened then): either directory throws an `IOException`, the log dir goes offline. The
/// time index is not read there (lazy): a directory at `2.timeindex.swap` fails nothing.
/// Before 3.0 the swap's recovery resets all three indexes: each fails. Negative: the same
/// names as regular files (empty) fail nothing.
#[test]
fn a_directory_at_a_swaps_index_fails_the_load() {
    for ext in ["index", "txnindex", "timeindex"] {
        for dir in [true, false] {
            for version in [V3_0, V2_8] {
                let (_d, m) = four_segments();
                swap_copy(&m, 2);
                let at = m.dir.join(format!("{}.swap", file(2, ext)));
                match dir {
                    true => std::fs::create_dir(&at).unwrap(),
                    false => std::fs::write(&at, b"").unwrap(),
                }
                let v = verify_as(&m, version);
                let case = format!("{ext} dir {dir} {version:?}");
                let fails = dir && (ext != "timeindex" || version == V2_8);
                let f = v.prediction.load_failure.as_ref();
                assert_eq!(f.is_some(), fails, "{case}: {f:?}");
                if let Some(f) = f {
                    assert_eq!(f.exception, "IOException", "{case}");
                    assert_eq!(f.kind, "leftover_file", "{case}");
                    let named = format!("{}.swap is a directory", file(2, ext));
                    assert!(f.message.contains(&named), "{case}: {}", f.message);
                    assert!(f.message.contains("offline"), "{case}: {}", f.message);
                }
                if version == V3_0 {
                    // The scan's plan tells the same story (a current broker).
                    let r = scan_dir(&m.dir);
                    let p = &r.partitions[0];
                    assert_eq!(p.load_failure.is_some(), fails, "{case}");
                }
            }
        }
    }
}

/// `scan` plans no recovery where the load fails in its first pass (since 3.0): after an
/// unclean shutdown a swap ending in 64 zero bytes would be cut there by its recovery,
/// but the first pass's read of its end throws first — `verify`'s `load_failure`, and
/// `scan`'s `truncation` is `null` with `load_failure` saying why, as `verify` does
/// (no `TRUNCATE`, no recovery); the damage of the segment the swap would replace gets no
/// fate, its broker text saying the start fails first. Twin: the same swap without the
/// zeros: no failure, no truncation, and that damage is deleted with its segment.
#[test]
fn the_scan_plans_no_truncation_when_the_first_pass_throws() {
    for zeros in [true, false] {
        let (_d, m) = write(LogDirBuilder::new(1).clean_shutdown(false), {
            super::one_segment("fp", 0, 4, 4096)
        });
        let mut bytes = std::fs::read(m.dir.join(file(0, "log"))).unwrap();
        if zeros {
            bytes.extend_from_slice(&[0u8; 64]);
        }
        std::fs::write(m.dir.join(swap_name(0)), bytes).unwrap();
        // The replaced segment's own damage: a batch whose CRC fails.
        let log = m.dir.join(file(0, "log"));
        let mut old = std::fs::read(&log).unwrap();
        let b = &m.batches[1];
        old[(b.position + b.size) as usize - 1] ^= 0xff;
        std::fs::write(&log, old).unwrap();
        let r = scan_dir(&m.dir);
        let p = &r.partitions[0];
        assert!(p.truncation.is_none(), "zeros {zeros}: {:?}", p.truncation);
        let crc = r
            .findings
            .iter()
            .find(|f| f.kind == klogscan::finding::Kind::CrcMismatch)
            .expect("the replaced segment's damage");
        let fate = crc.evidence["recovery"]["fate"].as_str();
        match zeros {
            true => {
                assert_eq!(fate, None, "no fate where the load fails first");
                assert!(
                    crc.broker_behaviour
                        .contains("the next start fails before any recovery"),
                    "{}",
                    crc.broker_behaviour
                );
            }
            false => assert_eq!(fate, Some("deleted")),
        }
        let v = verify_as(&m, None);
        assert!(v.prediction.truncation.is_none(), "zeros {zeros}");
        match zeros {
            true => {
                let why = p
                    .load_failure
                    .as_deref()
                    .expect("the scan says the load fails");
                assert!(why.starts_with("CorruptRecordException: "), "{why}");
                let f = v.prediction.load_failure.as_ref().unwrap();
                assert!(why.ends_with(&f.message), "{why}");
                assert!(v.prediction.recovered_segments.is_empty());
                // The JSON field and the text line carry it.
                let mut json = Vec::new();
                klogscan::report::json::write_scan(&r, &mut json).unwrap();
                let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
                assert!(json["partitions"][0]["truncation"].is_null());
                assert_eq!(json["partitions"][0]["load_failure"], why);
                let mut text = Vec::new();
                klogscan::report::table::write_scan(&r, &mut text).unwrap();
                let text = String::from_utf8(text).unwrap();
                assert!(text.contains("none, the load fails first: CorruptRecordException"));
                assert!(!text.contains("would truncate"), "{text}");
            }
            false => {
                assert!(p.load_failure.is_none(), "{:?}", p.load_failure);
                assert!(v.prediction.load_failure.is_none());
                assert_eq!(recovered_names(&v), [swap_name(0)]);
            }
        }
    }
}
