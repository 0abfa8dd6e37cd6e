//! Files a command reads for its answer but may not read (mode 000, run as `nobody` when
//! root): found by the permission campaign of 2026-12-05, where each of these exited 0
//! with nothing on stderr. The command names the file on stderr and exits 2; a file it
//! does not read changes nothing for it (same output, exit and empty stderr).
#![cfg(feature = "testkit")]

use crate::common::{mkfifo, run};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The producer snapshot at the first held segment of `orders-0` (its segment 0 deleted
/// by retention): what the scan seeds its replay from.
const SEED: &str = "orders-0/00000000000000000002.snapshot";

/// A log dir holding `orders-0` (segments at 0 and 2, the first deleted), a
/// `__consumer_offsets-0` (a classic group committing on `orders-0`) and a
/// `__cluster_metadata-0` (`orders-0` created) with `quorum-state`, and a
/// `bootstrap.checkpoint`.
fn log_dir(root: &Path) -> PathBuf {
    let logs = root.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let mut b = PartitionBuilder::new("orders", 0);
    b.append(Batch::new(Producer::PLAIN).values(["a", "b"]));
    b.roll();
    b.append(Batch::new(Producer::PLAIN).values(["c", "d"]));
    LogDirBuilder::new(1)
        .cluster_id("x")
        .partition(b)
        .log_start_offset("orders", 0, 2)
        .write(&logs)
        .unwrap();
    for ext in ["log", "index", "timeindex"] {
        let f = logs.join(format!("orders-0/00000000000000000000.{ext}"));
        if f.exists() {
            std::fs::remove_file(f).unwrap();
        }
    }
    assert!(
        logs.join(SEED).exists(),
        "the testkit writes the roll's snapshot"
    );
    crate::common::group_and_orders_metadata(&logs);
    let meta = logs.join("__cluster_metadata-0");
    let quorum = meta.join("quorum-state");
    if !quorum.exists() {
        std::fs::write(
            &quorum,
            r#"{"clusterId":"","leaderId":1,"leaderEpoch":1,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}"#,
        )
        .unwrap();
    }
    std::fs::copy(
        meta.join("00000000000000000000.log"),
        logs.join("bootstrap.checkpoint"),
    )
    .unwrap();
    for f in [
        "recovery-point-offset-checkpoint",
        "log-start-offset-checkpoint",
        "replication-offset-checkpoint",
        "cleaner-offset-checkpoint",
    ] {
        if !logs.join(f).exists() {
            std::fs::write(logs.join(f), "0\n0\n").unwrap();
        }
    }
    logs
}

const COMMANDS: [&str; 5] = ["scan", "verify", "groups", "history", "consumers"];

/// Which commands read `name` for their answer: `groups` replays `__consumer_offsets`
/// alone (and each log dir's `meta.properties` for its cluster), `history` the metadata
/// log (its segments, snapshots, `quorum-state`, the log dir's `bootstrap.checkpoint` and
/// `meta.properties`); `scan`, `verify` and `consumers` are whole scans.
fn reads(cmd: &str, name: &str) -> bool {
    match cmd {
        "groups" => name == "meta.properties",
        "history" => {
            name == "meta.properties"
                || name == "bootstrap.checkpoint"
                || name.starts_with("__cluster_metadata-0/")
        }
        _ => true,
    }
}

fn run_as(cmd: &str, logs: &Path, ids: Option<(u32, u32)>) -> run::Run {
    let mut args: Vec<&std::ffi::OsStr> = vec![cmd.as_ref(), logs.as_os_str()];
    if cmd == "scan" || cmd == "verify" {
        args.extend([std::ffi::OsStr::new("--now"), "1800000000000".as_ref()]);
    }
    run::klogscan_as(&args, ids, None, 60)
}

/// Each file at mode 000, every command: named on stderr (once) with the reason and exit 2
/// by the commands that read it; the others answer as with the file readable.
#[test]
fn a_file_a_command_reads_but_may_not_is_named_and_exit_2() {
    let ids = match run::permission_bits_apply() {
        Ok(ids) => ids,
        Err(why) => {
            println!("SKIPPED ({why})");
            return;
        }
    };
    for name in [
        "meta.properties",
        "__cluster_metadata-0/quorum-state",
        "bootstrap.checkpoint",
        "orders-0/leader-epoch-checkpoint",
        SEED,
        "__cluster_metadata-0/00000000000000000000.log",
        // The log dir's offset checkpoints the partition stage starts from (recovery
        // point, log start, high watermark, the cleaner's offsets): before, taken for
        // absent in silence (exit 0/1).
        "recovery-point-offset-checkpoint",
        "log-start-offset-checkpoint",
        "replication-offset-checkpoint",
        "cleaner-offset-checkpoint",
    ] {
        let t = tempfile::tempdir().unwrap();
        run::make_traversable(t.path());
        let logs = log_dir(t.path());
        let clean: Vec<run::Run> = COMMANDS.iter().map(|c| run_as(c, &logs, ids)).collect();
        for (cmd, r) in COMMANDS.iter().zip(&clean) {
            assert!(r.code() <= 1 && r.err.is_empty(), "{cmd} readable: {r:?}");
        }
        let file = logs.join(name);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
        for (cmd, clean) in COMMANDS.iter().zip(&clean) {
            let r = run_as(cmd, &logs, ids);
            if reads(cmd, name) {
                assert_eq!(r.code(), 2, "{cmd} {name}: {r:?}");
                assert!(
                    r.err.matches(name).count() == 1 && r.err.contains("ermission denied"),
                    "{cmd} {name}: stderr {}",
                    r.err
                );
            } else {
                assert_eq!(
                    (r.code(), r.err.as_str()),
                    (clean.code(), ""),
                    "{cmd} {name}"
                );
                assert_eq!(r.out, clean.out, "{cmd} {name}");
            }
        }
    }
}

/// A FIFO as the log dir's `meta.properties` or `bootstrap.checkpoint`: `groups` (the
/// first) and `history` (both) name it, exit 2 (before: exit 0).
#[test]
fn groups_and_history_name_a_special_log_dir_file_they_read() {
    for (name, cmds) in [
        ("meta.properties", &["groups", "history"][..]),
        ("bootstrap.checkpoint", &["history"][..]),
    ] {
        let t = tempfile::tempdir().unwrap();
        let logs = log_dir(t.path());
        std::fs::remove_file(logs.join(name)).unwrap();
        mkfifo(&logs.join(name));
        for cmd in cmds {
            let r = run_as(cmd, &logs, None);
            assert_eq!(r.code(), 2, "{cmd} {name}: {r:?}");
            assert!(
                r.err.contains(name) && r.err.contains("FIFO"),
                "{cmd} {name}: stderr {}",
                r.err
            );
        }
    }
}

/// Without a metadata log, a commit's validation (`OffsetsForLeaderEpoch`) still reads the
/// partition's `leader-epoch-checkpoint`: `scan` and `consumers` name it when they may not
/// read it (before: the commit was judged on no lineage, exit 1, nothing said); `groups`
/// does not read it. Near miss: readable, nothing said.
#[test]
fn a_leader_epoch_checkpoint_a_commit_is_validated_on_is_named() {
    let ids = match run::permission_bits_apply() {
        Ok(ids) => ids,
        Err(why) => {
            println!("SKIPPED ({why})");
            return;
        }
    };
    let t = tempfile::tempdir().unwrap();
    run::make_traversable(t.path());
    let logs = log_dir(t.path());
    std::fs::remove_dir_all(logs.join("__cluster_metadata-0")).unwrap();
    std::fs::remove_file(logs.join("bootstrap.checkpoint")).unwrap();
    let name = "orders-0/leader-epoch-checkpoint";
    let cmds = ["scan", "consumers", "groups"];
    let clean: Vec<run::Run> = cmds.iter().map(|c| run_as(c, &logs, ids)).collect();
    for (cmd, r) in cmds.iter().zip(&clean) {
        assert!(r.code() <= 1 && r.err.is_empty(), "{cmd} readable: {r:?}");
    }
    std::fs::set_permissions(logs.join(name), std::fs::Permissions::from_mode(0o000)).unwrap();
    for (cmd, clean) in cmds.iter().zip(&clean) {
        let r = run_as(cmd, &logs, ids);
        if *cmd == "groups" {
            assert_eq!((r.code(), r.err.as_str()), (clean.code(), ""), "{cmd}");
            assert_eq!(r.out, clean.out, "{cmd}");
        } else {
            assert_eq!(r.code(), 2, "{cmd}: {r:?}");
            assert_eq!(r.err.matches(name).count(), 1, "{cmd}: stderr {}", r.err);
        }
    }
}

/// The log dir's `recovery-point-offset-checkpoint` at mode 000 after an unclean shutdown:
/// the broker may read it (`LogManager.loadLogs`), so `verify`'s prediction says where
/// recovery starts is unknown and recovers only the last segment, whatever the entry
/// (before: the file was taken for absent, recovery point 0, both segments recovered and
/// nothing unknown). Near miss: readable, the entry 0 recovers both, nothing unknown.
#[test]
fn a_recovery_point_checkpoint_verify_may_not_read_leaves_where_recovery_starts_unknown() {
    let ids = match run::permission_bits_apply() {
        Ok(ids) => ids,
        Err(why) => {
            println!("SKIPPED ({why})");
            return;
        }
    };
    let t = tempfile::tempdir().unwrap();
    run::make_traversable(t.path());
    let logs = t.path().join("logs");
    let mut b = PartitionBuilder::new("orders", 0);
    b.append(Batch::new(Producer::PLAIN).values(["a", "b"]));
    b.roll();
    b.append(Batch::new(Producer::PLAIN).values(["c", "d"]));
    LogDirBuilder::new(1)
        .clean_shutdown(false)
        .recovery_point("orders", 0, 0)
        .partition(b)
        .write(&logs)
        .unwrap();
    let prediction = || {
        let args: Vec<&std::ffi::OsStr> = vec![
            "verify".as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
            "--now".as_ref(),
            "1800000000000".as_ref(),
            logs.as_os_str(),
        ];
        let r = run::klogscan_as(&args, ids, None, 60);
        let doc: serde_json::Value = serde_json::from_str(&r.out).unwrap();
        (r.code(), doc["partitions"][0]["prediction"].clone())
    };
    let (code, p) = prediction();
    assert_eq!(code, 0);
    assert_eq!(p["recovered_segments"].as_array().unwrap().len(), 2);
    assert!(p.get("outcome_unknown").is_none(), "{p}");
    assert!(p.get("unread_checkpoints").is_none(), "{p}");
    let name = "recovery-point-offset-checkpoint";
    std::fs::set_permissions(logs.join(name), std::fs::Permissions::from_mode(0o000)).unwrap();
    let (code, p) = prediction();
    assert_eq!(code, 2);
    assert_eq!(p["recovered_segments"].as_array().unwrap().len(), 1, "{p}");
    assert_eq!(
        p["recovered_segments"][0]["segment"],
        "00000000000000000002.log"
    );
    let why = p["outcome_unknown"].as_str().expect("outcome unknown");
    assert!(why.starts_with("recovery point unknown"), "{why}");
    assert_eq!(p["unread_checkpoints"], serde_json::json!([name]));
    assert!(p["recovery_point"].is_null());
}
