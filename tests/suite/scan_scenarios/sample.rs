//! The committed KAFKA-9144 sample (`testdata/broker-1/payments-3`) checked in full, and
//! the scan options over the sample directory (threads, topic and partition filters, `now`).

use super::*;

fn broker_1() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/broker-1")
}

#[test]
fn kafka_9144_sample_payments_3() {
    let r = pipeline::scan(&[broker_1()], &ScanOptions::default());
    assert!(r.errors.is_empty());
    assert_eq!(r.partitions.len(), 7);
    let zombie = samples::ZOMBIE_OFFSET;
    // exactly these errors, all at the zombie offset
    let errors: Vec<(Kind, &str, Option<i64>)> = r
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| (f.kind, f.topic.as_str(), f.offset))
        .collect();
    assert_eq!(
        errors,
        vec![
            (Kind::ProducerEpochRegression, "payments", Some(zombie)),
            (Kind::ZombieWrite, "payments", Some(zombie)),
            (Kind::HangingTransaction, "payments", Some(zombie)),
        ]
    );
    // and nothing else but the informational empty ABORT at offset 16
    let rest: Vec<(Kind, Option<i64>)> = r
        .findings
        .iter()
        .filter(|f| f.severity != Severity::Error)
        .map(|f| (f.kind, f.offset))
        .collect();
    assert_eq!(rest, vec![(Kind::MarkerWithoutTransaction, Some(16))]);
    for f in r.findings.iter().filter(|f| f.severity == Severity::Error) {
        assert_eq!(f.position, Some(195));
        assert_eq!(f.segment.as_deref(), Some("00000000000000000017.log"));
        producer_of(f, samples::ZOMBIE_PID, 18);
    }
    let h = r
        .findings
        .iter()
        .find(|f| f.kind == Kind::HangingTransaction)
        .unwrap();
    let rem = h.remediation.as_deref().unwrap();
    assert!(
        rem.contains("--topic payments --partition 3 --start-offset 21"),
        "{rem}"
    );
    let p = r.partitions.iter().find(|p| p.topic == "payments").unwrap();
    assert_eq!(p.partition, 3);
    assert_eq!(p.last_stable_offset, Some(21));
    assert_eq!(p.log_end_offset, Some(32));
    assert_eq!((p.batches, p.records, p.segments), (16, 32, 2));
    assert_eq!(
        p.transactions,
        scan::TxnCounts {
            committed: 3,
            aborted: 0,
            open: 1
        }
    );
    assert_eq!(p.outcome().txn_stats.empty_aborts, 1);
    let states: Vec<(i64, i16, i32, i64, Option<i64>)> = p
        .outcome()
        .producers
        .iter()
        .map(|s| {
            (
                s.producer_id,
                s.producer_epoch,
                s.last_sequence,
                s.last_offset,
                s.current_txn_first_offset,
            )
        })
        .collect();
    // testdata/README.md: the state at 32
    assert_eq!(
        states,
        vec![
            (4001, 18, 2, 23, Some(21)),
            (5001, 0, 11, 31, None),
            (6001, 3, 3, 28, None)
        ]
    );
    // the other partitions are clean and fully counted
    for p in r.partitions.iter().filter(|p| p.topic != "payments") {
        assert_eq!(p.last_stable_offset, p.log_end_offset, "{}", p.topic);
        if p.topic == "legacy" {
            assert_eq!((p.batches, p.records, p.log_end_offset), (10, 19, Some(19)));
        } else {
            assert_eq!((p.batches, p.records, p.log_end_offset), (4, 10, Some(10)));
        }
    }
}

fn finding_keys(r: &ScanReport) -> Vec<String> {
    r.findings
        .iter()
        .map(|f| serde_json::to_string(f).unwrap())
        .collect()
}

#[test]
fn one_thread_and_default_threads_give_identical_findings() {
    let default = pipeline::scan(&[broker_1()], &ScanOptions::default());
    let one = pipeline::scan(&[broker_1()], &ScanOptions::default().with_threads(1));
    let three = pipeline::scan(&[broker_1()], &ScanOptions::default().with_threads(3));
    assert!(!default.findings.is_empty());
    assert_eq!(finding_keys(&default), finding_keys(&one));
    assert_eq!(finding_keys(&default), finding_keys(&three));
    let summary = |r: &ScanReport| serde_json::to_string(&r.summary).unwrap();
    assert_eq!(summary(&default), summary(&one));
    for (a, b) in default.partitions.iter().zip(&one.partitions) {
        assert_eq!(a.outcome(), b.outcome());
    }
}

fn topics(r: &ScanReport) -> Vec<(String, i32)> {
    let mut v: Vec<_> = r
        .partitions
        .iter()
        .map(|p| (p.topic.clone(), p.partition))
        .collect();
    v.sort();
    v
}

#[test]
fn topic_glob_and_partition_filters() {
    let codecs = pipeline::scan(&[broker_1()], &ScanOptions::default().with_topic("codec-*"));
    assert_eq!(
        topics(&codecs),
        [
            "codec-gzip",
            "codec-lz4",
            "codec-none",
            "codec-snappy",
            "codec-zstd"
        ]
        .iter()
        .map(|t| (t.to_string(), 0))
        .collect::<Vec<_>>()
    );
    assert!(codecs.findings.is_empty());
    let q = pipeline::scan(
        &[broker_1()],
        &ScanOptions::default().with_topic("codec-?z*"),
    );
    assert_eq!(
        topics(&q),
        vec![("codec-gzip".into(), 0), ("codec-lz4".into(), 0)]
    );
    // A class selects the same two by their first letter; its complement the other three.
    let class = pipeline::scan(
        &[broker_1()],
        &ScanOptions::default().with_topic("codec-[gl]*"),
    );
    assert_eq!(topics(&class), topics(&q));
    let rest = pipeline::scan(
        &[broker_1()],
        &ScanOptions::default().with_topic("codec-[!gl]*"),
    );
    assert_eq!(topics(&rest).len(), 3);
    let p3 = pipeline::scan(&[broker_1()], &ScanOptions::default().with_partition(3));
    assert_eq!(topics(&p3), vec![("payments".into(), 3)]);
    assert_eq!(
        p3.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count(),
        3
    );
    let none = pipeline::scan(
        &[broker_1()],
        &ScanOptions::default()
            .with_topic("payments")
            .with_partition(0),
    );
    assert!(none.partitions.is_empty() && none.findings.is_empty());
    assert!(none.nothing_read());
}

#[test]
fn sample_now_option_makes_the_zombie_young() {
    // --now just after the zombie batch: the same transaction is open, not hanging
    let zombie_ts = 1_572_948_010_013; // testdata/README.md: 10:00:10.013
    let r = pipeline::scan(
        &[broker_1()],
        &ScanOptions::default()
            .with_now_ms(zombie_ts + 60_000)
            .with_partition(3),
    );
    let p = &r.partitions[0];
    assert_eq!(p.ref_time, zombie_ts + 60_000);
    // the last batches are 20 minutes *after* --now: the producer's own last timestamp is
    // what counts, so the transaction is young
    let f = one(&r, Kind::OpenTransaction);
    assert_eq!(f.offset, Some(21));
    none_of(&r, Kind::HangingTransaction);
    assert_eq!(p.last_stable_offset, Some(21));
}
