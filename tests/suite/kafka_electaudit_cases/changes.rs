//! `PartitionChangeBuilderTest.testChangeRecordIsNoOp`: which `PartitionChangeRecord`s change
//! nothing but the partition epoch. The builder never writes a record with no field set
//! (`changeRecordIsNoOp`: `build` returns nothing); a record carrying only
//! `LeaderRecoveryState` RECOVERED is not one — the leader's AlterPartition after it
//! recovered from an unclean election writes it (KIP-704).

use crate::kafka_imgaudit_cases::{all_lines, brokers_with, history_of, of_kind};
use crate::kafka_quiet_cluster_cases::T0;
use crate::kafka_quiet_cluster_cases::kraft::{
    MetaLog, SEC, broker_change, broker_epoch_at_start, change, metadata_version, partition,
    register, topic,
};
use klogscan::finding::Kind;

/// `orders-0` on [1, 2, 3] led by 1 with ISR [1]; 2 elected uncleanly (ISR [2],
/// RECOVERING) at leader epoch 1; then a record with no field set, then (`recovered`) one
/// with `LeaderRecoveryState` 0 alone. Replayed (`PartitionRegistration.merge`): the empty
/// record raises the partition epoch only (2, leader 2 at epoch 1, still RECOVERING); the
/// recovery record raises it again (3) and the state is RECOVERED, the leader and its epoch
/// kept — no second election, one `unclean_leader_election`. Near miss: without the recovery
/// record the partition stays RECOVERING.
#[test]
fn an_empty_change_moves_only_the_partition_epoch_and_recovered_is_a_change() {
    for recovered in [true, false] {
        let mut m = MetaLog::new(T0 - 60 * SEC);
        m.batch(&[metadata_version(14)]);
        for id in 1..=3 {
            m.batch(&[register(id, broker_epoch_at_start(id), id as u8, true)]);
        }
        m.batch(
            &(1..=3)
                .map(|id| broker_change(id, broker_epoch_at_start(id), -1, 0))
                .collect::<Vec<_>>(),
        );
        m.at(T0 - 30 * SEC);
        m.batch(&[
            topic("orders"),
            partition("orders", 0, &[1, 2, 3], &[1], (1, 0, 0)),
        ]);
        m.batch(&[change("orders", 0, |c| {
            c.leader = 2;
            c.isr = Some(vec![2]);
            c.leader_recovery_state = 1;
        })]);
        m.batch(&[change("orders", 0, |_| {})]);
        if recovered {
            m.batch(&[change("orders", 0, |c| c.leader_recovery_state = 0)]);
        }
        let b = brokers_with(&m, &[1, 2, 3], |_| Vec::new());
        let h = history_of(&b);
        let steps: Vec<(i32, i32, i32, i8)> = (h.timeline("orders", 0).unwrap().steps.iter())
            .map(|s| {
                let s = &s.state;
                (
                    s.leader,
                    s.leader_epoch,
                    s.partition_epoch,
                    s.recovery_state,
                )
            })
            .collect();
        let mut want = vec![(1, 0, 0, 0), (2, 1, 1, 1), (2, 1, 2, 1)];
        if recovered {
            want.push((2, 1, 3, 0));
        }
        assert_eq!(steps, want);
        assert_eq!(h.elections.len(), 1);
        let v = b.check();
        let found = of_kind(&v, Kind::UncleanLeaderElection);
        assert!(found.iter().all(|r| r.len() == 1), "{}", all_lines(&v));
    }
}
