//! The fixed sentences of the findings: what a broker does (`ProducerAppendInfo`'s checks) and
//! which error a producer would have seen (KIP-588 / KIP-691 / KIP-1050 classes).

pub(crate) const BROKER_OFFSET_REGRESSION: &str = "never written by a leader (it assigns offsets); a follower rejects it (OffsetsOutOfOrderException / UnexpectedAppendOffsetException); recovery notices it only when an index append sees a non-increasing offset (then truncates the segment to its base offset and deletes later segments), otherwise keeps it";
pub(crate) const BROKER_OFFSET_GAP: &str =
    "never notices: gaps are accepted on every path (normal after compaction or DeleteRecords)";
pub(crate) const BROKER_LEADER_EPOCH: &str = "never notices on append; leader-epoch truncation after a leader change should have removed the divergent batches";
pub(crate) const BROKER_EPOCH_DATA: &str = "rejects on append (leader, CLIENT/COORDINATOR origin: InvalidProducerEpochException) when it has the producer's state; warns on recovery/replication (WARN, accepted, the stored epoch regresses)";
pub(crate) const BROKER_EPOCH_MARKER: &str = "rejects on append (COORDINATOR origin) when it has the producer's state; warns on recovery/replication (WARN, accepted, the marker still closes the open transaction)";
pub(crate) const BROKER_ZOMBIE: &str = "rejects on append when it has the producer's state (epoch check; since 3.6 also the transaction verification guard); accepted by replication and recovery";
pub(crate) const BROKER_FIRST_SEQ: &str = "rejects on append (CLIENT origin) unless the producer was unknown to the leader; never checked by replication or recovery";
pub(crate) const BROKER_SEQ_GAP: &str = "rejects on append (CLIENT origin, OutOfOrderSequenceException) unless the producer was unknown to the leader; never checked by replication or recovery";
pub(crate) const BROKER_DUPLICATE: &str = "the leader returns the original offsets for an exact duplicate of one of the producer's last 5 batches (nothing appended) and rejects other overlaps as out of order; replication and recovery never deduplicate";
pub(crate) const BROKER_FIELDS: &str = "rejects on append (CLIENT origin) a batch with a producer id and baseSequence < 0; other boundary values are never rejected by replicas or recovery";
pub(crate) const BROKER_HANGING: &str = "never notices: the open transaction pins the last stable offset (read_committed consumers stall, the cleaner stops there) and the producer id never expires; only an abort marker closes it";
pub(crate) const BROKER_OPEN: &str = "normal while the producer is active: the last stable offset stays at the transaction's first offset until its marker is written";
pub(crate) const BROKER_COORD_EPOCH: &str = "rejects on append (COORDINATOR origin, TransactionCoordinatorFencedException) when it has the producer's state; logs INFO and accepts on replication/recovery since 2.4.1/2.5.0; brokers <= 2.4.0 (and <= 2.3.1) throw when a load replays it (recovery, a producer-state rebuild) and fail to load this log (KAFKA-9144; verify --broker-version predicts whether a load does)";
pub(crate) const BROKER_MARKER_NO_TXN: &str =
    "accepted on every path; nothing goes to the .txnindex and the LSO is unaffected (since 2.8)";
pub(crate) const BROKER_CONFLICT: &str = "accepted on every path (the second marker finds no open transaction); under TV2 it means a delayed EndTxn completed the wrong transaction";
pub(crate) const BROKER_MARKER_NOT_BUMPED: &str = "a 4.2+ leader receiving WriteTxnMarkers v2 with TransactionVersion 2 (KIP-1228) rejects a marker whose epoch does not exceed the transaction's; older leaders, replication and recovery accept it and it closes the open transaction";
pub(crate) const BROKER_MARKER_AT_MAX_EPOCH: &str = "accepted on every path: a 4.2+ leader's strict TV2 check (KIP-1228) lets a marker at epoch 32767 through since KAFKA-19999 (the coordinator cannot bump an exhausted epoch), and it closes the open transaction";
pub(crate) const BROKER_COMMIT_ABOVE_DATA: &str = "accepted on every path (a marker above the producer's epoch always is); under TV0/1 the coordinator writes a COMMIT at the epoch of the transaction (only TV2, KIP-890, bumps the epoch at EndTxn), so a bumped COMMIT means the producer switched to transaction version 2";
pub(crate) const BROKER_TXN_EPOCH: &str = "accepted on every path: the open transaction simply continues at the new epoch (newer brokers require fresh verification)";
pub(crate) const BROKER_NON_TXN: &str = "rejects on append (InvalidTxnStateException) and throws on replication and recovery too: a broker reloading this segment fails to rebuild producer state";

pub(crate) const CLIENT_EPOCH: &str = "InvalidProducerEpochException (INVALID_PRODUCER_EPOCH, code 47; abortable since KIP-588/2.7 — before 2.7 ProducerFencedException, fatal)";
pub(crate) const CLIENT_ZOMBIE: &str = "InvalidProducerEpochException (INVALID_PRODUCER_EPOCH, code 47, abortable); on brokers >= 3.6 a missing verification guard gives InvalidTxnStateException (INVALID_TXN_STATE, code 48) — the zombie should have been fenced; its next AddPartitionsToTxn or EndTxn (the abort) gets PRODUCER_FENCED, fatal in the producer's TransactionManager: application-recoverable (close the producer, create a new one)";
/// [`CLIENT_ZOMBIE`] of a transaction-version-2 producer whose write sits one epoch below the
/// ABORT that closed its transaction: a coordinator timeout abort bumps once under TV2
/// (`TransactionCoordinator.abortTimedOutTransactions` → `endTransaction`, epoch fence), and
/// the producer's own abort at the old epoch is then a retry (`retryOnEpochBump`,
/// `TransactionCoordinatorTest.shouldReturnOkOnEndTxnWhenStatusIsCompleteAbortAndResultIsAbortInV2`);
/// a new instance's InitProducerId fencing it leaves the same marker. TV2 clients (4.0+) send
/// no AddPartitionsToTxn: the leader's verification does, and `AddPartitionsToTxnManager`
/// answers PRODUCER_FENCED as INVALID_PRODUCER_EPOCH.
pub(crate) const CLIENT_ZOMBIE_TV2: &str = "InvalidProducerEpochException (INVALID_PRODUCER_EPOCH, code 47, abortable; also the leader's transaction verification's answer) — transaction version 2 (TV2): an ABORT one epoch above the write is left both by a coordinator timeout abort and by a new producer instance fencing this one, and the partition's log cannot tell which. After a timeout abort the producer's abort (EndTxn at the old epoch) is taken as a retry and answered with no error and the bumped epoch (TransactionCoordinator.endTransaction, retryOnEpochBump): the producer goes on, producer-abortable. After a fencing the abort gets PRODUCER_FENCED, fatal in the producer's TransactionManager: application-recoverable (close the producer, create a new one)";
pub(crate) const CLIENT_OUT_OF_ORDER: &str = "OutOfOrderSequenceException (OUT_OF_ORDER_SEQUENCE_NUMBER, code 45; abortable for a transactional producer, an idempotent producer bumps its epoch (KIP-360))";
pub(crate) const CLIENT_DUPLICATE_EXACT: &str = "none: a leader holding the producer's state answers an exact duplicate of one of its last 5 batches with the original batch's offsets and no error (UnifiedLog.analyzeAndValidateProducerState, findDuplicateBatch): this copy appended it again";
pub(crate) const CLIENT_INVALID_RECORD: &str =
    "InvalidRecordException (INVALID_RECORD, code 87; not retriable, the batch fails)";
pub(crate) const CLIENT_NON_TXN: &str = "InvalidTxnStateException (INVALID_TXN_STATE, code 48) on the send: not fatal on a produce (TransactionManager makes it fatal only on AddPartitionsToTxn and EndTxn responses): the idempotent producer's send fails and it bumps its epoch; a transactional producer aborts";

/// The `kafka-transactions.sh` command that aborts the transaction starting at `offset`,
/// its values quoted for a POSIX shell (placeholders and a note when the directory is not
/// named `topic-N`: [`crate::escape::ShellArgs`]).
pub(crate) fn abort_command(topic: &str, partition: i32, offset: i64) -> String {
    let mut a = crate::escape::ShellArgs::default();
    let line = format!(
        "kafka-transactions.sh --bootstrap-server <broker> abort {} --partition {} --start-offset {offset}",
        crate::escape::flag("topic", &a.topic(topic)),
        a.partition(partition)
    );
    format!("{line}{}", a.suffix())
}

/// The `kafka-transactions.sh` abort for brokers before 3.0, which cannot find a
/// transaction by its start offset (`DescribeProducers` is a 3.0 API): the producer id and
/// epoch and a coordinator epoch at least the partition's (the tool takes -1 as 0, as
/// `TransactionsCommand.AbortTransactionCommand` does), quoted as [`abort_command`].
pub(crate) fn abort_command_before_3_0(
    topic: &str,
    partition: i32,
    producer_id: i64,
    producer_epoch: i16,
    coordinator_epoch: i32,
) -> String {
    let mut a = crate::escape::ShellArgs::default();
    let line = format!(
        "kafka-transactions.sh --bootstrap-server <broker> abort {} --partition {} --producer-id {producer_id} --producer-epoch {producer_epoch} --coordinator-epoch {}",
        crate::escape::flag("topic", &a.topic(topic)),
        a.partition(partition),
        coordinator_epoch.max(0)
    );
    format!("{line}{}", a.suffix())
}

/// `` `kafka-transactions.sh … describe --transactional-id ID` `` in backticks, the id
/// quoted for a POSIX shell (a placeholder and a note when it cannot be:
/// [`crate::escape::ShellArgs`]).
pub(crate) fn describe_command(id: &str) -> String {
    let mut a = crate::escape::ShellArgs::default();
    let line = format!(
        "`kafka-transactions.sh --bootstrap-server <broker> describe {}`",
        a.option(
            "transactional-id",
            id,
            "transactional-id",
            "the transactional id"
        )
    );
    format!("{line}{}", a.suffix())
}

/// The `kafka-transactions.sh find-hanging` command of a partition (quoted as
/// [`abort_command`]).
pub(crate) fn find_hanging_command(topic: &str, partition: i32) -> String {
    let mut a = crate::escape::ShellArgs::default();
    let line = format!(
        "kafka-transactions.sh --bootstrap-server <broker> find-hanging {} --partition {}",
        crate::escape::flag("topic", &a.topic(topic)),
        a.partition(partition)
    );
    format!("{line}{}", a.suffix())
}

/// A duration in human units, singular or plural: `500 ms`, `1 second`, `59 minutes`,
/// `5.2 hours`, `3 days`, `3.6 years` (one decimal from hours on, dropped when `.0`).
pub fn human_duration(ms: i64) -> String {
    let ms = ms.max(0);
    let plural = |n: i64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    let decimal = |x: f64, unit: &str| {
        let r = (x * 10.0).round() / 10.0;
        if r.fract() == 0.0 {
            plural(r as i64, unit)
        } else {
            format!("{r:.1} {unit}s")
        }
    };
    match ms {
        m if m < 1_000 => format!("{m} ms"),
        m if m < 60_000 => plural(m / 1_000, "second"),
        m if m < 3_600_000 => plural(m / 60_000, "minute"),
        m if m < 2 * 86_400_000 => decimal(m as f64 / 3_600_000.0, "hour"),
        m if m < 365 * 86_400_000 => decimal(m as f64 / 86_400_000.0, "day"),
        m => decimal(m as f64 / (365.25 * 86_400_000.0), "year"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn human_durations_in_singular_and_plural() {
        use super::human_duration as h;
        assert_eq!(h(500), "500 ms");
        assert_eq!(h(1_000), "1 second");
        assert_eq!(h(59_000), "59 seconds");
        assert_eq!(h(60_000), "1 minute");
        assert_eq!(h(3_592_993), "59 minutes");
        assert_eq!(h(3_600_000), "1 hour");
        assert_eq!(h(5 * 3_600_000 + 720_000), "5.2 hours");
        assert_eq!(h(3 * 86_400_000), "3 days");
        // 1906425 minutes, as the hanging transactions of a 2019 log seen in 2023.
        assert_eq!(h(1_906_425 * 60_000), "3.6 years");
    }
}
