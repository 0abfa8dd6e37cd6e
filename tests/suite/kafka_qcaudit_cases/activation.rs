//! The records a controller writes when it becomes active (`ActivationRecordsGenerator`):
//! over an empty log the bootstrap records — one atomic batch below 3.6-IV1, a KIP-868
//! transaction from it on, with `ZkMigrationStateRecord` NONE from 3.4-IV0
//! (`isMigrationSupported`) — and over a non-empty log nothing, or the
//! `AbortTransactionRecord` of a transaction its predecessor left open; a bootstrap holding
//! a cluster-default config (`QuorumControllerTest.COMPLEX_BOOTSTRAP`).

use super::{FOO, foo_unclean, nodes, register_and_unfence, unclean_of};
use crate::kafka_imgaudit_cases::{all_lines, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_quiet_cluster_cases::kraft::{MetaLog, SEC, metadata_version, partition, topic};
use klogscan::finding::{Kind, Severity};
use klogscan::read::format::metadata::{MetaRecord, RESOURCE_BROKER};

fn begin() -> MetaRecord {
    MetaRecord::BeginTransaction {
        name: Some("Bootstrap records".into()),
    }
}

fn abort() -> MetaRecord {
    MetaRecord::AbortTransaction {
        reason: Some("Controller failover".into()),
    }
}

const NONE: MetaRecord = MetaRecord::ZkMigrationState { state: 0 };

/// The bootstrap records of an empty log at `level` (`recordsForEmptyLog`), `extra` the
/// bootstrap file's records after the `metadata.version`.
fn bootstrap(level: i16, extra: &[MetaRecord]) -> Vec<MetaRecord> {
    let mut r = vec![metadata_version(level)];
    r.extend_from_slice(extra);
    if level >= 8 {
        r.push(NONE);
    }
    if level >= 13 {
        r.insert(0, begin());
        r.push(MetaRecord::EndTransaction);
    }
    r
}

/// `QuorumControllerTest.testActivationRecords33` (3.3-IV0: the `metadata.version` alone),
/// `testActivationRecords34` (3.4-IV0: with `ZkMigrationStateRecord` NONE, one atomic
/// batch), `testActivationRecordsNonEmptyLog` (3.9-IV0: the bootstrap in a transaction;
/// a controller activating over the non-empty log later writes nothing, and the NoOp
/// records of `testNoOpRecordWriteAfterTimeout` follow): brokers registered and a topic
/// created after each. The history's `metadata.version` is the bootstrap's, every record
/// decodes, nothing at warning. Near miss: the 3.9-IV0 bootstrap transaction left open by
/// a controller that failed (its `EndTransactionRecord` lost) and aborted by the next one
/// — the records are never applied, the history has no `metadata.version`.
#[test]
fn activation_records_give_the_bootstrap_metadata_version() {
    for level in [4, 8, 21] {
        let mut m = MetaLog::new(T0 - 60 * SEC);
        m.batch(&bootstrap(level, &[]));
        register_and_unfence(&mut m, &[1, 2]);
        m.batch(&[topic(FOO), partition(FOO, 0, &[1, 2], &[1, 2], (1, 0, 0))]);
        m.elect();
        m.batch(&[MetaRecord::NoOp]);
        m.batch(&[MetaRecord::NoOp]);
        let b = nodes(&m, &[1, 2]);
        let v = b.check();
        v.assert_no_alarm();
        let h = history_of(&b);
        assert_eq!(h.metadata_version(), Some(level));
        assert!(h.log.unknown.is_empty() && h.log.undecodable.is_empty());
        assert!(h.history.dropped_txns.is_empty());
        let s = h.timeline(FOO, 0).unwrap().current().unwrap().clone();
        assert_eq!((s.leader, s.isr), (1, vec![1, 2]));
    }
    // near miss
    let mut m = MetaLog::new(T0 - 60 * SEC);
    let mut open = bootstrap(21, &[]);
    open.pop();
    m.batch(&open);
    m.elect();
    let at = m.batch(&[abort()]);
    m.batch(&[MetaRecord::NoOp]);
    let b = nodes(&m, &[1, 2]);
    b.check().assert_no_alarm();
    let h = history_of(&b);
    assert_eq!(h.metadata_version(), None);
    let dropped: Vec<_> = (h.history.dropped_txns.iter())
        .map(|t| (t.begin, t.abort, t.records))
        .collect();
    assert_eq!(dropped, [(1, Some(at), 2)]);
}

/// `unclean.leader.election.enable=true` as the cluster default (broker resource "").
fn cluster_default() -> MetaRecord {
    MetaRecord::Config {
        resource_type: RESOURCE_BROKER,
        resource_name: String::new(),
        name: "unclean.leader.election.enable".into(),
        value: Some("true".into()),
    }
}

/// `testInsertBootstrapRecordsToEmptyLog` (`COMPLEX_BOOTSTRAP` at 3.3-IV1: the
/// `metadata.version` and a cluster-default `ConfigRecord`, one atomic batch), and
/// `testActivationRecordsPartialBootstrap` (3.6-IV1: the first controller's bootstrap
/// transaction left open, the next one writes `AbortTransactionRecord` then the bootstrap
/// again in a new transaction). The bootstrap's config here is
/// `unclean.leader.election.enable=true`: the history applies it (the retried copy, not the
/// aborted one), and the unclean election of `foo-0` later names it — "true (cluster
/// default)" — with the bootstrap's `metadata.version`. Near misses: the next controller
/// only aborts (no retried bootstrap): the config and version are never applied, the
/// election names no config; it writes the new `BeginTransactionRecord` without the abort:
/// a Begin inside a transaction, which the loader rejects (`metadata_transaction_incomplete`
/// at warning).
#[test]
fn the_bootstrap_config_is_the_one_applied() {
    for (level, retried) in [(5, true), (13, true), (13, false)] {
        let records = bootstrap(level, &[cluster_default()]);
        let mut m = MetaLog::new(T0 - 60 * SEC);
        if level >= 13 {
            m.batch(&records[..2]);
            m.elect();
            m.batch(&[abort()]);
            if retried {
                m.batch(&records);
            }
        } else {
            m.batch(&records);
        }
        let epochs = register_and_unfence(&mut m, &[1, 2]);
        foo_unclean(&mut m, &epochs);
        let b = nodes(&m, &[1, 2]);
        let v = b.check();
        let h = history_of(&b);
        assert_eq!(h.metadata_version(), retried.then_some(level));
        let e = unclean_of(&v);
        let want = retried.then_some("true (cluster default)");
        assert_eq!(
            e["unclean_leader_election_enable"].as_str(),
            want,
            "{level}"
        );
        let txn = of_kind(&v, Kind::MetadataTransactionIncomplete);
        assert!(txn.iter().all(|r| r.is_empty()), "{}", all_lines(&v));
    }
    // near miss: no abort before the retried bootstrap
    let records = bootstrap(13, &[cluster_default()]);
    let mut m = MetaLog::new(T0 - 60 * SEC);
    m.batch(&records[..2]);
    m.elect();
    let again = m.batch(&records);
    let b = nodes(&m, &[1, 2]);
    let v = b.check();
    let txn = of_kind(&v, Kind::MetadataTransactionIncomplete);
    for r in &txn {
        assert_eq!(r.len(), 1, "{}", all_lines(&v));
        assert_eq!(
            (r[0].severity, r[0].offset),
            (Severity::Warning, Some(again))
        );
    }
}

/// What the log holds besides the open transaction of [`an_open_transaction_below_3_6_iv1_stops_the_controllers`].
#[derive(Clone, Copy, PartialEq)]
enum Open {
    /// Nothing more.
    Plain,
    /// The transaction's own record raises the version to 3.6-IV1.
    Raised,
    /// The next controller aborted it.
    Aborted,
    /// A record that does not decode after the bootstrap (it may raise the version).
    Gap,
    /// No `metadata.version` record at all (a bootstrap the history lacks may hold one).
    NoVersion,
}

/// `testActivationRecordsPartialTransactionNoSupport`: a log at 3.6-IV0 (no metadata
/// transactions) ending inside one. A controller activating over it cannot abort it:
/// `ActivationRecordsGenerator.recordsForNonEmptyLog` throws ("Detected in-progress
/// transaction … does not support transactions. Cannot continue.") and the fatal fault
/// handler stops it — one `metadata_transaction_incomplete` at **error** naming the level.
/// Fixed: it was info ("a new active controller aborts it"). Near miss
/// (`testActivationRecordsPartialTransaction` at 3.6-IV1): the same log is info, and once the
/// next controller wrote its `AbortTransactionRecord` nothing is reported. A transaction whose
/// own records raise the version to 3.6-IV1 is replayed by the controller before it
/// activates: info too; so is a log whose version the history cannot be sure of (a record
/// that does not decode after the version, or no version record at all).
#[test]
fn an_open_transaction_below_3_6_iv1_stops_the_controllers() {
    use Open::*;
    for (level, open, want) in [
        (12, Plain, Some(Severity::Error)),
        (13, Plain, Some(Severity::Info)),
        (12, Raised, Some(Severity::Info)),
        (13, Aborted, None),
        (12, Gap, Some(Severity::Info)),
        (12, NoVersion, Some(Severity::Info)),
    ] {
        let mut m = MetaLog::new(T0 - 60 * SEC);
        if open != NoVersion {
            m.batch(&bootstrap(level, &[]));
        }
        register_and_unfence(&mut m, &[1, 2]);
        if open == Gap {
            // a FeatureLevelRecord frame cut inside its name
            m.raw(vec![vec![1, 12, 0, 17, b'm']]);
        }
        let begin = m.batch(&[MetaRecord::BeginTransaction {
            name: Some("create topics".into()),
        }]);
        if open == Raised {
            m.batch(&[metadata_version(13)]);
        }
        m.batch(&[MetaRecord::NoOp]);
        if open == Aborted {
            m.elect();
            m.batch(&[abort()]);
        }
        let b = nodes(&m, &[1, 2]);
        let v = b.check();
        let txn = of_kind(&v, Kind::MetadataTransactionIncomplete);
        for r in &txn {
            assert_eq!(r.len(), usize::from(want.is_some()), "{}", all_lines(&v));
        }
        let Some(want) = want else { continue };
        let f = txn[0][0];
        assert_eq!(
            (f.severity, f.offset),
            (want, Some(begin)),
            "{level} {}",
            open as u8
        );
        let named = f.evidence.get("metadata_version_level").cloned();
        if want == Severity::Error {
            assert_eq!(named, Some(12.into()));
            assert!(f.message.contains("cannot abort it"), "{}", f.message);
        } else {
            assert_eq!(named, None);
        }
    }
}
