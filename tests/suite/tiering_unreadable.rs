//! The tiering check's read of a tiered replica's `leader-epoch-checkpoint` (its lineage:
//! `cluster::tiering::epoch_file`). A file klogscan could not read — no read permission
//! (run as `nobody` when root), a directory or a FIFO in its place — was taken for an
//! absent one in silence: exit 0 and the verdict of a replica without the file. Now it is
//! named once on stderr (exit 2), an `unreadable_file` finding unless discovery named it,
//! and the verdict resting on the lineage is not given. Near misses: readable, and absent
//! (the verdict of a replica without the file, nothing said).
#![cfg(feature = "testkit")]

use crate::common::{mkfifo, run};
use klogscan::testkit::group_scenarios::{self as sc, GroupLog};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const NAME: &str = "orders-0/leader-epoch-checkpoint";

/// The healthy tiered `orders-0` (log start 20, local log start 60) with its log start
/// moved to 40 by retention, past remote segment [20,39], which the next run deletes by
/// the log-start rule (its epochs are at or below the lineage's first): with the lineage
/// nothing is said; without the file the segment is taken to stay
/// (`remote_log_start_mismatch`). With `group`, a classic group committing on `orders-0`
/// at leader epoch 1, which the consumer check validates against the same file.
fn log_dir(root: &Path, group: bool) -> PathBuf {
    let mut t = crate::tiering::healthy();
    t.log_start(40);
    let m = t.write(root).unwrap();
    if group {
        let mut g = GroupLog::new();
        sc::classic_group(&mut g, "app");
        g.write(&m.log_dir, 0).unwrap();
    }
    m.log_dir
}

fn scan(cmd: &str, logs: &Path, ids: Option<(u32, u32)>) -> (run::Run, serde_json::Value) {
    let args = [cmd, logs.to_str().unwrap(), "--format", "json"];
    let r = run::klogscan_as(&args, ids, None, 60);
    let doc = serde_json::from_str(&r.out).unwrap_or(serde_json::Value::Null);
    (r, doc)
}

/// The findings of `kind` in a `scan` or `verify` JSON document.
fn of<'a>(doc: &'a serde_json::Value, kind: &str) -> Vec<&'a serde_json::Value> {
    let all = doc["findings"].as_array().into_iter().flatten();
    all.filter(|f| f["kind"] == kind).collect()
}

/// Readable: nothing said, no verdict to give. Absent: the verdict of a replica without
/// the file (`remote_log_start_mismatch`, a warning), nothing said.
#[test]
fn near_misses_readable_and_absent() {
    let t = tempfile::tempdir().unwrap();
    let logs = log_dir(t.path(), false);
    let (r, doc) = scan("scan", &logs, None);
    assert!(r.code() == 0 && r.err.is_empty(), "{r:?}");
    assert!(of(&doc, "remote_log_start_mismatch").is_empty(), "{doc:#}");
    std::fs::remove_file(logs.join(NAME)).unwrap();
    let (r, doc) = scan("scan", &logs, None);
    assert!(r.code() <= 1 && r.err.is_empty(), "{r:?}");
    assert_eq!(of(&doc, "remote_log_start_mismatch").len(), 1, "{doc:#}");
    assert!(of(&doc, "unreadable_file").is_empty(), "{doc:#}");
}

/// What stands where the file should (a directory, a FIFO) in place of it: named once on
/// stderr with what it is, exit 2, no `remote_log_start_mismatch`. The directory is the
/// tiering check's `unreadable_file` finding (`special_file`); the FIFO discovery's error.
#[test]
fn a_directory_or_fifo_in_its_place_is_named_and_no_verdict_given() {
    for (what, make) in [
        (
            "directory",
            (|p: &Path| std::fs::create_dir(p).unwrap()) as fn(&Path),
        ),
        ("FIFO", |p: &Path| mkfifo(p)),
    ] {
        let t = tempfile::tempdir().unwrap();
        let logs = log_dir(t.path(), false);
        let file = logs.join(NAME);
        std::fs::remove_file(&file).unwrap();
        make(&file);
        let (r, doc) = scan("scan", &logs, None);
        assert_eq!(r.code(), 2, "{what}: {r:?}");
        assert!(
            r.err.matches(NAME).count() == 1 && r.err.contains(what),
            "{what}: stderr {}",
            r.err
        );
        assert!(
            of(&doc, "remote_log_start_mismatch").is_empty(),
            "{what}: {doc:#}"
        );
        if what == "directory" {
            let u = of(&doc, "unreadable_file");
            assert_eq!(u.len(), 1, "{doc:#}");
            assert_eq!(u[0]["evidence"]["reason"], "special_file");
            assert_eq!(u[0]["segment"], "leader-epoch-checkpoint");
            assert_eq!(
                (u[0]["topic"].as_str(), u[0]["partition"].as_i64()),
                (Some("orders"), Some(0))
            );
        }
    }
}

/// Mode 000: `scan` and `verify` name it once (`verify`'s own cross-check of the file
/// says it too: one finding), exit 2, no verdict; with a group committing on the
/// partition, the consumer check needs it as well and it is still one finding, said once.
#[test]
fn a_checkpoint_that_may_not_be_read_is_named_once_and_no_verdict_given() {
    let ids = match run::permission_bits_apply() {
        Ok(ids) => ids,
        Err(why) => {
            println!("SKIPPED ({why})");
            return;
        }
    };
    for group in [false, true] {
        let t = tempfile::tempdir().unwrap();
        run::make_traversable(t.path());
        let logs = log_dir(t.path(), group);
        for cmd in ["scan", "verify"] {
            let (clean, _) = scan(cmd, &logs, ids);
            assert!(
                clean.code() <= 1 && clean.err.is_empty(),
                "{cmd} {group}: {clean:?}"
            );
        }
        let file = logs.join(NAME);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
        for cmd in ["scan", "verify"] {
            let (r, doc) = scan(cmd, &logs, ids);
            assert_eq!(r.code(), 2, "{cmd} {group}: {r:?}");
            assert!(
                r.err.matches(NAME).count() == 1 && r.err.contains("ermission denied"),
                "{cmd} {group}: stderr {}",
                r.err
            );
            assert!(
                of(&doc, "remote_log_start_mismatch").is_empty(),
                "{cmd} {group}: {doc:#}"
            );
            let u = of(&doc, "unreadable_file");
            assert_eq!(u.len(), 1, "{cmd} {group}: {doc:#}");
            assert_eq!(u[0]["evidence"]["reason"], "io_error");
        }
    }
}

/// A stopped metadata consumer's gap (`tiering_stop.rs`: broker 2 hosting `a-0` stops
/// before any record of `orders-0`): whether the stop caused it — every record's log
/// serves its offsets in the epochs the lineage gives them — rests on the lineage. With
/// a directory in the checkpoint's place the gap (no epoch serves it either way) is still
/// reported, but not laid on the stop; the file is an `unreadable_file` finding. Near
/// miss: readable, the gap is the stop's.
#[test]
fn a_stopped_consumers_gap_is_not_laid_on_the_stop_without_the_lineage() {
    use crate::tiering_stop::{Shape, host_a, on_orders, scan, stops, tiered};
    use klogscan::finding::Kind;
    for unread in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let m = tiered(Shape::After, 2, 0, true, d.path());
        host_a(&m.log_dir);
        if unread {
            let file = m.partition_dir.join("leader-epoch-checkpoint");
            std::fs::remove_file(&file).unwrap();
            std::fs::create_dir(&file).unwrap();
        }
        let r = scan(std::slice::from_ref(&m.log_dir), &m);
        assert_eq!(
            on_orders(&r, Kind::RemoteSegmentGap, 2),
            vec![0],
            "{unread}"
        );
        let gap = r
            .findings
            .iter()
            .find(|f| f.kind == Kind::RemoteSegmentGap)
            .unwrap();
        let stop = vec![stops(&r)[0].id.clone()];
        let u: Vec<_> = r
            .findings
            .iter()
            .filter(|f| f.kind == Kind::UnreadableFile && f.topic == "orders")
            .collect();
        if unread {
            assert!(gap.caused_by.is_empty(), "{gap:#?}");
            assert_eq!(u.len(), 1, "{:#?}", r.findings);
        } else {
            assert_eq!(gap.caused_by, stop, "{gap:#?}");
            assert!(u.is_empty(), "{:#?}", r.findings);
        }
    }
}

/// `verify`'s own cross-check of the file meets a directory in its place: an untiered
/// partition no cluster check reads the file of (before: the cross-check took it for an
/// absent file, exit 1, nothing said). Near miss: readable, nothing said; and with the
/// tiering check needing it too, still one finding.
#[test]
fn verify_names_a_directory_in_its_place_once() {
    use klogscan::testkit::files::LogDirBuilder;
    use klogscan::testkit::scenario::{Batch, PartitionBuilder, Producer};
    let t = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("plain", 0);
    p.append(Batch::new(Producer::PLAIN).records(5));
    let logs = t.path().join("b1");
    LogDirBuilder::new(1).partition(p).write(&logs).unwrap();
    let file = logs.join("plain-0/leader-epoch-checkpoint");
    assert!(file.is_file());
    let (r, doc) = scan("verify", &logs, None);
    assert!(r.code() <= 1 && r.err.is_empty(), "{r:?}");
    assert!(of(&doc, "unreadable_file").is_empty(), "{doc:#}");
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let t2 = tempfile::tempdir().unwrap();
    let tiered = log_dir(t2.path(), true);
    std::fs::remove_file(tiered.join(NAME)).unwrap();
    std::fs::create_dir(tiered.join(NAME)).unwrap();
    for (logs, name) in [(&logs, "plain-0/leader-epoch-checkpoint"), (&tiered, NAME)] {
        let (r, doc) = scan("verify", logs, None);
        assert_eq!(r.code(), 2, "{name}: {r:?}");
        assert_eq!(r.err.matches(name).count(), 1, "stderr {}", r.err);
        let u = of(&doc, "unreadable_file");
        assert_eq!(u.len(), 1, "{name}: {doc:#}");
        assert_eq!(u[0]["evidence"]["reason"], "special_file");
    }
}

/// `collect` then `merge` gives what `scan` gives over the same directory (output and
/// exit code) when the file cannot be read: a directory in its place, a FIFO (discovery's
/// error), mode 000 (as `nobody`, when root). Before, the collect left the file out and
/// the merge took it for an absent one: exit 1, `remote_log_start_mismatch` given.
/// Near miss: readable.
#[test]
fn merge_says_what_scan_says_of_an_unreadable_checkpoint() {
    let ids = run::permission_bits_apply().ok().flatten();
    type Make = fn(&Path);
    let cases: [(&str, Make); 4] = [
        ("readable", |_| {}),
        ("directory", |p| {
            std::fs::remove_file(p).unwrap();
            std::fs::create_dir(p).unwrap();
        }),
        ("FIFO", |p| {
            std::fs::remove_file(p).unwrap();
            mkfifo(p);
        }),
        ("mode 000", |p| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o000)).unwrap()
        }),
    ];
    for (what, make) in cases {
        let t = tempfile::tempdir().unwrap();
        run::make_traversable(t.path());
        let logs = log_dir(t.path(), true);
        make(&logs.join(NAME));
        let out = t.path().join("out");
        std::fs::create_dir(&out).unwrap();
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).unwrap();
        let bundle = out.join("b.klb");
        let (b, l) = (bundle.to_str().unwrap(), logs.to_str().unwrap());
        let c = run::klogscan_as(&["collect", l, "--out", b], ids, None, 60);
        assert!(c.code() == 0 || c.code() == 2, "{what}: {c:?}");
        let (scanned, doc) = scan("scan", &logs, ids);
        let (merged, _) = scan("merge", &bundle, None);
        assert_eq!(scanned.code(), merged.code(), "{what}: {merged:?}");
        assert_eq!(scanned.out, merged.out, "{what}");
        // Mode 000 does not stop root (when no other user can be taken).
        let readable = what == "readable"
            || (what == "mode 000" && ids.is_none() && unsafe { libc::geteuid() } == 0);
        let unread = of(&doc, "unreadable_file").len();
        if readable {
            assert!(scanned.code() <= 1 && unread == 0, "{what}: {doc:#}");
        } else {
            assert_eq!(scanned.code(), 2, "{what}: {scanned:?}");
            // Once: the FIFO as discovery's finding, the others as the checks'.
            assert_eq!(unread, 1, "{what}: {doc:#}");
        }
        assert!(
            of(&doc, "remote_log_start_mismatch").is_empty(),
            "{what}: {doc:#}"
        );
    }
}

/// A `leader-epoch-checkpoint` past 1 MiB (a long leadership history: 200 000 epochs) is
/// carried by the bundle like a small one, so `merge` gives what `scan` gives (before,
/// the collect left any file over 1 MiB out and the merge took it for an absent one).
/// The file decides the verdict: without it, `remote_log_start_mismatch`.
#[test]
fn a_checkpoint_past_a_mebibyte_travels_in_the_bundle() {
    let t = tempfile::tempdir().unwrap();
    let logs = log_dir(t.path(), true);
    let file = logs.join(NAME);
    let old = std::fs::read_to_string(&file).unwrap();
    let entries: Vec<&str> = old.lines().skip(2).collect();
    // The same lineage after 200 000 epochs that start where its first entry starts.
    let first = entries[0].split(' ').nth(1).unwrap();
    let mut text = format!("0\n{}\n", 200_000 + entries.len());
    for e in 0..200_000 {
        text.push_str(&format!("{e} {first}\n"));
    }
    for l in &entries {
        let (e, o) = l.split_once(' ').unwrap();
        let e: i64 = e.parse().unwrap();
        text.push_str(&format!("{} {o}\n", e + 200_000));
    }
    assert!(text.len() > 1 << 20);
    std::fs::write(&file, text).unwrap();
    let bundle = t.path().join("b.klb");
    let (b, l) = (bundle.to_str().unwrap(), logs.to_str().unwrap());
    let c = run::klogscan(&["collect", l, "--out", b], None, 60);
    assert!(c.code() <= 1, "{c:?}");
    let (scanned, doc) = scan("scan", &logs, None);
    let (merged, _) = scan("merge", &bundle, None);
    assert_eq!(scanned.code(), merged.code(), "{merged:?}");
    assert_eq!(scanned.out, merged.out);
    assert!(of(&doc, "remote_log_start_mismatch").is_empty(), "{doc:#}");
    std::fs::remove_file(&file).unwrap();
    let (_, doc) = scan("scan", &logs, None);
    assert_eq!(of(&doc, "remote_log_start_mismatch").len(), 1, "{doc:#}");
}
