//! Producer rules: offsets, leader and producer epochs, sequences, producer fields.

use super::*;

// ----- the KAFKA-9144 zombie -----------------------------------------------------------

#[test]
fn kafka_9144_zombie_is_epoch_regression_zombie_write_and_hanging() {
    let mut l = Log::new();
    let pid = 4000;
    l.txn(pid, 17, 0, 5); // 0..4
    l.commit(pid, 17, 7); // 5
    l.idem(9, 0, 0, 3); // other traffic 6..8
    l.idem(9, 0, 3, 3); // 9..11
    l.abort(pid, 19, 7); // 12: coordinator timed out an (empty here) txn, fenced twice
    let zombie = l.txn(pid, 18, 0, 2); // 13..14: the zombie at epoch 18
    l.advance(20 * MIN);
    l.idem(9, 0, 6, 3); // later traffic
    l.idem(9, 0, 9, 1);
    let (f, out) = run(&l);

    assert_eq!(
        errors(&f),
        vec![
            Kind::ProducerEpochRegression,
            Kind::ZombieWrite,
            Kind::HangingTransaction
        ],
        "{f:#?}"
    );
    for k in [
        Kind::ProducerEpochRegression,
        Kind::ZombieWrite,
        Kind::HangingTransaction,
    ] {
        let x = of(&f, k);
        assert_eq!(x.len(), 1);
        assert_eq!(x[0].offset, Some(zombie), "{k}");
        assert_eq!(x[0].producer_id, Some(pid));
        assert_eq!(x[0].segment.as_deref(), Some("00000000000000000000.log"));
    }
    let reg = of(&f, Kind::ProducerEpochRegression)[0];
    assert_eq!(reg.evidence["previous_epoch"], 19);
    assert_eq!(reg.evidence["epoch"], 18);
    assert_eq!(reg.evidence["previous"]["offset"], 12);
    assert_eq!(reg.evidence["exceeds_producer_id_expiration"], false);
    assert!(
        reg.client_error
            .as_deref()
            .unwrap()
            .contains("InvalidProducerEpochException")
    );
    let z = of(&f, Kind::ZombieWrite)[0];
    assert_eq!(z.evidence["marker"]["offset"], 12);
    assert_eq!(z.evidence["marker"]["type"], "abort");
    assert_eq!(z.evidence["opens_transaction"], true);
    let h = of(&f, Kind::HangingTransaction)[0];
    assert!(
        h.remediation.as_deref().unwrap().contains(&format!(
            "kafka-transactions.sh --bootstrap-server <broker> abort --topic orders --partition 3 --start-offset {zombie}"
        )),
        "{:?}",
        h.remediation
    );
    assert!(
        h.evidence["root_cause"]
            .as_str()
            .unwrap()
            .contains("KAFKA-9144")
    );
    // The only non-error finding: the empty ABORT.
    assert_eq!(
        f.iter()
            .filter(|x| x.severity != Severity::Error)
            .map(|x| x.kind)
            .collect::<Vec<_>>(),
        vec![Kind::MarkerWithoutTransaction]
    );
    assert_eq!(out.last_stable_offset, Some(zombie));
    assert_eq!(out.log_end_offset, Some(l.next_offset));
    assert_eq!(out.open.len(), 1);
    assert_eq!(out.open[0].first_offset, zombie);
    assert_eq!(out.open[0].producer_epoch, 18);
    assert_eq!(out.txn_stats.committed, 1);
    assert_eq!(out.txn_stats.empty_aborts, 1);
    assert_eq!(out.txn_stats.open, 1);
    assert!(out.aborted.is_empty());
    // The recovery view follows the log blindly: the epoch regressed to 18.
    let p = out.producers.iter().find(|p| p.producer_id == pid).unwrap();
    assert_eq!(p.producer_epoch, 18);
    assert_eq!(p.coordinator_epoch, 7);
    assert_eq!(p.current_txn_first_offset, Some(zombie));
}

// ----- TV2 and KIP-588 ------------------------------------------------------------------

#[test]
fn tv2_epoch_per_transaction_raises_no_epoch_finding() {
    let mut l = Log::new();
    let pid = 77;
    l.txn(pid, 5, 0, 3);
    l.txn(pid, 5, 3, 2);
    l.commit(pid, 6, 2);
    l.txn(pid, 6, 0, 4);
    l.abort(pid, 7, 2);
    l.txn(pid, 7, 0, 1);
    l.commit(pid, 8, 2);
    l.txn(pid, 8, 0, 2);
    l.abort(pid, 10, 3); // timeout abort: fenced and bumped again
    l.txn(pid, 10, 0, 1);
    l.commit(pid, 11, 3);
    let (f, out) = run(&l);
    assert!(f.is_empty(), "{f:#?}");
    let p = &out.producers[0];
    assert!(p.transaction_version_2);
    assert_eq!(p.producer_epoch, 11);
    assert_eq!(
        p.last_sequence, -1,
        "an epoch-bumping marker clears the batch cache"
    );
    assert_eq!(p.last_offset, -1);
    assert_eq!(out.txn_stats.committed, 3);
    assert_eq!(out.txn_stats.aborted, 2);
}

#[test]
fn tv2_data_must_restart_at_zero_after_the_marker() {
    let mut l = Log::new();
    l.txn(77, 5, 0, 3);
    l.commit(77, 6, 2);
    l.txn(77, 6, 3, 1); // continues the old sequence at the new epoch
    let (f, _) = run(&l);
    let x = of(&f, Kind::InvalidFirstSequence);
    assert_eq!(x.len(), 1);
    assert_eq!(x[0].evidence["expected"], 0);
    assert_eq!(x[0].evidence["found"], 3);
}

#[test]
fn tv2_marker_at_the_data_epoch_is_marker_epoch_not_bumped() {
    let mut l = Log::new();
    let pid = 77;
    l.txn(pid, 5, 0, 3);
    l.commit(pid, 6, 2); // TV2 inferred
    l.txn(pid, 6, 0, 2);
    let at = l.commit(pid, 6, 2); // rules 21/27: not above the data epoch
    l.txn(pid, 6, 2, 1); // a fresh transaction at the same epoch
    let at2 = l.abort(pid, 6, 2); // a second one in a row: TV downgrade
    l.txn(pid, 6, 3, 1);
    l.commit(pid, 6, 2); // now TV0/1: nothing to say
    let (f, out) = run(&l);
    assert_eq!(
        kinds(&f),
        vec![Kind::MarkerEpochNotBumped, Kind::MarkerEpochNotBumped],
        "{f:#?}"
    );
    let x = &f[0];
    assert_eq!((x.offset, x.severity), (Some(at), Severity::Warning));
    assert_eq!((x.producer_id, x.producer_epoch), (Some(pid), Some(6)));
    assert_eq!(x.evidence["data_epoch"], 6);
    assert_eq!(x.evidence["marker_epoch"], 6);
    assert_eq!(x.evidence["transaction_first_batch"]["offset"], 4);
    assert_eq!(x.evidence["previous_marker"]["offset"], 3);
    assert_eq!(x.evidence["transaction_version_2_after"], true);
    assert!(x.message.contains("transaction version 2"), "{}", x.message);
    assert!(x.broker_behaviour.contains("KIP-1228"));
    let y = &f[1];
    assert_eq!(y.offset, Some(at2));
    assert_eq!(y.evidence["transaction_version_2_after"], false);
    assert!(y.message.contains("now inferred TV0/1"), "{}", y.message);
    assert!(!out.producers[0].transaction_version_2);
    assert_eq!(out.txn_stats.committed, 3);
    assert_eq!(out.txn_stats.aborted, 1);
}

/// A TV2 producer's transaction at epoch 32767 (exhausted: `invalid_producer_fields`) is
/// closed at 32767, the only epoch the coordinator can write, which the leader's strict TV2
/// check lets through since KAFKA-19999: an info, no step toward the TV0/1 downgrade (the
/// next unbumped marker is a lone warning again, TV2 kept). Near miss: the same at epoch
/// 32766 is the warning.
#[test]
fn an_unbumped_marker_at_the_exhausted_epoch_is_the_transactions_own() {
    let pid = 77;
    let log = |epoch: i16| {
        let mut l = Log::new();
        l.txn(pid, epoch - 1, 0, 3);
        l.commit(pid, epoch, 2); // TV2 inferred
        l.txn(pid, epoch, 0, 2);
        let at = l.commit(pid, epoch, 2);
        (l, at)
    };
    let (mut l, at) = log(i16::MAX);
    let (f, _) = run(&l);
    let x = of(&f, Kind::MarkerEpochNotBumped);
    assert_eq!(x.len(), 1, "{f:#?}");
    assert_eq!((x[0].offset, x[0].severity), (Some(at), Severity::Info));
    assert_eq!(x[0].evidence["epoch_exhausted"], true);
    assert!(x[0].broker_behaviour.contains("KAFKA-19999"));
    assert!(x[0].message.contains("cannot bump"), "{}", x[0].message);
    l.txn(pid, i16::MAX, 2, 1);
    l.abort(pid, i16::MAX, 2);
    let (f, out) = run(&l);
    let x = of(&f, Kind::MarkerEpochNotBumped);
    assert_eq!(x.len(), 2, "{f:#?}");
    assert_eq!(x[1].evidence["transaction_version_2_after"], true);
    assert!(out.producers[0].transaction_version_2);
    let (l, at) = log(i16::MAX - 1);
    let (f, _) = run(&l);
    let x = of(&f, Kind::MarkerEpochNotBumped);
    assert_eq!((x[0].offset, x[0].severity), (Some(at), Severity::Warning));
    assert_eq!(x[0].evidence["epoch_exhausted"], false);
}

#[test]
fn one_unbumped_marker_keeps_the_tv2_verdict() {
    let mut l = Log::new();
    let pid = 77;
    l.txn(pid, 5, 0, 3);
    l.commit(pid, 6, 2);
    l.txn(pid, 6, 0, 2);
    l.abort(pid, 6, 2); // flagged, TV2 kept
    let (f, out) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::MarkerEpochNotBumped], "{f:#?}");
    assert!(out.producers[0].transaction_version_2);
    // ... and bumped markers afterwards reset the count: the next lone one is flagged
    // again without downgrading.
    l.txn(pid, 6, 2, 1);
    l.commit(pid, 7, 2);
    l.txn(pid, 7, 0, 1);
    let at = l.commit(pid, 7, 2);
    let (f, out) = run(&l);
    assert_eq!(
        kinds(&f),
        vec![Kind::MarkerEpochNotBumped, Kind::MarkerEpochNotBumped],
        "{f:#?}"
    );
    assert_eq!(f[1].offset, Some(at));
    assert_eq!(f[1].evidence["transaction_version_2_after"], true);
    assert!(out.producers[0].transaction_version_2);
}

#[test]
fn tv01_markers_at_the_data_epoch_are_not_marker_epoch_not_bumped() {
    let mut l = Log::new();
    let pid = 12;
    l.txn(pid, 3, 0, 2);
    l.commit(pid, 3, 1); // TV0/1 inferred
    l.txn(pid, 3, 2, 2);
    l.abort(pid, 3, 1);
    l.txn(pid, 3, 4, 1);
    l.commit(pid, 3, 1);
    let (f, out) = run(&l);
    assert!(of(&f, Kind::MarkerEpochNotBumped).is_empty(), "{f:#?}");
    assert!(f.is_empty(), "{f:#?}");
    assert!(!out.producers[0].transaction_version_2);
    // Unknown TV (first transaction seen) is not judged either.
    let mut l = Log::new();
    l.txn(pid, 3, 0, 2);
    l.commit(pid, 3, 1);
    let (f, _) = run(&l);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn kip_588_fenced_abort_then_reinitialised_producer_is_not_an_error() {
    let mut l = Log::new();
    let pid = 12;
    l.txn(pid, 3, 0, 4);
    l.txn(pid, 3, 4, 4);
    l.abort(pid, 4, 1); // coordinator fenced the transaction (timeout)
    l.advance(30_000);
    l.txn(pid, 5, 0, 2); // re-initialised: InitProducerId bumped again
    l.commit(pid, 5, 1);
    let (f, out) = run(&l);
    assert!(errors(&f).is_empty(), "{f:#?}");
    assert!(f.is_empty(), "{f:#?}");
    assert_eq!(out.txn_stats.aborted, 1);
    assert_eq!(out.txn_stats.committed, 1);
    assert!(!out.producers[0].transaction_version_2);
}

// ----- offsets, leader epochs -------------------------------------------------------------

#[test]
fn offset_regression_within_and_across_segments() {
    let mut l = Log::new();
    l.plain(10); // 0..9
    l.next_offset = 5;
    l.plain(3); // 5..7 overlaps
    l.next_offset = 10;
    l.plain(5); // 10..14
    l.roll();
    l.next_offset = 14;
    l.plain(2); // 14..15 overlaps across segments
    let (f, out) = run(&l);
    let x = of(&f, Kind::OffsetRegression);
    assert_eq!(x.len(), 2, "{f:#?}");
    assert_eq!(x[0].offset, Some(5));
    assert_eq!(x[0].evidence["previous"]["last_offset"], 9);
    assert_eq!(x[0].evidence["across_segments"], false);
    assert_eq!(x[1].offset, Some(14));
    assert_eq!(x[1].segment.as_deref(), Some("00000000000000000100.log"));
    assert_eq!(x[1].evidence["across_segments"], true);
    assert_eq!(
        x[1].evidence["previous"]["segment"],
        "00000000000000000000.log"
    );
    assert!(of(&f, Kind::OffsetGap).is_empty());
    assert_eq!(out.log_end_offset, Some(16));
}

#[test]
fn monotonic_offsets_raise_no_offset_finding() {
    let mut l = Log::new();
    l.plain(10);
    l.roll();
    l.plain(1);
    l.idem(1, 0, 0, 2);
    let (f, _) = run(&l);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn offset_gap_is_a_warning_on_delete_topics_and_info_when_unknown() {
    let mut l = Log::new();
    l.plain(3);
    l.skip_offsets(4);
    let at = l.plain(2);
    let (f, _) = run(&l);
    let x = of(&f, Kind::OffsetGap);
    assert_eq!(x.len(), 1);
    assert_eq!(x[0].offset, Some(at));
    assert_eq!(x[0].severity, Severity::Warning);
    assert_eq!(x[0].evidence["missing_offsets"], 4);

    let mut c = ctx("orders");
    c.compacted = None;
    let (f, _) = run_ctx(c, &l, l.ts);
    assert_eq!(of(&f, Kind::OffsetGap)[0].severity, Severity::Info);
}

#[test]
fn markers_consume_offsets_and_are_not_gaps() {
    let mut l = Log::new();
    l.txn(1, 0, 0, 3);
    l.commit(1, 0, 0);
    l.plain(1);
    let (f, _) = run(&l);
    assert!(of(&f, Kind::OffsetGap).is_empty(), "{f:#?}");
}

#[test]
fn compacted_topic_gaps_are_not_reported() {
    let mut l = Log::new();
    l.idem(1, 0, 0, 3);
    l.skip_offsets(10);
    l.idem(1, 0, 20, 2); // whole batches removed by the cleaner
    l.skip_offsets(1);
    l.abort(1, 0, 0); // aborted data removed by the cleaner: marker without data
    let mut c = ctx("compacted");
    c.compacted = Some(true);
    let (f, _) = run_ctx(c, &l, l.ts);
    assert!(f.is_empty(), "{f:#?}");

    // Undeclared, but the cleaner visibly went through (delete-horizon bit): same.
    let mut l2 = Log::new();
    l2.idem(1, 0, 0, 3);
    l2.last_mut().delete_horizon = true;
    l2.skip_offsets(10);
    l2.idem(1, 0, 20, 2);
    let mut c = ctx("unknown");
    c.compacted = None;
    let (f, _) = run_ctx(c, &l2, l2.ts);
    assert!(f.is_empty(), "{f:#?}");

    // Undeclared and no trace of the cleaner: a sequence gap is a warning, not an error.
    let mut l3 = Log::new();
    l3.idem(1, 0, 0, 3);
    l3.idem(1, 0, 20, 2);
    let mut c = ctx("unknown");
    c.compacted = None;
    let (f, _) = run_ctx(c, &l3, l3.ts);
    assert_eq!(kinds(&f), vec![Kind::SequenceGap]);
    assert_eq!(f[0].severity, Severity::Warning);
}

#[test]
fn leader_epoch_regression_and_unknown_epochs() {
    let mut l = Log::new();
    l.leader_epoch = 4;
    l.plain(1);
    l.leader_epoch = -1; // unknown: ignored
    l.plain(1);
    l.leader_epoch = 5;
    l.plain(1);
    l.leader_epoch = 5;
    l.plain(1);
    let (f, _) = run(&l);
    assert!(of(&f, Kind::LeaderEpochRegression).is_empty(), "{f:#?}");

    l.leader_epoch = 3;
    let at = l.plain(1);
    let (f, _) = run(&l);
    let x = of(&f, Kind::LeaderEpochRegression);
    assert_eq!(x.len(), 1);
    assert_eq!(x[0].offset, Some(at));
    assert_eq!(x[0].evidence["previous_leader_epoch"], 5);
    assert_eq!(x[0].evidence["leader_epoch"], 3);
    assert_eq!(x[0].severity, Severity::Warning);
}

// ----- producer epochs ------------------------------------------------------------------

#[test]
fn producer_epoch_regression_on_data_without_marker_is_not_a_zombie_write() {
    let mut l = Log::new();
    l.idem(8, 3, 0, 2);
    l.advance(2 * 86_400_000); // the leader had expired the producer
    let at = l.idem(8, 2, 0, 2);
    let (f, _) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::ProducerEpochRegression], "{f:#?}");
    assert_eq!(f[0].offset, Some(at));
    assert_eq!(f[0].evidence["exceeds_producer_id_expiration"], true);
    assert!(f[0].message.contains("expired"));
}

#[test]
fn producer_epoch_regression_on_a_marker() {
    let mut l = Log::new();
    l.txn(8, 3, 0, 2);
    l.commit(8, 3, 1);
    l.txn(8, 3, 2, 2);
    let at = l.abort(8, 2, 1); // zombie marker still closes the transaction on recovery
    let (f, out) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::ProducerEpochRegression], "{f:#?}");
    assert_eq!(f[0].offset, Some(at));
    // Said explicitly, so the kind's table (a producer's InvalidProducerEpochException)
    // does not fill it in later.
    assert!(
        f[0].client_error
            .as_deref()
            .is_some_and(|c| c.starts_with("none: markers come from the transaction coordinator")),
        "markers involve no client: {:?}",
        f[0].client_error
    );
    assert!(f[0].broker_behaviour.contains("COORDINATOR"));
    assert_eq!(out.txn_stats.aborted, 1);
    assert!(out.open.is_empty());
}

#[test]
fn increasing_epochs_raise_nothing() {
    let mut l = Log::new();
    l.idem(8, 0, 0, 5);
    l.idem(8, 1, 0, 5); // KIP-360 local bump
    l.idem(8, 1, 5, 5);
    l.idem(8, 4, 0, 1);
    let (f, _) = run(&l);
    assert!(f.is_empty(), "{f:#?}");
}

// ----- sequences -------------------------------------------------------------------------

#[test]
fn invalid_first_sequence_on_a_new_epoch() {
    let mut l = Log::new();
    l.idem(8, 0, 0, 5);
    let at = l.idem(8, 1, 7, 1);
    let (f, _) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::InvalidFirstSequence]);
    assert_eq!(f[0].offset, Some(at));
    assert_eq!(f[0].severity, Severity::Warning);
    assert_eq!(f[0].evidence["previous_epoch"], 0);
}

#[test]
fn a_new_epoch_after_a_first_sight_marker_must_start_at_zero() {
    // History starts with a marker: the leader knew epoch 3 but no sequence.
    let mut l = Log::new();
    l.skip_offsets(100); // the log does not start at 0 (retention)
    l.commit(8, 3, 1);
    let at = l.txn(8, 4, 7, 1); // new epoch, sequence 7: rule 14
    let (f, _) = run(&l);
    let k = of(&f, Kind::InvalidFirstSequence);
    assert_eq!(k.len(), 1, "{f:#?}");
    assert_eq!(k[0].offset, Some(at));
    // Same epoch as the marker: its sequence cannot be judged (TV0/1 continues it).
    let mut l = Log::new();
    l.skip_offsets(100);
    l.commit(8, 3, 1);
    l.txn(8, 3, 57, 1);
    let (f, _) = run(&l);
    assert!(of(&f, Kind::InvalidFirstSequence).is_empty(), "{f:#?}");
    // A new epoch starting at 0 is fine.
    let mut l = Log::new();
    l.skip_offsets(100);
    l.commit(8, 3, 1);
    l.txn(8, 4, 0, 1);
    let (f, _) = run(&l);
    assert!(of(&f, Kind::InvalidFirstSequence).is_empty(), "{f:#?}");
}

#[test]
fn first_sight_and_expired_producers_accept_any_sequence() {
    let mut l = Log::new();
    l.idem(8, 4, 1234, 5); // history starts here
    l.advance(2 * 86_400_000);
    l.idem(8, 4, 9000, 1); // expired: the leader accepted any sequence
    l.idem(8, 5, 3, 1); // ... and the state was rebuilt from that batch: new epoch at 3
    let (f, _) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::InvalidFirstSequence], "{f:#?}");
    assert_eq!(f[0].evidence["found"], 3);
}

#[test]
fn sequence_gap_with_expected_found_and_size() {
    let mut l = Log::new();
    l.idem(8, 2, 0, 5);
    let at = l.idem(8, 2, 9, 1);
    let (f, _) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::SequenceGap]);
    assert_eq!(f[0].severity, Severity::Error);
    assert_eq!(f[0].offset, Some(at));
    assert_eq!(f[0].evidence["expected"], 5);
    assert_eq!(f[0].evidence["found"], 9);
    assert_eq!(f[0].evidence["gap"], 4);
    assert!(
        f[0].client_error
            .as_deref()
            .unwrap()
            .contains("OutOfOrderSequenceException")
    );
}

#[test]
fn sequence_wraps_at_int_max() {
    let mut l = Log::new();
    l.idem(8, 2, i32::MAX - 2, 3); // ends at MAX
    l.idem(8, 2, 0, 2);
    l.idem(8, 2, 2, 1);
    let (f, _) = run(&l);
    assert!(f.is_empty(), "{f:#?}");
    // A batch whose range wraps internally, then its successor.
    let mut l = Log::new();
    l.idem(8, 2, i32::MAX - 1, 4); // MAX-1, MAX, 0, 1
    l.idem(8, 2, 2, 1);
    let (f, _) = run(&l);
    assert!(f.is_empty(), "{f:#?}");
    let mut l = Log::new();
    l.idem(8, 2, i32::MAX - 2, 3);
    l.idem(8, 2, 1, 1);
    let (f, _) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::SequenceGap]);
    assert_eq!(f[0].evidence["expected"], 0);
}

#[test]
fn consumer_offsets_transactional_commits_skip_sequence_rules() {
    let mut l = Log::new();
    l.txn(8, 0, 0, 1);
    l.commit(8, 0, 0);
    l.txn(8, 0, 0, 1); // always baseSequence 0
    l.commit(8, 0, 0);
    l.txn(8, 1, 0, 1);
    l.abort(8, 1, 0);
    let mut c = ctx("__consumer_offsets");
    c.internal = true;
    c.compacted = Some(true);
    let (f, out) = run_ctx(c, &l, l.ts);
    assert!(f.is_empty(), "{f:#?}");
    assert_eq!(out.txn_stats.committed, 2);

    // The same on a data topic is a duplicate.
    let (f, _) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::DuplicateSequence]);
}

#[test]
fn duplicate_sequence_exact_and_overlapping() {
    let mut l = Log::new();
    l.idem(8, 2, 0, 5);
    l.idem(8, 2, 5, 5);
    let dup = l.idem(8, 2, 0, 5);
    let (f, _) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::DuplicateSequence]);
    assert_eq!(f[0].offset, Some(dup));
    assert_eq!(f[0].evidence["exact"], true);
    assert_eq!(f[0].evidence["original"]["offset"], 0);

    let mut l = Log::new();
    l.idem(8, 2, 0, 5);
    l.idem(8, 2, 5, 5);
    l.idem(8, 2, 7, 5); // overlaps 5..9
    let (f, _) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::DuplicateSequence]);
    assert_eq!(f[0].evidence["exact"], false);
    assert_eq!(f[0].evidence["original"]["base_sequence"], 5);
    assert!(f[0].client_error.as_deref().unwrap().contains("OutOfOrder"));
}

#[test]
fn same_sequences_at_a_new_epoch_are_not_duplicates() {
    let mut l = Log::new();
    l.idem(8, 2, 0, 5);
    l.idem(8, 3, 0, 5);
    l.idem(8, 3, 5, 5);
    let (f, _) = run(&l);
    assert!(f.is_empty(), "{f:#?}");
}

// ----- producer fields ------------------------------------------------------------------

#[test]
fn invalid_producer_fields() {
    let mut l = Log::new();
    let a = l.data(-1, -1, 3, 1, false); // sequence without producer id
    let b = l.data(-1, -1, -1, 1, true); // transactional without producer id
    let c = l.data(9, 0, -1, 1, false); // producer id without sequence
    let d = l.data(10, -1, 0, 1, false); // producer id with epoch -1
    let (f, _) = run(&l);
    let x = of(&f, Kind::InvalidProducerFields);
    assert_eq!(
        x.iter().map(|f| f.offset.unwrap()).collect::<Vec<_>>(),
        vec![a, b, c, d],
        "{f:#?}"
    );
    assert!(
        x[2].client_error
            .as_deref()
            .unwrap()
            .contains("InvalidRecordException")
    );
    assert!(x[0].producer_id.is_none());
    assert_eq!(
        x[0].severity,
        Severity::Info,
        "pid -1 with a sequence is harmless"
    );
    assert_eq!(
        x[1].severity,
        Severity::Warning,
        "transactional without pid is not"
    );
}

#[test]
fn pid_minus_one_with_zero_fields_is_reported_once_per_partition() {
    let mut l = Log::new();
    for _ in 0..5 {
        l.data(-1, 0, 0, 1, false); // what kafkajs writes
    }
    let (f, _) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::InvalidProducerFields]);
    assert_eq!(f[0].severity, Severity::Info);
    assert_eq!(f[0].offset, Some(0));

    // Coordinator-written __consumer_offsets batches carry baseSequence 0 with pid -1.
    let mut c = ctx("__consumer_offsets");
    c.internal = true;
    c.compacted = Some(true);
    let mut l = Log::new();
    l.data(-1, -1, 0, 1, false);
    let (f, _) = run_ctx(c, &l, l.ts);
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn valid_producer_fields_and_legacy_entries_raise_nothing() {
    let mut l = Log::new();
    l.plain(2);
    l.idem(9, 0, 0, 1);
    let mut legacy = l.template(-1, -1, 1);
    legacy.magic = 1;
    legacy.compression = Compression::Gzip;
    legacy.base_offset = l.next_offset + 4; // the wrapper's (last) offset
    legacy.last_offset = legacy.base_offset;
    l.push(legacy);
    let (f, _) = run(&l);
    assert!(f.is_empty(), "{f:#?}");
}

/// `kafka-transactions.sh abort` writes its ABORT at the producer's current epoch
/// (AbortTransactionHandler, from DescribeProducers): closing a TV2 transaction idle past
/// transaction.max.timeout.ms, an unbumped ABORT is most likely that admin abort — info,
/// and no step toward a TV0/1 downgrade. The same ABORT soon after the data is a warning.
#[test]
fn an_unbumped_abort_after_a_long_idle_is_likely_an_admin_abort() {
    let base = |l: &mut Log| {
        l.txn(77, 5, 0, 3);
        l.commit(77, 6, 2); // TV2 inferred
        l.txn(77, 6, 0, 2);
    };
    let mut l = Log::new();
    base(&mut l);
    l.advance(2 * 3_600_000);
    let at = l.abort(77, 6, 2);
    let (f, out) = run(&l);
    assert_eq!(kinds(&f), vec![Kind::MarkerEpochNotBumped], "{f:#?}");
    assert_eq!((f[0].offset, f[0].severity), (Some(at), Severity::Info));
    assert_eq!(f[0].evidence["likely_admin_abort"], true);
    assert!(
        f[0].message.contains("most likely an admin abort"),
        "{}",
        f[0].message
    );
    assert!(out.producers[0].transaction_version_2);
    // A second unbumped marker after it is a lone one again, not a downgrade.
    l.txn(77, 6, 2, 1);
    l.commit(77, 6, 2);
    let (f, out) = run(&l);
    assert_eq!(f.len(), 2, "{f:#?}");
    assert_eq!(f[1].evidence["transaction_version_2_after"], true);
    assert!(out.producers[0].transaction_version_2);
    let mut l = Log::new();
    base(&mut l);
    l.abort(77, 6, 2);
    let (f, _) = run(&l);
    assert_eq!(f[0].severity, Severity::Warning, "{f:#?}");
    assert_eq!(f[0].evidence["likely_admin_abort"], false);
}

/// An entry at NO_PRODUCER_EPOCH (-1) accepts any sequence at its epoch and any first
/// sequence at a new one (ProducerAppendInfo.checkSequence): no sequence verdicts.
#[test]
fn a_producer_at_epoch_minus_one_is_not_sequence_checked() {
    let mut l = Log::new();
    l.idem(9, -1, 0, 1);
    l.idem(9, -1, 5, 1);
    l.idem(9, 0, 3, 1);
    let (f, _) = run(&l);
    assert!(
        !f.iter()
            .any(|x| matches!(x.kind, Kind::SequenceGap | Kind::InvalidFirstSequence)),
        "{f:#?}"
    );
    // An exact duplicate at epoch -1 is still found (findDuplicateBatch compares epochs only).
    let mut l = Log::new();
    l.idem(9, -1, 0, 1);
    let dup = l.idem(9, -1, 0, 1);
    let (f, _) = run(&l);
    let d: Vec<_> = f
        .iter()
        .filter(|x| x.kind == Kind::DuplicateSequence)
        .collect();
    assert_eq!(d.len(), 1, "{f:#?}");
    assert_eq!(d[0].offset, Some(dup));
    // The twin at epoch 0: the gap and the bad first sequence are reported.
    let mut l = Log::new();
    l.idem(9, 0, 0, 1);
    l.idem(9, 0, 5, 1);
    l.idem(9, 1, 3, 1);
    let (f, _) = run(&l);
    let k = kinds(&f);
    assert!(
        k.contains(&Kind::SequenceGap) && k.contains(&Kind::InvalidFirstSequence),
        "{f:#?}"
    );
}
