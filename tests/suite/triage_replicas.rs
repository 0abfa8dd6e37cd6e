//! The triage over several brokers' copies of a partition: one incident for the same
//! hanging transaction in the live copies of one cluster (its abort given once), apart
//! across clusters and where the copies differ; and the note `verify` adds when the copy's
//! next start forgets the transaction.

use klogscan::finding::{Finding, Kind};
use klogscan::partition::scan::ScanOptions;
use klogscan::report::triage::{Incident, incidents, incidents_in};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, PartitionFileOptions, Producer};
use klogscan::verify::{VerifyOptions, verify};
use std::path::Path;

const T0: i64 = 1_700_000_000_000;

fn txn() -> Producer {
    Producer::transactional(900, 1)
}

/// `payments-3` with producer 900's transaction at offset 1 left open for 20 minutes
/// (hanging), or closed by a COMMIT (`committed`).
fn payments(committed: bool) -> PartitionBuilder {
    let mut p = PartitionBuilder::new("payments", 3).start_time(T0);
    p.append(Batch::new(Producer::PLAIN).values(["a"]));
    p.append(Batch::new(txn()).records(2));
    if committed {
        p.commit(txn(), 0);
    }
    p.advance_time(20 * 60_000);
    p.append(Batch::new(Producer::PLAIN).values(["b"]));
    p
}

fn scan(root: &Path) -> Vec<Incident> {
    let r = klogscan::pipeline::scan(&[root.to_path_buf()], &ScanOptions::default());
    incidents_in(&r)
}

/// The incidents that give an abort for `payments-3`.
fn with_abort(inc: &[Incident]) -> Vec<&Incident> {
    inc.iter()
        .filter(|i| {
            i.commands
                .iter()
                .any(|c| c.contains("abort --topic payments --partition 3 --start-offset 1"))
        })
        .collect()
}

fn aborts(i: &Incident) -> usize {
    let n = |c: &&String| c.contains(" abort ") && c.contains("--start-offset 1");
    i.commands.iter().filter(n).count()
}

#[test]
fn one_hanging_transaction_in_two_brokers_copies_is_one_incident() {
    let d = tempfile::tempdir().unwrap();
    for id in [1, 2] {
        LogDirBuilder::new(id)
            .cluster_id("c1")
            .partition(payments(false))
            .write(&d.path().join(format!("broker-{id}")))
            .unwrap();
    }
    let inc = scan(d.path());
    assert_eq!(inc.len(), 1, "{inc:#?}");
    assert_eq!(inc[0].partitions, ["payments-3 (brokers 1, 2)"]);
    assert_eq!(aborts(&inc[0]), 1, "{:?}", inc[0].commands);
    assert!(
        inc[0]
            .follows
            .iter()
            .any(|f| f.starts_with("b2:hanging_transaction")),
        "{:?}",
        inc[0].follows
    );
    assert!(
        inc[0].notes[0].contains("run its abort once"),
        "{:?}",
        inc[0].notes
    );
}

#[test]
fn the_same_shape_in_two_clusters_is_two_incidents() {
    let d = tempfile::tempdir().unwrap();
    for c in ["clusterA", "clusterB"] {
        for id in [1, 2] {
            LogDirBuilder::new(id)
                .cluster_id(c)
                .partition(payments(false))
                .write(&d.path().join(format!("{c}-{id}")))
                .unwrap();
        }
    }
    let inc = scan(d.path());
    let pay = with_abort(&inc);
    assert_eq!(pay.len(), 2, "{inc:#?}");
    assert_eq!(
        pay[0].partitions,
        ["payments-3 (cluster clusterA, brokers 1, 2)"]
    );
    assert_eq!(
        pay[1].partitions,
        ["payments-3 (cluster clusterB, brokers 1, 2)"]
    );
    assert!(pay.iter().all(|i| aborts(i) == 1));
}

/// The follower holds the COMMIT the leader lacks: not the same state. The leader's
/// incident names its broker alone.
#[test]
fn a_follower_that_differs_is_not_joined() {
    let d = tempfile::tempdir().unwrap();
    for (id, committed) in [(1, false), (2, true)] {
        LogDirBuilder::new(id)
            .cluster_id("c1")
            .partition(payments(committed))
            .write(&d.path().join(format!("broker-{id}")))
            .unwrap();
    }
    let inc = scan(d.path());
    let pay = with_abort(&inc);
    assert_eq!(pay.len(), 1, "{inc:#?}");
    assert_eq!(pay[0].partitions, ["payments-3 (broker 1)"]);
    assert!(
        !pay[0]
            .notes
            .iter()
            .any(|n| n.contains("run its abort once"))
    );
}

/// The testkit's `non_live_copy`: `orders-0` hanging in broker 1's live copy, its -future
/// copy and broker 2's live copy — one incident for the live copies; the -future copy's
/// transaction stays an info finding of its own, with no command.
#[test]
fn a_non_live_copy_keeps_its_own_treatment() {
    let d = tempfile::tempdir().unwrap();
    klogscan::testkit::brokers::non_live_copy(d.path()).unwrap();
    let r = klogscan::pipeline::scan(&[d.path().to_path_buf()], &ScanOptions::default());
    let inc = incidents_in(&r);
    assert_eq!(inc.len(), 1, "{inc:#?}");
    assert_eq!(inc[0].partitions, ["orders-0 (brokers 1, 2)"]);
    let members: Vec<&Finding> = inc[0].members.iter().map(|&i| &r.findings[i]).collect();
    assert!(
        members.iter().all(|f| f.source.copy.is_live()),
        "{members:#?}"
    );
}

/// A copy with no producer snapshot after a clean shutdown: `verify` predicts its next
/// start forgets the open transaction. The abort stays, with the note that it has to run
/// before that start (in the hanging transaction's remediation, and in the incident of its
/// findings); with an unclean shutdown (the start replays the log) no such note, and
/// `scan`, which predicts no restart, has none either.
#[test]
fn verify_says_to_abort_before_a_restart_that_forgets_the_transaction() {
    let note = "Broker 1 forgets this transaction at its next start";
    for clean in [true, false] {
        let d = tempfile::tempdir().unwrap();
        let files = PartitionFileOptions {
            snapshots: false,
            ..PartitionFileOptions::default()
        };
        LogDirBuilder::new(1)
            .cluster_id("c1")
            .clean_shutdown(clean)
            .partition(payments(false).broker_files(files))
            .write(d.path())
            .unwrap();
        let v = verify(&[d.path().to_path_buf()], &VerifyOptions::default());
        let fs: Vec<Finding> = v.findings().cloned().collect();
        let h = fs
            .iter()
            .find(|f| f.kind == Kind::HangingTransaction)
            .expect("hanging");
        let rem = h.remediation.as_deref().unwrap();
        assert!(
            rem.contains("abort --topic payments --partition 3 --start-offset 1"),
            "{rem}"
        );
        assert_eq!(rem.contains(note), clean, "{rem}");
        let sm = fs.iter().find(|f| f.kind == Kind::SnapshotMismatch);
        assert_eq!(sm.is_some(), clean, "{fs:#?}");
        if let Some(sm) = sm {
            let r = sm.remediation.as_deref().unwrap_or_default();
            assert!(r.contains("before broker 1 starts again"), "{r}");
        }
        let inc = incidents(&fs);
        let pay = with_abort(&inc);
        assert_eq!(pay.len(), 1, "{inc:#?}");
        assert_eq!(aborts(pay[0]), 1);
        assert_eq!(
            pay[0].notes.iter().any(|n| n.starts_with(note)),
            clean,
            "{:?}",
            pay[0].notes
        );
        let scanned = scan(d.path());
        assert!(
            !scanned
                .iter()
                .flat_map(|i| &i.notes)
                .any(|n| n.contains("forgets")),
            "{scanned:#?}"
        );
    }
}
