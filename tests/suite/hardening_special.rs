//! Special files where the commands that read only part of a log dir look (`groups`,
//! `consumers`, `history`), where no partition is named (a segment outside a `topic-N`
//! directory), and given to `collect` and `merge` — found by the special-file campaign
//! of 2026-12-05: each of these returned exit 0 or 1 with nothing on stderr, or hung.
#![cfg(feature = "testkit")]

use crate::common::{mkfifo, run};
use klogscan::testkit::{Batch, PartitionBuilder, Producer};
use run::klogscan;
use std::path::{Path, PathBuf};

const SEG: &str = "00000000000000000000.log";

/// A log dir holding `orders-0`, `__consumer_offsets-0` (a classic group committing on
/// `orders-0`) and `__cluster_metadata-0` (`orders-0` created).
fn log_dir(root: &Path) -> PathBuf {
    let logs = root.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(
        logs.join("meta.properties"),
        "version=1\nnode.id=1\ncluster.id=x\n",
    )
    .unwrap();
    let mut b = PartitionBuilder::new("orders", 0);
    b.append(Batch::new(Producer::PLAIN).values(["a", "b"]));
    b.write(&logs).unwrap();
    crate::common::group_and_orders_metadata(&logs);
    logs
}

fn run_on(cmd: &str, path: &Path) -> run::Run {
    klogscan(&[cmd.as_ref(), path.as_os_str()], None, 60)
}

/// `groups` and `history` read only the `__consumer_offsets` and `__cluster_metadata`
/// partitions: a FIFO among their files is named on stderr, exit 2 (before: exit 0, the
/// groups or history of nothing, nothing said). A FIFO in a partition they do not read
/// changes nothing for them.
#[test]
fn groups_and_history_name_a_special_file_among_what_they_read() {
    let cases = [
        (
            "groups",
            "__consumer_offsets-0/00000000000000000000.log",
            true,
        ),
        ("groups", "orders-0/00000000000000000000.log", false),
        (
            "history",
            "__cluster_metadata-0/00000000000000000000.log",
            true,
        ),
        ("history", "__cluster_metadata-0/quorum-state", true),
        ("history", "orders-0/00000000000000000000.log", false),
    ];
    for (cmd, name, read) in cases {
        let t = tempfile::tempdir().unwrap();
        let logs = log_dir(t.path());
        let clean = run_on(cmd, &logs);
        assert_eq!(clean.code(), 0, "{cmd} clean: {clean:?}");
        assert_eq!(clean.err, "", "{cmd} clean");
        mkfifo(&logs.join(name));
        let r = run_on(cmd, &logs);
        if read {
            assert_eq!(r.code(), 2, "{cmd} {name}: {r:?}");
            assert!(
                r.err.contains(name) && r.err.contains("FIFO"),
                "{cmd} {name}: stderr {}",
                r.err
            );
        } else {
            assert_eq!((r.code(), r.err.as_str()), (0, ""), "{cmd} {name}");
            assert_eq!(r.out, clean.out, "{cmd} {name}");
        }
    }
}

/// A `quorum-state` far larger than any a node writes (a sparse 1 GiB file) is refused by
/// its size, as every small file is (64 MiB), not read whole: `history` names it on stderr,
/// exit 2, and takes nothing from it.
#[test]
fn history_refuses_a_huge_quorum_state_by_its_size() {
    let t = tempfile::tempdir().unwrap();
    let logs = log_dir(t.path());
    let q = logs.join("__cluster_metadata-0/quorum-state");
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&q)
        .unwrap();
    f.set_len(1 << 30).unwrap();
    drop(f);
    let r = run_on("history", &logs);
    assert_eq!(r.code(), 2, "{r:?}");
    assert!(
        r.err.contains("quorum-state") && r.err.contains("64 MiB"),
        "stderr {}",
        r.err
    );
}

/// `consumers` is a whole scan (every partition's end, LSO and hanging transactions): a
/// FIFO anywhere it reads is named on stderr, exit 2 (before: exit 0, the lag of a
/// partition never read printed as if read, nothing said).
#[test]
fn consumers_name_every_special_file_of_their_scan() {
    for name in [
        "orders-0/00000000000000000000.log",
        "__consumer_offsets-0/00000000000000000000.log",
        "orders-0/leader-epoch-checkpoint",
    ] {
        let t = tempfile::tempdir().unwrap();
        let logs = log_dir(t.path());
        let clean = run_on("consumers", &logs);
        assert_eq!((clean.code(), clean.err.as_str()), (0, ""), "clean");
        mkfifo(&logs.join(name));
        let r = run_on("consumers", &logs);
        assert_eq!(r.code(), 2, "{name}: {r:?}");
        assert!(
            r.err.contains(name) && r.err.contains("FIFO"),
            "{name}: stderr {}",
            r.err
        );
    }
}

/// A segment named on the command line outside a `topic-N` directory belongs to no
/// partition (`-1`): when it cannot be read, every command names it on stderr and exits
/// 2, as for a partition's segment (before: exit 1, the finding in the report only), and
/// `collect` too (before: exit 0, the bundle written, nothing said). A segment given in a
/// `topic-N` directory is named by `collect` as well.
#[test]
fn an_unreadable_segment_of_no_partition_is_named_and_exit_2() {
    let t = tempfile::tempdir().unwrap();
    for dir in ["loose", "orders-0"] {
        let seg = t.path().join(dir).join(SEG);
        std::fs::create_dir_all(seg.parent().unwrap()).unwrap();
        mkfifo(&seg);
        for cmd in ["scan", "verify", "producers", "txns"] {
            let r = run_on(cmd, &seg);
            assert_eq!(r.code(), 2, "{cmd} {dir}: {r:?}");
            assert!(r.err.contains(&format!("{dir}/{SEG}")), "{cmd}: {}", r.err);
        }
        let out = t.path().join(format!("{dir}.bundle"));
        let r = klogscan(
            &[
                "collect".as_ref(),
                seg.as_os_str(),
                "--out".as_ref(),
                out.as_os_str(),
            ],
            None,
            60,
        );
        assert_eq!(r.code(), 2, "collect {dir}: {r:?}");
        assert!(r.err.contains("FIFO"), "collect {dir}: {}", r.err);
        let r = run_on("merge", &out);
        assert_eq!(r.code(), 2, "merge {dir}: {r:?}");
        assert!(r.err.contains("FIFO"), "merge {dir}: {}", r.err);
    }
    // Near miss: a readable segment outside a partition directory is read, exit 0.
    let loose = t.path().join("plain");
    let mut b = PartitionBuilder::new("orders", 0);
    b.append(Batch::new(Producer::PLAIN).values(["a"]));
    b.write(&loose).unwrap();
    let seg = loose.join("orders-0").join(SEG);
    let moved = loose.join(SEG);
    std::fs::rename(&seg, &moved).unwrap();
    let r = run_on("scan", &moved);
    assert_eq!((r.code(), r.err.as_str()), (0, ""), "{r:?}");
}

/// A bundle is read twice (its head, then its frames): `merge` copies a FIFO's bytes once
/// (`bundle::source`), opening it without waiting for a writer — one no process writes to
/// is empty, refused as such, never a hang (before the FIFO was copied: a FIFO without a
/// writer blocked the merge for ever). A device is refused before it is opened.
#[test]
fn merge_refuses_a_fifo_without_a_writer_and_a_device() {
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("b.bundle");
    mkfifo(&fifo);
    let r = run_on("merge", &fifo);
    assert_eq!(r.code(), 2, "{r:?}");
    assert!(
        r.err.contains("b.bundle") && r.err.contains("nothing came through the pipe"),
        "{}",
        r.err
    );
    let r = run_on("merge", Path::new("/dev/zero"));
    assert_eq!(r.code(), 2, "{r:?}");
    assert!(r.err.contains("not a regular file"), "{}", r.err);
    // In a directory of bundles, a FIFO or a dangling link named `*.klb` is named too
    // (before: skipped unsaid, the merge went on without it).
    let dir = t.path().join("bundles");
    std::fs::create_dir(&dir).unwrap();
    mkfifo(&dir.join("a.klb"));
    let r = run_on("merge", &dir);
    assert_eq!(r.code(), 2, "{r:?}");
    assert!(r.err.contains("a.klb"), "{}", r.err);
    std::fs::remove_file(dir.join("a.klb")).unwrap();
    std::os::unix::fs::symlink(t.path().join("gone"), dir.join("b.klb")).unwrap();
    let r = run_on("merge", &dir);
    assert_eq!(r.code(), 2, "{r:?}");
    assert!(r.err.contains("b.klb"), "{}", r.err);
}

/// A `.tar.gz` of `orders-0` (with a `meta.properties`), as a broker's log dir archived.
fn targz(path: &Path) {
    let t = tempfile::tempdir().unwrap();
    let logs = log_dir(t.path());
    let mut b = tar::Builder::new(Vec::new());
    b.append_dir_all("logs/orders-0", logs.join("orders-0"))
        .unwrap();
    b.append_path_with_name(logs.join("meta.properties"), "logs/meta.properties")
        .unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &b.into_inner().unwrap()).unwrap();
    std::fs::write(path, gz.finish().unwrap()).unwrap();
}

/// Paths, sizes, types and mtimes of everything under `root`, the root itself included.
fn tree(root: &Path) -> Vec<String> {
    fn walk(p: &Path, out: &mut Vec<String>) {
        let m = std::fs::symlink_metadata(p).unwrap();
        out.push(format!(
            "{} {} {:?} {:?}",
            p.display(),
            m.len(),
            m.file_type(),
            m.modified().unwrap()
        ));
        if m.is_dir() {
            let mut names: Vec<_> = std::fs::read_dir(p)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            names.sort();
            names.iter().for_each(|n| walk(n, out));
        }
    }
    let mut out = Vec::new();
    walk(root, &mut out);
    out
}

/// An archive is extracted under `TMPDIR`: a `TMPDIR` inside a directory given as input
/// (or, empty, the working directory inside it) would write into the evidence while it is
/// read. Refused before anything is extracted, exit 2, the tree unchanged (before: the
/// archive was extracted into the input directory, the run went on). Near miss: a
/// `TMPDIR` beside the inputs takes it, and is left empty.
#[test]
fn an_archive_is_never_extracted_inside_the_inputs() {
    let t = tempfile::tempdir().unwrap();
    let logs = log_dir(t.path());
    let archive = t.path().join("more.tar.gz");
    targz(&archive);
    let inside = logs.join("orders-0");
    for tmp in [logs.as_path(), inside.as_path()] {
        let before = tree(&logs);
        let r = run::klogscan_env(
            &["scan".as_ref(), logs.as_os_str(), archive.as_os_str()],
            &[("TMPDIR", tmp.to_str().unwrap())],
            None,
            None,
            60,
        );
        assert_eq!(r.code(), 2, "TMPDIR={}: {r:?}", tmp.display());
        assert!(
            r.err.contains("TMPDIR") && r.err.contains("evidence"),
            "{}",
            r.err
        );
        assert_eq!(tree(&logs), before, "TMPDIR={}", tmp.display());
    }
    // Empty: the working directory was used (`std::env::temp_dir`), here the log dir.
    let before = tree(&logs);
    let r = std::process::Command::new(env!("CARGO_BIN_EXE_klogscan"))
        .args(["scan".as_ref(), logs.as_os_str(), archive.as_os_str()])
        .env("TMPDIR", "")
        .current_dir(&logs)
        .output()
        .unwrap();
    assert_eq!(tree(&logs), before, "TMPDIR empty: {r:?}");
    // Near miss: beside the inputs.
    let beside = t.path().join("tmp");
    std::fs::create_dir(&beside).unwrap();
    let r = run::klogscan_env(
        &["scan".as_ref(), logs.as_os_str(), archive.as_os_str()],
        &[("TMPDIR", beside.to_str().unwrap())],
        None,
        None,
        60,
    );
    // Exit 1: the group's commit on the log dir's `orders-0` is past its end (the
    // archive's copy of it is another partition directory).
    assert_eq!((r.code(), r.err.as_str()), (1, ""), "{r:?}");
    assert_eq!(tree(&logs), before);
    assert_eq!(std::fs::read_dir(&beside).unwrap().count(), 0, "temp left");
}

/// `history` replays the metadata log, its snapshots and the log dir's
/// `bootstrap.checkpoint`: one it may not read (mode 000, run as `nobody` when root) is
/// named on stderr, exit 2 (before: exit 0, the history of nothing — the read error was
/// taken for a log whose recovered end is unknown). Near miss: readable, exit 0, nothing
/// said.
#[test]
fn history_names_a_metadata_file_it_may_not_read() {
    use std::os::unix::fs::PermissionsExt;
    let ids = match run::permission_bits_apply() {
        Ok(ids) => ids,
        Err(why) => {
            println!("SKIPPED ({why})");
            return;
        }
    };
    for name in [
        "__cluster_metadata-0/00000000000000000000.log",
        "bootstrap.checkpoint",
    ] {
        let t = tempfile::tempdir().unwrap();
        run::make_traversable(t.path());
        let logs = log_dir(t.path());
        let file = logs.join(name);
        if !file.exists() {
            std::fs::copy(logs.join("__cluster_metadata-0").join(SEG), &file).unwrap();
        }
        let history = || run::klogscan_as(&["history".as_ref(), logs.as_os_str()], ids, None, 60);
        let r = history();
        assert_eq!(
            (r.code(), r.err.as_str()),
            (0, ""),
            "{name} readable: {r:?}"
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
        let r = history();
        assert_eq!(r.code(), 2, "{name}: {r:?}");
        assert!(r.err.contains(name), "{name}: stderr {}", r.err);
    }
}
