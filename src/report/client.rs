//! What the clients saw: for every finding kind a producer or a consumer can observe, the
//! exception it met and its class (KIP-1050's four groups, KIP-691's behaviour; the table is
//! in docs/findings.md, "What the clients saw"). [`fill`] writes it into `Finding::client_error` when the report is finished,
//! where a rule did not already say something more specific; the triage summary uses the
//! same table to say what the applications experienced.

use crate::finding::evidence::{self, ZombieJoint};
use crate::finding::{Finding, Kind};

/// KIP-1050's groups (plus the two cases the KIP leaves outside them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The producer retries internally; the application never sees it.
    ProducerRetriable,
    /// Abort the transaction and go on with the same producer.
    ProducerAbortable,
    /// The producer is unusable: close it and restart from the application's checkpoint.
    ApplicationRecoverable,
    /// Bubbled up; the application decides.
    InvalidConfiguration,
    /// `OutOfOrderSequenceException` and `UnknownProducerIdException`: deliberately outside
    /// KIP-1050's groups (KIP-691: abortable, an idempotent producer bumps its epoch).
    Ungrouped,
    /// Not a producer exception: what a consumer meets, or no error at all.
    NotAProducerError,
}

impl ErrorClass {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::ProducerRetriable => "producer-retriable",
            ErrorClass::ProducerAbortable => "producer-abortable",
            ErrorClass::ApplicationRecoverable => "application-recoverable",
            ErrorClass::InvalidConfiguration => "invalid-configuration",
            ErrorClass::Ungrouped => "outside KIP-1050's groups",
            ErrorClass::NotAProducerError => "not a producer error",
        }
    }
}

/// One row of the table: who sees what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientError {
    /// `producer` or `consumer` (who meets it).
    pub who: &'static str,
    /// The exception (or `none`).
    pub exception: &'static str,
    pub class: ErrorClass,
    /// KIP-691's behaviour: what the client does about it.
    pub behaviour: &'static str,
    /// What a consumer experiences, when different from the producer's view.
    pub consumers: Option<&'static str>,
}

impl ClientError {
    /// A consumer's error (not a producer error).
    fn consumer(exception: &'static str, behaviour: &'static str) -> ClientError {
        ClientError {
            who: "consumer",
            exception,
            class: ErrorClass::NotAProducerError,
            behaviour,
            consumers: None,
        }
    }

    /// The text that goes into `Finding::client_error`.
    pub fn text(&self) -> String {
        let mut s = format!(
            "{}: {} — {}; {}",
            self.who,
            self.exception,
            self.class.as_str(),
            self.behaviour
        );
        if let Some(c) = self.consumers {
            s.push_str("; consumers: ");
            s.push_str(c);
        }
        s
    }

    /// A short phrase for the triage summary. A producer finding is about a write the log
    /// holds, so the leader accepted it: the phrase says what a leader holding the
    /// producer's state answers such a write, not that the producer got it; then what the
    /// producer meets next (`A / B`: refused with A, it then meets B), and the class of
    /// what it ends in.
    pub fn short(&self) -> String {
        match (self.who, self.exception) {
            (_, "none") => self.consumers.unwrap_or(self.behaviour).to_string(),
            ("consumer", e) => format!("consumers got {e}"),
            (_, e) => match e.split_once(" / ") {
                Some((first, then)) => format!(
                    "producer writes accepted that a leader holding their state refuses with {first}; the producer then meets {then} ({})",
                    self.class.as_str()
                ),
                None => format!(
                    "producer writes accepted that a leader holding their state refuses with {e} ({})",
                    self.class.as_str()
                ),
            },
        }
    }
}

/// [`ClientError::short`] of `c`, the row of finding `f`'s kind, with what the rule's own
/// text adds to it: a transaction-version-2 zombie one epoch below an ABORT may have been
/// aborted by the coordinator's timeout instead of fenced, and then goes on
/// (`TransactionCoordinator.endTransaction`'s `retryOnEpochBump`;
/// the replay's [`ZombieJoint::timeout_abort_possible`]).
pub(crate) fn short_of(f: &Finding, c: &ClientError) -> String {
    let mut s = c.short();
    if f.kind == Kind::ZombieWrite && evidence::read::<ZombieJoint>(f).timeout_abort_possible {
        s.push_str(
            " — unless the coordinator aborted its transaction on timeout (transaction version 2): its abort is then answered as a retry and it goes on (producer-abortable)",
        );
    }
    s
}

/// The client errors of the findings about a group's committed offsets held back (a
/// hanging transaction's, a commit a 4.x load keeps pending).
fn group_offsets(kind: Kind) -> Option<ClientError> {
    Some(match kind {
        Kind::GroupBlockedByHangingTransaction => ClientError {
            who: "consumer",
            exception: "none",
            class: ErrorClass::NotAProducerError,
            behaviour: "the group's position is at the stuck last stable offset",
            consumers: Some(STALL),
        },
        Kind::GroupOffsetsPendingInHangingTransaction => ClientError::consumer(
            "UnstableOffsetCommitException (UNSTABLE_OFFSET_COMMIT)",
            "retriable: the consumer retries fetching its committed offsets forever and never starts on those partitions",
        ),
        Kind::GroupOffsetCommitInIdempotentBatch => ClientError::consumer(
            "UnstableOffsetCommitException (UNSTABLE_OFFSET_COMMIT) on Kafka 4.x brokers",
            "Kafka 4.x: retriable, the consumer retries fetching its committed offsets for those partitions until its timeout and does not start on them (KafkaConsumer.committed throws TimeoutException); Kafka 3.x: none, the commits are applied",
        ),
        _ => return None,
    })
}

const STALL: &str =
    "read_committed consumers stall silently at the last stable offset (no exception; lag grows)";

/// The client-visible error of a finding kind, or `None` when no client observes it (the
/// broker's own files, the analysis itself).
pub(crate) fn for_kind(kind: Kind) -> Option<ClientError> {
    use ErrorClass::*;
    let producer = |exception, class, behaviour| ClientError {
        who: "producer",
        exception,
        class,
        behaviour,
        consumers: None,
    };
    let consumer = ClientError::consumer;
    if let Some(c) = group_offsets(kind) {
        return Some(c);
    }
    Some(match kind {
        Kind::CrcMismatch | Kind::InvalidBatch => consumer(
            "KafkaException",
            "CompletedFetch.maybeEnsureValid (check.crcs=true, the default) turns the batch's CorruptRecordException into a KafkaException (\"Record batch … is invalid\"): not retriable, poll fails at that offset until the application seeks past it",
        ),
        Kind::RemoteSegmentCorrupt => consumer(
            "KafkaException",
            "CompletedFetch.maybeEnsureValid (check.crcs=true, the default) rejects the batch served from the remote tier (\"Record batch … is invalid\") on every poll: not retriable, the consumer stays at that offset until the application seeks past it",
        ),
        Kind::ProducerEpochRegression => producer(
            "InvalidProducerEpochException",
            ProducerAbortable,
            "KIP-691: abortable (2.7+, KIP-588; ProducerFencedException and fatal before): abort the transaction and retry",
        ),
        Kind::ZombieWrite => ClientError {
            consumers: Some(STALL),
            ..producer(
                "InvalidProducerEpochException / ProducerFencedException",
                ApplicationRecoverable,
                "its produce gets INVALID_PRODUCER_EPOCH (abortable, KIP-691), but the abort's EndTxn (or the next AddPartitionsToTxn) gets PRODUCER_FENCED, which TransactionManager makes fatal: the application closes the producer and creates a new one; the leader accepted its write instead (the rule's own text, for a TV2 producer one epoch below an ABORT, adds the timeout abort: its abort is answered as a retry, TransactionCoordinator.endTransaction's retryOnEpochBump, and it goes on)",
            )
        },
        Kind::InvalidFirstSequence | Kind::SequenceGap => producer(
            "OutOfOrderSequenceException",
            Ungrouped,
            "KIP-691: abortable inside a transaction; an idempotent producer bumps its epoch (KIP-360) and goes on",
        ),
        Kind::DuplicateSequence => ClientError {
            consumers: Some("consumers read the records twice"),
            ..producer(
                "none",
                ProducerRetriable,
                "a leader holding the producer's state answers an exact duplicate of one of its last 5 batches with the original offsets and no error (findDuplicateBatch); this copy appended it again",
            )
        },
        Kind::InvalidProducerFields => producer(
            "InvalidRecordException",
            ProducerAbortable,
            "KIP-691: non-retriable produce error, abortable inside a transaction",
        ),
        Kind::HangingTransaction | Kind::LsoBelowLogStart => ClientError {
            who: "consumer",
            exception: "none",
            class: NotAProducerError,
            behaviour: "the producer has moved on or is gone",
            consumers: Some(STALL),
        },
        Kind::OpenTransaction => ClientError {
            who: "consumer",
            exception: "none",
            class: NotAProducerError,
            behaviour: "normal while the producer is active",
            consumers: Some(
                "read_committed consumers wait at the last stable offset until the marker",
            ),
        },
        Kind::NonTransactionalWriteInTransaction => producer(
            "InvalidTxnStateException",
            ProducerAbortable,
            "the send fails: an idempotent producer bumps its epoch and goes on, a transactional one aborts (TransactionManager.maybeTransitionToErrorState: INVALID_TXN_STATE is fatal only on AddPartitionsToTxn and EndTxn responses)",
        ),
        Kind::TxnindexMismatch => ClientError {
            who: "consumer",
            exception: "none",
            class: NotAProducerError,
            behaviour: "no exception",
            consumers: Some(
                "read_committed consumers deliver the records of aborted transactions missing from the .txnindex as if committed",
            ),
        },
        Kind::DuplicateLogDirectories
        | Kind::ReservedDirectoryId
        | Kind::MetaPropertiesIncomplete
        | Kind::MetaPropertiesMissing
        | Kind::DuplicateDirectoryId
        | Kind::InconsistentBrokerMetadata
        | Kind::UnexpectedMetadataLogDir
        | Kind::RemoteIndexCacheCorrupt => broker_does_not_start(),
        Kind::ReplicaDivergence => ClientError {
            who: "consumer",
            exception: "none",
            class: NotAProducerError,
            behaviour: "no exception",
            consumers: Some(
                "consumers fetching from different replicas (after a leader change) read different records at the same offsets, or records that the truncated replica no longer holds",
            ),
        },
        Kind::CommittedOffsetBeyondLogEnd => consumer(
            "LogTruncationException / OffsetOutOfRangeException",
            "with a committed leader epoch the consumer's validation moves it back to the epoch's end (LogTruncationException without a reset policy); without one auto.offset.reset decides, and once the log end passes the commit the records between are skipped",
        ),
        Kind::CommittedOffsetBelowLogStart => consumer(
            "OffsetOutOfRangeException",
            "the fetch is out of range: auto.offset.reset resets the position (none: the exception); the deleted records are lost for the group",
        ),
        Kind::RemoteMetadataConsumerStopped => consumer(
            "OffsetOutOfRangeException",
            "on a broker hosting the record's partition, fetches of offsets only in remote segments copied after the record fail (no segment is known for them there); consumers reset per auto.offset.reset",
        ),
        Kind::TransactionReopenedAtRecovery => ClientError {
            who: "consumer",
            exception: "none",
            class: NotAProducerError,
            behaviour: "no exception",
            consumers: Some(
                "if the restarted copy leads, read_committed consumers stall silently at the reopened transaction's first offset (no exception; lag grows)",
            ),
        },
        Kind::CommittedLeaderEpochUnknown => consumer(
            "LogTruncationException (no reset policy)",
            "the position is validated against the leader's epochs: reset by auto.offset.reset, or moved back to the mapped epoch's end when truncation is detected",
        ),
        Kind::CommittedOffsetTopicIdMismatch => consumer(
            "none",
            "a consumer fetching its offsets by topic id (OffsetFetch v10+) gets none and starts per auto.offset.reset; one fetching by name gets the other incarnation's offset and reads from there (out of range: auto.offset.reset; in range: records before it skipped, or read again)",
        ),
        Kind::CommittedOffsetPastEpochEnd => consumer(
            "LogTruncationException with the epoch's end as divergent offset (no reset policy)",
            "truncation is detected when the position is validated: with auto.offset.reset set the consumer moves back to the epoch's end and reads the records there again",
        ),
        _ => return None,
    })
}

/// What clients meet when a broker's log dirs stop its start (the log dirs' findings of
/// `cluster::duplicates` and `verify::brokers`).
fn broker_does_not_start() -> ClientError {
    ClientError {
        who: "producer and consumer",
        exception: "none from this broker (it does not start)",
        class: ErrorClass::NotAProducerError,
        behaviour: "the broker stays down: clients go to the partitions' other replicas; a partition whose only in-sync replica it was stays offline (NotLeaderOrFollowerException / timeouts, retried until a leader is back)",
        consumers: Some(
            "consumers of a partition left without a leader wait (no records, no exception beyond retried fetch errors) until it has one",
        ),
    }
}

/// Fill `client_error` from the table where a rule left it empty.
pub fn fill(findings: &mut [Finding]) {
    for f in findings.iter_mut() {
        if f.client_error.is_none()
            && let Some(c) = for_kind(f.kind)
        {
            f.client_error = Some(c.text());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_only_empty_client_errors() {
        let mut fs = vec![
            Finding::new(Kind::HangingTransaction, "t", 0, "open"),
            Finding::new(Kind::SequenceGap, "t", 0, "gap").client_error("rule's own text"),
            Finding::new(Kind::LeftoverFile, "t", 0, "a .deleted file"),
        ];
        fill(&mut fs);
        assert!(
            fs[0]
                .client_error
                .as_deref()
                .unwrap()
                .contains("read_committed consumers stall")
        );
        assert_eq!(fs[1].client_error.as_deref(), Some("rule's own text"));
        assert_eq!(
            fs[2].client_error, None,
            "no client observes a leftover file"
        );
    }

    #[test]
    fn docs_show_the_mapping_of_every_kind() {
        let doc = include_str!("../../docs/findings.md");
        let section = &doc[doc.find("## What the clients saw").expect("section")..];
        for &k in Kind::ALL {
            let Some(c) = for_kind(k) else { continue };
            let row = section
                .lines()
                .find(|l| l.starts_with('|') && l.contains(&format!("`{}`", k.id())))
                .unwrap_or_else(|| panic!("{} missing from docs/findings.md", k.id()));
            let first = c.exception.split(" / ").next().unwrap();
            assert!(row.contains(first), "{}: {row}", k.id());
            assert!(row.contains(c.class.as_str()), "{}: {row}", k.id());
        }
    }

    #[test]
    fn every_kind_is_documented() {
        let doc = include_str!("../../docs/findings.md");
        for &k in Kind::ALL {
            assert!(
                doc.contains(&format!("`{}`", k.id())),
                "{} not in docs/findings.md",
                k.id()
            );
        }
    }

    #[test]
    fn producer_kinds_carry_a_kip_1050_class() {
        for k in [
            Kind::ProducerEpochRegression,
            Kind::ZombieWrite,
            Kind::SequenceGap,
            Kind::NonTransactionalWriteInTransaction,
        ] {
            let c = for_kind(k).unwrap();
            assert_eq!(c.who, "producer");
            assert!(c.text().contains(c.class.as_str()));
        }
        // INVALID_TXN_STATE on a produce is not fatal (TransactionManager makes it fatal on
        // AddPartitionsToTxn and EndTxn responses only).
        assert_eq!(
            for_kind(Kind::NonTransactionalWriteInTransaction)
                .unwrap()
                .class,
            ErrorClass::ProducerAbortable
        );
        // A zombie's produce is refused with INVALID_PRODUCER_EPOCH (abortable), but its
        // next AddPartitionsToTxn or EndTxn gets PRODUCER_FENCED, which TransactionManager
        // makes fatal: it ends application-recoverable. A regression alone stays abortable.
        assert_eq!(
            for_kind(Kind::ZombieWrite).unwrap().class,
            ErrorClass::ApplicationRecoverable
        );
        assert_eq!(
            for_kind(Kind::ProducerEpochRegression).unwrap().class,
            ErrorClass::ProducerAbortable
        );
        // A producer finding is about a write the leader accepted: never "producers got".
        let s = for_kind(Kind::ZombieWrite).unwrap().short();
        assert!(
            s.ends_with(
                "refuses with InvalidProducerEpochException; the producer then meets ProducerFencedException (application-recoverable)"
            ),
            "{s}"
        );
        assert!(
            s.starts_with("producer writes accepted that a leader"),
            "{s}"
        );
        assert!(!s.contains("producers got"), "{s}");
        // Consumers of a damaged batch get a KafkaException (CompletedFetch), not retriable.
        let c = for_kind(Kind::CrcMismatch).unwrap();
        assert_eq!(c.exception, "KafkaException");
        assert!(!c.text().contains("(retriable)"), "{}", c.text());
        assert!(for_kind(Kind::UncleanShutdown).is_none());
    }
}
