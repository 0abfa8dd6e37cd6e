//! `noncanonical_segment_name`: segment files under names the broker does not give them.
//! `LogLoader.loadSegmentFiles` reads the offset in such a name
//! (`LogFileUtils.offsetFromFile`) and opens the segment under the broker's name for it
//! (`LogSegment.open` → `FileRecords.open` with `CREATE`): the file is never read, and
//! when no file has the broker's name an empty segment is created in its place. Neither
//! the scan nor the prediction may credit such a file's bytes. Also the names a plain walk
//! sees otherwise than the broker's listing: symlinks, and names that are not UTF-8.

use super::*;
use klogscan::verify::RecoveryPrediction;

/// The `noncanonical_segment_name` findings: (file, severity, fate).
fn noncanonical(v: &PartitionVerification) -> Vec<(String, Severity, String)> {
    of_kind(v, Kind::NoncanonicalSegmentName)
        .into_iter()
        .map(|f| {
            (
                f.segment.clone().unwrap_or_default(),
                f.severity,
                f.evidence["fate"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The verification of the one partition at `dir`, whatever the inventory's errors (a
/// symlink not followed, a name that is not UTF-8: said, and not fatal).
fn run_with(dir: &Path, opts: &VerifyOptions) -> PartitionVerification {
    let r = verify(&[dir.to_path_buf()], opts);
    assert_eq!(r.partitions.len(), 1, "{:?}", r.errors);
    r.partitions.into_iter().next().unwrap()
}

/// The prediction as JSON, without its startup actions (which list the files).
fn without_leftovers(p: &RecoveryPrediction) -> serde_json::Value {
    let mut v = serde_json::to_value(p).unwrap();
    v.as_object_mut().unwrap().remove("leftovers");
    v
}

/// The busy partition's last segment restored under its offset in another width (`N.log`,
/// not `0000…N.log`): the load opens `0000…N.log`, finds none, creates it empty (its
/// indexes, met before `N.log` in name order, were deleted as orphaned: it is recovered
/// at load) and the log ends at N. The scan reads two segments, not three; the prediction
/// says so. Under the broker's name the same bytes are the log's (no finding).
#[test]
fn a_segment_under_a_short_name_is_never_read_and_an_empty_one_is_created() {
    let (_d, m) = write(busy(PartitionFileOptions::default()), true);
    let before = run(&m.dir);
    assert!(noncanonical(&before).is_empty());
    assert_eq!(before.scan.segments, 3);
    let (base, log) = m.segments[2].clone();
    let short = format!("{base}.log");
    std::fs::rename(&log, m.dir.join(&short)).unwrap();
    let v = run(&m.dir);
    assert_eq!(
        noncanonical(&v),
        vec![(short.clone(), Severity::Error, "created_empty".into())]
    );
    let f = &of_kind(&v, Kind::NoncanonicalSegmentName)[0];
    assert_eq!(f.evidence["offset"], base);
    assert!(
        f.broker_behaviour.contains("LogSegment.open"),
        "{}",
        f.broker_behaviour
    );
    assert!(
        f.remediation
            .as_deref()
            .unwrap()
            .contains(&format!("rename it to {base:020}.log")),
        "{:?}",
        f.remediation
    );
    // The scan reads the two segments of the broker's names only.
    assert_eq!(v.scan.segments, 2);
    assert!(v.scan.batches < before.scan.batches);
    assert_eq!(v.scan.log_end_offset, Some(base));
    // The load: the empty segment at `base`, recovered for its missing index, ends the log.
    let p = &v.prediction;
    let created = format!("{base:020}.log");
    assert!(
        p.recovered_segments.iter().any(|s| s.segment == created
            && s.reason
                .contains(&format!("created empty at load for {short}"))),
        "{:?}",
        p.recovered_segments
    );
    assert_eq!(p.log_end_offset_after, Some(base));
    assert!(p.outcome_unknown.is_none(), "{:?}", p.outcome_unknown);
    assert!(p.load_failure.is_none());
    assert!(
        p.leftovers
            .iter()
            .any(|l| l.file == short && l.kind == "noncanonical_name"),
        "{:?}",
        p.leftovers
    );
    // Its indexes are orphans the loop deletes before it meets `N.log`.
    assert!(
        p.leftovers
            .iter()
            .any(|l| l.file == format!("{base:020}.index") && l.kind == "orphan_index")
    );
    // Under the broker's name again: a segment, no finding.
    std::fs::rename(m.dir.join(&short), &log).unwrap();
    let again = run(&m.dir);
    assert!(noncanonical(&again).is_empty());
    assert_eq!(again.scan.segments, 3);
}

/// `0000…N.copy.log` sorts before `0000…N.index` (`c` < `i`): the load creates
/// `0000…N.log` when it meets the copy, so the broker's index files of N that follow are
/// not orphans any more: the created segment adopts them (not recovered after a clean
/// shutdown; its end is still its base).
#[test]
fn a_copy_named_before_its_indexes_makes_them_the_created_segments() {
    let (_d, m) = write(busy(PartitionFileOptions::default()), true);
    let (base, log) = m.segments[2].clone();
    let copy = format!("{base:020}.copy.log");
    std::fs::rename(&log, m.dir.join(&copy)).unwrap();
    let v = run(&m.dir);
    assert_eq!(
        noncanonical(&v),
        vec![(copy.clone(), Severity::Error, "created_empty".into())]
    );
    let p = &v.prediction;
    assert!(
        !p.recovered_segments
            .iter()
            .any(|s| s.segment == format!("{base:020}.log")),
        "{:?}",
        p.recovered_segments
    );
    assert_eq!(p.log_end_offset_after, Some(base));
    let index = format!("{base:020}.index");
    let kept = p.leftovers.iter().find(|l| l.file == index).unwrap();
    assert!(kept.action.starts_with("kept:"), "{}", kept.action);
}

/// Names of an existing segment's offset (`0000…0.copy.log`, `0.log`, `+0.log`), and
/// index names (`N.index` of an existing segment: left as it is; `7.index` and `-1.index`,
/// of none: deleted as orphaned): the broker never reads them, and the load is what it is without
/// them — info findings, the same prediction but for the startup actions.
#[test]
fn other_names_of_existing_segments_and_stray_index_names_are_info() {
    let (_d, m) = write(busy(PartitionFileOptions::default()), true);
    let before = run(&m.dir);
    let first = std::fs::read(&m.segments[0].1).unwrap();
    let b1 = m.segments[1].0;
    for name in ["00000000000000000000.copy.log", "0.log", "+0.log"] {
        std::fs::write(m.dir.join(name), &first).unwrap();
    }
    std::fs::write(m.dir.join(format!("{b1}.index")), b"").unwrap();
    std::fs::write(m.dir.join("7.index"), b"").unwrap();
    // A negative offset in an index name: deleted as orphaned too (no segment is opened).
    std::fs::write(m.dir.join("-1.index"), b"").unwrap();
    let v = run(&m.dir);
    let mut found = noncanonical(&v);
    found.sort();
    let info = |n: &str, fate: &str| (n.to_string(), Severity::Info, fate.to_string());
    let mut want = vec![
        info("+0.log", "opens_existing"),
        info("0.log", "opens_existing"),
        info("00000000000000000000.copy.log", "opens_existing"),
        info(&format!("{b1}.index"), "index_ignored"),
        info("7.index", "index_deleted"),
        info("-1.index", "index_deleted"),
    ];
    want.sort();
    assert_eq!(found, want);
    assert_eq!(v.scan.batches, before.scan.batches);
    assert_eq!(
        without_leftovers(&v.prediction),
        without_leftovers(&before.prediction)
    );
}

/// Where the load does what the model does not follow, the prediction says so instead of
/// guessing: `5.log` creates an empty segment at 5 inside the first segment's offsets (the
/// segments then overlap), `-1.log` a segment of a negative base (a warning).
#[test]
fn overlapping_and_negative_names_leave_the_outcome_unknown() {
    let (_d, m) = write(busy(PartitionFileOptions::default()), true);
    assert!(m.segments[1].0 > 5);
    std::fs::write(m.dir.join("5.log"), b"").unwrap();
    let v = run(&m.dir);
    assert_eq!(
        noncanonical(&v),
        vec![("5.log".into(), Severity::Error, "created_empty".into())]
    );
    let u = v.prediction.outcome_unknown.clone().expect("not followed");
    assert!(u.contains("overlap"), "{u}");
    assert_eq!(v.prediction.log_end_offset_after, None);
    std::fs::remove_file(m.dir.join("5.log")).unwrap();
    std::fs::write(m.dir.join("-1.log"), b"").unwrap();
    let v = run(&m.dir);
    assert_eq!(
        noncanonical(&v),
        vec![("-1.log".into(), Severity::Warning, "negative_base".into())]
    );
    let u = v.prediction.outcome_unknown.clone().expect("not followed");
    assert!(u.contains("negative base offset"), "{u}");
}

/// A `.log.swap` file under a short name: the first pass opens `0000…N.log.swap`, finds
/// none, creates it empty, and the third pass renames it over `0000…N.log`: the segment at
/// N loads empty and its records are lost (an error), while the file found is renamed to
/// `N.log` and never read. Under the broker's name the swap's bytes are swapped in.
#[test]
fn a_swap_under_a_short_name_empties_its_segment() {
    let (_d, m) = write(busy(PartitionFileOptions::default()), true);
    let (base, log) = m.segments[2].clone();
    let bytes = std::fs::read(&log).unwrap();
    let short = format!("{base}.log.swap");
    std::fs::write(m.dir.join(&short), &bytes).unwrap();
    let v = run(&m.dir);
    assert_eq!(
        noncanonical(&v),
        vec![(short.clone(), Severity::Error, "swap_created_empty".into())]
    );
    let f = &of_kind(&v, Kind::NoncanonicalSegmentName)[0];
    assert!(f.message.contains("records the existing"), "{}", f.message);
    assert_eq!(v.prediction.log_end_offset_after, Some(base));
    let action = &v
        .prediction
        .leftovers
        .iter()
        .find(|l| l.file == short)
        .unwrap()
        .action;
    assert!(action.contains("creates it empty"), "{action}");
    // The broker's name: the swap is completed with its bytes, the log end kept.
    std::fs::rename(
        m.dir.join(&short),
        m.dir.join(format!("{base:020}.log.swap")),
    )
    .unwrap();
    let v = run(&m.dir);
    assert!(noncanonical(&v).is_empty());
    assert_eq!(v.prediction.log_end_offset_after, Some(m.log_end_offset));
}

/// The scan does not read a noncanonical `.log` either: it says what the load does
/// instead (the same finding `verify` carries) and plans the load's recovery with the
/// segment the load creates. Without such a name, no finding.
#[test]
fn the_scan_does_not_read_a_noncanonical_log_and_says_so() {
    let (_d, m) = write(busy(PartitionFileOptions::default()), true);
    let scan = || {
        klogscan::pipeline::scan(
            std::slice::from_ref(&m.dir),
            &klogscan::partition::scan::ScanOptions::default(),
        )
    };
    let before = scan();
    assert!(
        !before
            .findings
            .iter()
            .any(|f| f.kind == Kind::NoncanonicalSegmentName)
    );
    assert_eq!(before.partitions[0].segments, 3);
    let (base, log) = m.segments[2].clone();
    let plus = format!("+{base}.log");
    std::fs::rename(&log, m.dir.join(&plus)).unwrap();
    let scanned = scan();
    let p = &scanned.partitions[0];
    assert_eq!(p.segments, 2);
    assert_eq!(p.log_end_offset, Some(base));
    assert!(p.truncation_unknown.is_none());
    let f: Vec<_> = scanned
        .findings
        .iter()
        .filter(|f| f.kind == Kind::NoncanonicalSegmentName)
        .collect();
    assert_eq!(f.len(), 1, "{:#?}", scanned.findings);
    assert_eq!(f[0].segment.as_deref(), Some(plus.as_str()));
    assert_eq!(f[0].severity, Severity::Error);
    assert_eq!(f[0].evidence["fate"], "created_empty");
    // `verify` carries the scan's finding, once.
    assert_eq!(noncanonical(&run(&m.dir)).len(), 1);
}

/// Symlinks in a partition directory, as the broker's listing sees them: `File.isFile`
/// follows a link, so a symlink to a file under a name the load cannot parse fails the load
/// and one under a noncanonical name makes it create the segment, whether discovery follows
/// links or not (it never reads them: the name and a stat decide); a dangling one is no file
/// and is skipped. The findings say the file is a symlink.
#[cfg(unix)]
#[test]
fn symlinked_names_are_judged_as_the_broker_lists_them() {
    use std::os::unix::fs::symlink;
    let (d, m) = write(busy(PartitionFileOptions::default()), true);
    let outside = d.path().join("outside.bin");
    std::fs::write(&outside, b"x").unwrap();
    let beyond = m.log_end_offset + 5;
    symlink(&outside, m.dir.join("notes.log")).unwrap();
    symlink(&outside, m.dir.join(format!("{beyond}.log"))).unwrap();
    symlink(d.path().join("nowhere"), m.dir.join("junk.log")).unwrap();
    symlink(d.path().join("nowhere"), m.dir.join("7.log")).unwrap();
    for follow in [false, true] {
        let mut opts = VerifyOptions::default();
        opts.scan.follow_symlinks = follow;
        let v = run_with(&m.dir, &opts);
        let bad = of_kind(&v, Kind::UnparseableFileName);
        assert_eq!(bad.len(), 1, "{follow}: {:#?}", v.findings);
        assert_eq!(bad[0].segment.as_deref(), Some("notes.log"));
        assert_eq!(bad[0].evidence["symlink"], true);
        assert_eq!(
            noncanonical(&v),
            vec![(
                format!("{beyond}.log"),
                Severity::Error,
                "created_empty".into()
            )],
            "{follow}"
        );
        let f = &of_kind(&v, Kind::NoncanonicalSegmentName)[0];
        assert_eq!(f.evidence["symlink"], true);
        assert!(v.prediction.load_failure.is_some());
    }
    // The same names as plain files: the same findings, without the symlink mark.
    for name in ["notes.log", &format!("{beyond}.log")] {
        std::fs::remove_file(m.dir.join(name)).unwrap();
        std::fs::write(m.dir.join(name), b"x").unwrap();
    }
    let v = run_with(&m.dir, &VerifyOptions::default());
    let bad = of_kind(&v, Kind::UnparseableFileName);
    assert_eq!(bad.len(), 1);
    assert!(bad[0].evidence.get("symlink").is_none());
    assert_eq!(noncanonical(&v).len(), 1);
}

/// File and directory names that are not UTF-8: never matched lossily (no finding names a
/// lossy name, no topic is a lossy one), said where a broker may read them (with their
/// bytes escaped), and nothing predicted of them (what the broker does depends on its
/// JVM's file-name encoding); a directory given by such a name is read, its name not taken
/// for a topic-partition.
#[cfg(unix)]
#[test]
fn names_that_are_not_utf8_are_said_and_never_read_lossily() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let (d, m) = write(busy(PartitionFileOptions::default()), true);
    let odd = |b: &[u8]| OsStr::from_bytes(b).to_os_string();
    for name in [
        &b"\xff.log"[..],
        b"00000000000000000000.\xff.log",
        b"7\xfe.index",
        b"notes\xfe.txt",
    ] {
        std::fs::write(m.dir.join(odd(name)), b"x").unwrap();
    }
    let root = m.dir.parent().unwrap().to_path_buf();
    let lossy_dir = root.join(odd(b"busy\xff-1"));
    std::fs::create_dir(&lossy_dir).unwrap();
    std::fs::copy(&m.segments[0].1, lossy_dir.join("00000000000000000000.log")).unwrap();
    let inv = klogscan::discover::layout::discover(std::slice::from_ref(&root));
    let said: Vec<&str> = inv.errors.iter().map(|(_, e)| e.as_str()).collect();
    for escaped in [
        r"\xff.log",
        r"00000000000000000000.\xff.log",
        r"7\xfe.index",
        r"busy\xff-1",
    ] {
        assert!(
            said.iter()
                .any(|e| e.contains(escaped) && e.contains("not valid UTF-8")),
            "{escaped}: {said:#?}"
        );
    }
    assert!(!said.iter().any(|e| e.contains("notes")), "{said:#?}");
    assert_eq!(inv.partitions.len(), 1);
    let p = &inv.partitions[0];
    assert!(
        p.unknown.iter().all(|u| u.to_str().is_some()),
        "{:?}",
        p.unknown
    );
    let v = run_with(&m.dir, &VerifyOptions::default());
    assert!(
        !v.findings.iter().any(|f| f.message.contains('\u{fffd}')),
        "{:#?}",
        v.findings
    );
    assert!(noncanonical(&v).is_empty());
    assert!(of_kind(&v, Kind::UnparseableFileName).is_empty());
    // Given directly: a file is an input error naming its bytes; a directory is read,
    // without a topic-partition.
    let given = klogscan::discover::layout::discover(&[m.dir.join(odd(b"\xff.log"))]);
    assert_eq!(given.input_errors.len(), 1);
    assert!(
        given.input_errors[0].1.contains(r"\xff.log"),
        "{:?}",
        given.input_errors
    );
    let given = klogscan::discover::layout::discover(std::slice::from_ref(&lossy_dir));
    assert_eq!(given.partitions.len(), 1);
    assert_eq!(given.partitions[0].tp, None);
    assert_eq!(given.partitions[0].segments.len(), 1);
    assert!(
        given.errors.iter().any(|(_, e)| e.contains(r"busy\xff-1")),
        "{:?}",
        given.errors
    );
    drop(d);
}
