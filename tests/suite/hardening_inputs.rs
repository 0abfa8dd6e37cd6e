//! Inputs judged by what they are: `dump`'s exit status on a corrupt snapshot or transaction
//! index, a segment whose first bytes look like an archive's magic, a file named as an
//! archive that is none.
#![cfg(all(feature = "testkit", unix))]

use crate::common::run::klogscan;
use klogscan::testkit::files::{SnapshotEntry, encode_snapshot};
use klogscan::testkit::{BatchSpec, RecordSpec};
use std::path::Path;

fn snapshot() -> Vec<u8> {
    encode_snapshot(&[SnapshotEntry {
        producer_id: 7,
        epoch: 1,
        last_sequence: 4,
        last_offset: 10,
        offset_delta: 4,
        timestamp: 1_700_000_000_000,
        coordinator_epoch: -1,
        current_txn_first_offset: -1,
    }])
}

/// `dump` prints a corrupt snapshot as corrupt and exits 1, as for any invalid file
/// (README: exit 1 when a file is invalid); the intact one exits 0.
#[test]
fn dump_exits_1_on_a_corrupt_snapshot() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("00000000000000000010.snapshot");
    std::fs::write(&p, snapshot()).unwrap();
    let r = klogscan(&["dump".as_ref(), p.as_os_str()], None, 60);
    assert_eq!(r.code(), 0, "{r:?}");
    assert!(r.out.contains("producerId: 7"), "{}", r.out);
    let mut b = snapshot();
    b[20] ^= 0x10;
    std::fs::write(&p, &b).unwrap();
    for fmt in ["text", "json"] {
        let r = klogscan(
            &[
                "dump".as_ref(),
                "--format".as_ref(),
                fmt.as_ref(),
                p.as_os_str(),
            ],
            None,
            60,
        );
        assert_eq!(r.code(), 1, "{fmt}: {r:?}");
        assert!(r.err.contains("Snapshot is corrupt"), "{fmt}: {}", r.err);
    }
}

/// A transaction index entry of an unknown version is printed as an error: exit 1.
#[test]
fn dump_exits_1_on_an_unknown_txnindex_version() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("00000000000000000000.txnindex");
    let mut e = vec![0u8; 34];
    std::fs::write(&p, &e).unwrap();
    let r = klogscan(&["dump".as_ref(), p.as_os_str()], None, 60);
    assert_eq!(r.code(), 0, "{r:?}");
    e[0] = 1; // version 1 (Kafka reads the high byte)
    std::fs::write(&p, &e).unwrap();
    let r = klogscan(&["dump".as_ref(), p.as_os_str()], None, 60);
    assert_eq!(r.code(), 1, "{r:?}");
    assert!(
        r.err.contains("Unexpected aborted transaction version 1"),
        "{}",
        r.err
    );
}

/// A segment whose base offset's bytes start like gzip's (1f 8b) or zip's (PK 03 04) magic.
fn segment_like(dir: &Path, magic: &[u8]) -> std::path::PathBuf {
    let mut base = [0u8; 8];
    base[..magic.len()].copy_from_slice(magic);
    let bytes = BatchSpec {
        base_offset: i64::from_be_bytes(base),
        base_timestamp: 1_700_000_000_000,
        records: vec![RecordSpec {
            value: Some(b"v".to_vec()),
            ..Default::default()
        }],
        ..Default::default()
    }
    .encode();
    let d = dir.join("t-0");
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(format!("{:020}.log", i64::from_be_bytes(base)));
    std::fs::write(&p, bytes).unwrap();
    p
}

/// A `.log` named on the command line is a segment whatever its first bytes: `scan` reads
/// it (one batch, no input error) and `dump` prints its batch.
#[test]
fn a_log_file_whose_first_bytes_look_like_an_archive_is_a_segment() {
    for magic in [&[0x1f, 0x8b][..], b"PK\x03\x04", &[0x28, 0xb5, 0x2f, 0xfd]] {
        let t = tempfile::tempdir().unwrap();
        let log = segment_like(t.path(), magic);
        let r = klogscan(
            &[
                "scan".as_ref(),
                "--format".as_ref(),
                "json".as_ref(),
                log.as_os_str(),
            ],
            None,
            60,
        );
        assert_eq!(r.code(), 0, "{magic:x?}: {r:?}");
        let v: serde_json::Value = serde_json::from_str(&r.out).unwrap();
        assert_eq!(v["partitions"][0]["batches"], 1, "{magic:x?}: {}", r.out);
        let r = klogscan(&["dump".as_ref(), log.as_os_str()], None, 60);
        assert_eq!(r.code(), 0, "{magic:x?}: {r:?}");
        assert!(r.out.contains("baseOffset: "), "{magic:x?}: {}", r.out);
    }
}

/// A file named `.tgz` (or `.tar.zst`, `.zip`) that is no archive: an input error that says
/// so, not "unpack it".
#[test]
fn a_misnamed_archive_is_called_what_it_is() {
    let t = tempfile::tempdir().unwrap();
    for (name, says) in [
        (
            "notgzip.tgz",
            "named .tgz but its first bytes are not a gzip stream's",
        ),
        (
            "x.tar.gz",
            "named .tar.gz but its first bytes are not a gzip stream's",
        ),
        (
            "x.tar.zst",
            "named .tar.zst but its first bytes are not a zstd frame's",
        ),
        (
            "x.zip",
            "named .zip but its first bytes are not a zip archive's",
        ),
    ] {
        let p = t.path().join(name);
        std::fs::write(&p, b"hello, not an archive\n").unwrap();
        let r = klogscan(&["scan".as_ref(), p.as_os_str()], None, 60);
        assert_eq!(r.code(), 2, "{name}: {r:?}");
        assert!(r.err.contains(says), "{name}: {}", r.err);
        assert!(!r.err.contains("unpack it"), "{name}: {}", r.err);
    }
}

/// A `.tar.zst` of one 256 MiB segment of zeros (a few KiB): extraction lasts long enough
/// for a signal to land in it.
fn zero_bomb(path: &Path) {
    let f = std::fs::File::create(path).unwrap();
    let z = zstd::stream::write::Encoder::new(f, 1)
        .unwrap()
        .auto_finish();
    let mut b = tar::Builder::new(z);
    let mut h = tar::Header::new_gnu();
    h.set_size(256 << 20);
    h.set_mode(0o644);
    h.set_cksum();
    b.append_data(
        &mut h,
        "t-0/00000000000000000000.log",
        std::io::Read::take(std::io::repeat(0), 256 << 20),
    )
    .unwrap();
    b.into_inner().unwrap();
}

/// Killed mid-extraction by SIGINT, SIGTERM, SIGHUP, SIGABRT (what an allocation failure
/// ends in) or even SIGKILL, klogscan leaves no temporary directory behind.
#[test]
fn an_archives_temporary_directory_goes_with_the_process_however_it_ends() {
    use std::os::unix::process::ExitStatusExt;
    use std::time::{Duration, Instant};
    let t = tempfile::tempdir().unwrap();
    let ar = t.path().join("bomb.tar.zst");
    zero_bomb(&ar);
    let entries = |d: &Path| std::fs::read_dir(d).unwrap().count();
    for sig in [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGABRT,
        libc::SIGKILL,
    ] {
        // The scan may finish (the bomb refused) between the directory showing up and the
        // signal on a loaded machine: then its ordinary exit removed the directory, and the
        // signal is tried again on a new run (a race of the test, not of klogscan).
        let mut killed = false;
        for attempt in 0..5 {
            let tmp = t.path().join(format!("tmp{sig}-{attempt}"));
            std::fs::create_dir(&tmp).unwrap();
            let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_klogscan"));
            cmd.arg("scan")
                .arg(&ar)
                .env("TMPDIR", &tmp)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            // A test run started in the background of a shell without job control
            // inherits SIGINT and SIGQUIT ignored, and so would klogscan: the signals are
            // given back their default action, as an interactive terminal has them.
            // SAFETY: `signal` is async-signal-safe; the closure touches nothing else.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                    libc::signal(libc::SIGINT, libc::SIG_DFL);
                    libc::signal(libc::SIGQUIT, libc::SIG_DFL);
                    Ok(())
                });
            }
            let mut child = cmd.spawn().unwrap();
            // A deadline for a hang, not a measurement.
            let deadline = Instant::now() + Duration::from_secs(60);
            while entries(&tmp) == 0 {
                assert!(Instant::now() < deadline, "no temporary directory made");
                std::thread::sleep(Duration::from_millis(1));
            }
            // SAFETY: a plain kill(2) of our own child.
            assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
            let status = child.wait().unwrap();
            killed = status.signal() == Some(sig);
            assert!(
                killed || status.code().is_some(),
                "signal {sig}: {status:?}"
            );
            while entries(&tmp) != 0 {
                assert!(
                    Instant::now() < deadline,
                    "signal {sig}: left behind: {:?}",
                    std::fs::read_dir(&tmp).unwrap().collect::<Vec<_>>()
                );
                std::thread::sleep(Duration::from_millis(10));
            }
            if killed {
                break;
            }
        }
        assert!(killed, "signal {sig}: the scan ended first five times");
    }
}

/// `scan -L` over a directory holding a symlink to `/` does not walk the host: the link is
/// named and not followed (exit 2, incomplete), the partitions are analysed, a symlink to
/// the directory itself is walked once, and one to a sibling broker's directory is followed.
/// Bounded by a CPU-time limit, never by a clock.
#[test]
fn following_symlinks_never_walks_the_host() {
    use std::os::unix::process::CommandExt;
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    let other = t.path().join("other");
    for (dir, topic) in [(&data, "a"), (&other, "b")] {
        let mut b = klogscan::testkit::PartitionBuilder::new(topic, 0);
        b.append(klogscan::testkit::Batch::new(klogscan::testkit::Producer::PLAIN).values(["v"]));
        b.write(dir).unwrap();
    }
    std::os::unix::fs::symlink("/", data.join("host")).unwrap();
    std::os::unix::fs::symlink(&data, data.join("self")).unwrap();
    std::os::unix::fs::symlink(&other, data.join("sibling")).unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_klogscan"));
    cmd.args(["scan", "-L", "--format", "json"])
        .arg(&data)
        .stdin(std::process::Stdio::null());
    // SAFETY: only setrlimit (async-signal-safe) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let r = libc::rlimit {
                rlim_cur: 30,
                rlim_max: 30,
            };
            if libc::setrlimit(libc::RLIMIT_CPU, &r) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{:?} {err}", out.status);
    assert!(
        err.contains("host: symlink to / not followed: it holds the input"),
        "{err}"
    );
    // The link to the input itself is walked once, silently.
    assert!(!err.contains("self"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut topics: Vec<&str> = v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["topic"].as_str().unwrap())
        .collect();
    topics.sort();
    assert_eq!(topics, ["a", "b"], "{v}");
}
