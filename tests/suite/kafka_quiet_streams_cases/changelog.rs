//! Changelog topics: compacted (`UnwindowedUnversionedChangelogTopicConfig`:
//! `cleanup.policy=compact`; windowed stores `compact,delete`,
//! `WindowedChangelogTopicConfig`), written in the thread's transactions under EOS, then
//! cleaned: `LogCleaner.cleanSegments` → `cleanInto` drops the records a later one of the
//! same key supersedes and the data of aborted transactions (`CleanedTransactionMetadata`),
//! keeps a retained batch's base offset, last offset and base sequence
//! (`MemoryRecords.filterTo`), and removes a marker once its transaction has no data left
//! and its delete horizon passed. Internal topic names up to Kafka's 249 characters.

use super::{APP, CHANGELOG, T0, loud, write_and_check, write_and_check_with};
use klogscan::finding::{Kind, Severity};
use klogscan::partition::scan::ScanOptions;
use klogscan::request::{self, Request};
use klogscan::testkit::{Batch, LogDirBuilder, PartitionBuilder, Producer, Rec};
use std::path::Path;

/// What the cleaner kept of one transactional batch of `total` records: the records at the
/// offset deltas `keep` (with their keys), the original last offset delta and base sequence.
fn kept(p: Producer, seq: i32, total: i32, keep: &[(i32, &str)]) -> Batch {
    let mut b = Batch::new(p).sequence(seq);
    for (d, k) in keep {
        b = b.record(Rec::kv(k, format!("count-of-{k}")).offset_delta(*d));
    }
    b.tweak(move |s| s.overrides.last_offset_delta = Some(total - 1))
}

/// `<topic>-0` of a key-value store under EOS after one cleaning of its first segment.
/// Written: txn 1 (offsets 0–1: k9, k1; COMMIT 2), txn 2 (3–4: k0, k1; COMMIT 5), txn 3
/// aborted after a rebalance (6: k2; ABORT 7), txn 4 (8–9: k0, k2; COMMIT 10); the active
/// segment: txn 5 (11: k1, or a keyless record when `keyless`; COMMIT 12). Kept by the
/// cleaner: k9 at 0, k1 at 4, both COMMITs, txn 4 whole; the aborted batch and, past its
/// delete horizon, its ABORT are gone: offset gaps, and gaps in producer 5000's sequences.
/// `whole`: each record was its own batch (a store updated once per 100 ms commit), so the
/// cleaner dropped whole batches and left no partial one (else two-record batches, the
/// first two kept with one record each).
fn cleaned(topic: &str, keyless: bool, whole: bool) -> PartitionBuilder {
    let p = Producer::transactional(5000, 0);
    let mut c = PartitionBuilder::new(topic, 0).start_time(T0);
    if whole {
        c.append(kept(p, 0, 1, &[(0, "k9")]));
        c.skip_offsets(1);
        c.commit(p, 0);
        c.skip_offsets(1);
        c.append(kept(p, 3, 1, &[(0, "k1")]));
        c.commit(p, 0);
        c.skip_offsets(2);
        c.append(kept(p, 5, 1, &[(0, "k0")]));
        c.append(kept(p, 6, 1, &[(0, "k2")]));
    } else {
        c.append(kept(p, 0, 2, &[(0, "k9")]));
        c.commit(p, 0);
        c.append(kept(p, 2, 2, &[(1, "k1")]));
        c.commit(p, 0);
        c.skip_offsets(2);
        let b = Batch::new(p).sequence(5);
        c.append(b.record(Rec::kv("k0", "2")).record(Rec::kv("k2", "1")));
    }
    c.commit(p, 0);
    c.roll();
    let r = if keyless {
        Rec::value("3")
    } else {
        Rec::kv("k1", "3")
    };
    c.append(Batch::new(p).sequence(7).record(r));
    c.commit(p, 0);
    c
}

/// The broker's `cleaner-offset-checkpoint` after that cleaning (`LogCleanerManager.updateCheckpoints`).
fn cleaner_checkpoint(dir: &Path, topic: &str) {
    let text = format!("0\n1\n{topic} 0 11\n");
    std::fs::write(dir.join("cleaner-offset-checkpoint"), text).unwrap();
}

/// The cleaned changelog of the store (partial batches kept, or whole batches only), its
/// cleaning in the broker's `cleaner-offset-checkpoint` (the policy known compacted). Offset gaps, the sequence gap the aborted batch leaves
/// (`ProducerStateManager` never checks sequences of cleaned data: the cleaner writes no
/// batch through `ProducerAppendInfo`, and a follower copying it appends with REPLICATION
/// origin), the missing ABORT: nothing at warning or above.
/// Twin: a keyless record in the uncleaned head, scanned with the topic named compacted
/// (`--compacted`): the leader refuses it (`LogValidator`, "Compacted topic cannot accept
/// message without key") — `keyless_record_on_compacted_topic`, a warning (`--deep`).
#[test]
fn eos_changelog_after_the_cleaner() {
    for whole in [false, true] {
        let ld = LogDirBuilder::new(1).partition(cleaned(CHANGELOG, false, whole));
        let q = write_and_check_with(ld, |d| cleaner_checkpoint(d, CHANGELOG));
        q.assert_quiet();
        let p = (q.scan.partitions.iter())
            .find(|p| p.topic == CHANGELOG)
            .unwrap();
        assert_eq!(p.compacted, Some(true));
    }
    // twin
    let dir = tempfile::tempdir().unwrap();
    LogDirBuilder::new(1)
        .partition(cleaned(CHANGELOG, true, false))
        .write(dir.path())
        .unwrap();
    cleaner_checkpoint(dir.path(), CHANGELOG);
    let opts = ScanOptions::default()
        .with_deep(true)
        .with_compacted_topics([CHANGELOG]);
    let r = request::run(&Request::new([dir.path()]).with_options(opts))
        .unwrap()
        .report;
    let f = (r.findings.iter()).find(|f| f.kind == Kind::KeylessRecordOnCompactedTopic);
    let f = f.unwrap_or_else(|| panic!("{:#?}", super::lines(&r.findings)));
    assert_eq!((f.severity, f.offset), (Severity::Warning, Some(11)));
}

/// The changelog cleaned in whole batches (no partial batch left as a trace of the cleaner)
/// on a replica that has never cleaned it: a replica added by a
/// reassignment (or rebuilt after a disk loss) fetches the leader's cleaned log as it is
/// (`ReplicaFetcherThread.processPartitionData` → `UnifiedLog.appendAsFollower`, REPLICATION
/// origin: no sequence check in `ProducerAppendInfo`), and its own cleaner has not run yet
/// (`log.cleaner.min.cleanable.ratio`), so its log dir has no `cleaner-offset-checkpoint`
/// entry; ZooKeeper mode, or the KRaft metadata log on other nodes: nothing in the log dir
/// declares the policy. The topic is a Streams changelog, created `compact`
/// (`InternalTopicManager.makeReady` with `UnwindowedUnversionedChangelogTopicConfig`). Kafka
/// has nothing to refuse.
///
/// klogscan reads a sequence gap on a topic of unknown policy as a possible loss and warns,
/// but on a topic named as a Streams changelog (`ProcessorStateManager.storeChangelogTopic`)
/// the gap is most likely the cleaner's: `sequence_gap` at info, saying so
/// (`streams_changelog_name`), nothing at warning or above (docs/findings.md,
/// `sequence_gap`).
#[test]
fn a_cleaned_changelog_without_the_cleaner_s_checkpoint() {
    write_and_check(LogDirBuilder::new(1).partition(cleaned(CHANGELOG, false, true)))
        .assert_quiet();
}

/// Near miss: the same data under a plain name, which nothing says is compacted, gets a
/// `sequence_gap` warning at both gaps (the only loud findings) — a real gap there is a
/// loss; under the changelog's name both are at info and say why. A partial batch (records
/// missing inside a batch's offset range) is the cleaner's trace: quiet without the
/// checkpoint.
#[test]
fn without_the_checkpoint_the_sequence_gap_warns() {
    for topic in [CHANGELOG, "word-counts"] {
        let q = write_and_check(LogDirBuilder::new(1).partition(cleaned(topic, false, true)));
        let gaps: Vec<_> = (q.scan.findings.iter())
            .filter(|f| f.kind == Kind::SequenceGap)
            .collect();
        assert_eq!(gaps.len(), 2, "{gaps:#?}");
        let changelog = topic == CHANGELOG;
        for f in gaps {
            let sev = if changelog {
                Severity::Info
            } else {
                Severity::Warning
            };
            assert_eq!(f.severity, sev, "{f:#?}");
            assert_eq!(
                f.evidence.get("streams_changelog_name").is_some(),
                changelog
            );
        }
        assert_eq!(loud(&q.scan.findings).len(), if changelog { 0 } else { 2 });
    }
    write_and_check(LogDirBuilder::new(1).partition(cleaned(CHANGELOG, false, false)))
        .assert_quiet();
}

/// An application id of 198 characters with dots and underscores (`StreamsConfig`'s
/// `application.id` is any legal topic prefix): its store changelog is exactly 249
/// characters, the limit `Topic.validate` enforces (`Topic.MAX_NAME_LENGTH`), and its
/// partition directory `<topic>-0` fits the 255-byte file name. The log dir holds the cleaned
/// changelog and a repartition topic of the same prefix. Nothing at warning or above, and
/// each partition read under its full name.
/// Twin: one byte of the changelog's last batch flipped: `crc_mismatch` on that topic and
/// partition, named in full.
#[test]
fn internal_topics_with_names_of_249_characters() {
    let suffix = "-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog";
    let mut app = format!("com.example.{APP}_service.eu_west_1.");
    while app.len() < 249 - suffix.len() {
        app.push(if app.len() % 7 == 0 { '_' } else { 'a' });
    }
    let changelog = format!("{app}{suffix}");
    assert_eq!(changelog.len(), 249);
    let repartition = format!("{app}-KSTREAM-KEY-SELECT-0000000001-repartition");
    for twin in [false, true] {
        let mut rep = PartitionBuilder::new(&repartition, 0);
        rep.append(Batch::new(Producer::idempotent(6100, 0)).records(3));
        let mut c = cleaned(&changelog, false, false);
        if twin {
            c.fault(
                klogscan::testkit::Target::LastLog,
                klogscan::testkit::FaultKind::FlipByte {
                    position: 70,
                    mask: 0x10,
                },
            );
        }
        let ld = LogDirBuilder::new(1).partition(c).partition(rep);
        let q = write_and_check_with(ld, |d| cleaner_checkpoint(d, &changelog));
        if twin {
            let f = q.assert_reported(Kind::CrcMismatch, Severity::Error, &changelog);
            assert_eq!(f.partition, 0);
        } else {
            q.assert_quiet();
            let names: Vec<&str> = q.scan.partitions.iter().map(|p| p.topic.as_str()).collect();
            assert!(names.contains(&changelog.as_str()) && names.contains(&repartition.as_str()));
        }
    }
}
