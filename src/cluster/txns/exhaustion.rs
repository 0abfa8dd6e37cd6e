//! Epoch exhaustion in the coordinator's log (`TransactionMetadata.isProducerEpochExhausted`): the shapes of
//! KAFKA-20310, KAFKA-20090 and KAFKA-20357 in `__transaction_state`, per transactional id
//! in offset order.
//!
//! Kafka's rules (`TransactionMetadata`, `TransactionLog.valueToBytes`):
//! * an epoch is exhausted at `Short.MAX_VALUE − 1` (32766); the client is never handed
//!   32767 (`isProducerEpochExhausted`), so the coordinator can always fence it;
//! * TV2 EndTxn on an exhausted epoch allocates a next producer id: the Prepare* record
//!   carries the bumped epoch (32767) and `NextProducerId`, and `prepareComplete` switches
//!   the Complete* record to that id at epoch 0 — only if the next producer id is known;
//!   every transition records the id it leaves as `PreviousProducerId`;
//! * InitProducerId on an exhausted epoch rotates to a new id at epoch 0 (Empty record,
//!   `prepareProducerIdRotation`); a retry of it is recognised by `PreviousProducerId` and
//!   `lastProducerEpoch`.
//!
//! Before KAFKA-20310 (2026) `PreviousProducerId`/`NextProducerId` were never written (they
//! read back as -1), so a coordinator failover between Prepare* and Complete* lost the
//! rotation: Complete* keeps the old id at 32767. KAFKA-20090: an epoch-fence abort (timeout
//! at 32766) skipped the allocation altogether. KAFKA-20357: `lastProducerEpoch` was not
//! persisted either (its field is not in the schema files klogscan knows, so it is never
//! read here).

use super::input::CoordValue;
use super::{Joined, Placed, TRANSACTION_STATE_TOPIC, Target, unread};
use crate::finding::{Finding, Kind, Severity};
use crate::read::format::txnlog::TxnState;
use serde_json::json;

/// `Short.MAX_VALUE − 1`: an exhausted epoch (the coordinator history's one constant).
pub use crate::cluster::coordinator::history::EXHAUSTED_EPOCH as EXHAUSTED;

const BROKER_STUCK: &str = "the coordinator cannot bump an epoch of 32767 (the TV2 EndTxn bump would overflow): the producer's next transaction cannot complete normally, and only a new InitProducerId (which rotates the producer id) gets it going; brokers before KAFKA-20090 threw on such an abort, later ones log an error and let it through";
const BROKER_FENCED: &str = "after a coordinator failover the new coordinator rebuilds the transactional id from this record; a client retrying the InitProducerId that rotated its producer id is recognised only through PreviousProducerId and lastProducerEpoch: without them the retry is answered PRODUCER_FENCED";

/// What the client of a producer left at 32767 meets: see [`stuck`].
const CLIENT_STUCK: &str = "KafkaException (\"Unhandled error in EndTxnResponse\", UNKNOWN_SERVER_ERROR), fatal: the epoch 32767 is the coordinator's own, so the next transaction's writes are accepted, but its commit or abort fails — the coordinator's epoch bump overflows (TransactionMetadata.prepareAbortOrCommit, IllegalArgumentException) on brokers up to KAFKA-20090's fix, which rotate the producer id instead (no error); application-recoverable — close the producer and create a new one (InitProducerId rotates the producer id)";

/// The EndTxn rotation's retry: `TransactionCoordinator.endTransaction` checks the producer
/// id first, and without PreviousProducerId the retry's old id is not the overflow retry
/// (`retryOnOverflow`), so it is answered INVALID_PRODUCER_ID_MAPPING.
const BROKER_END_TXN: &str = "after a coordinator failover the new coordinator rebuilds the transactional id from this record; a client retrying the EndTxn that rotated its producer id is recognised only through PreviousProducerId (TransactionCoordinator.endTransaction's retryOnOverflow): without it the retry's producer id does not match and it is answered INVALID_PRODUCER_ID_MAPPING";

fn value_json(v: &CoordValue) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or_default()
}

/// How a [`Hit`]'s verdict rests on what the coordinator's log does not hold.
#[derive(Debug, Clone, PartialEq)]
pub enum Settle {
    /// It does not: the value alone shows it.
    None,
    /// No value of the id between the one at this offset and the hit's.
    Between(i64),
    /// No later record of the id.
    Follows,
    /// Holds only while the value is still its id's latest: the replay drops it at the
    /// id's next value or tombstone ([`superseded`]), else it is settled as [`Settle::Follows`].
    Latest,
    /// Dropped: a later value of the id followed it (the replay removes it).
    Superseded,
}

/// One exhaustion shape of a coordinator log, found by its replay
/// ([`crate::cluster::coordinator::model`]); [`check`] settles and places it.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub offset: i64,
    pub finding: Finding,
    pub settle: Settle,
}

/// The shapes of value `v` of `id` at `offset`, after `prev` (the id's previous value and
/// its offset; a tombstone clears it), in record order. Returns the index in `out` of a hit
/// that holds only while `v` stays the id's latest value ([`Settle::Latest`]): the caller
/// passes it to [`superseded`] at the id's next value or tombstone.
pub fn on_value(
    id: &str,
    offset: i64,
    v: &CoordValue,
    prev: Option<(i64, &CoordValue)>,
    out: &mut Vec<Hit>,
) -> Option<usize> {
    let p = prev.map(|(_, p)| p);
    if let Some((po, p)) = prev
        && v.state == TxnState::Ongoing
        && (v.producer_id, v.producer_epoch) == (p.producer_id, p.producer_epoch)
    {
        // A transaction at exactly the producer id and epoch the rotation handed out: the
        // client received the answer of the rotating request, so no retry of it follows (a
        // client whose retry was refused comes back through InitProducerId, one epoch up).
        if let Some(h) = out
            .iter_mut()
            .rev()
            .find(|h| h.offset == po && h.finding.kind == Kind::ProducerFencedOnRetryAfterFailover)
        {
            h.settle = Settle::Superseded;
        }
    }
    let mut latest = None;
    if let Some(finding) = stuck(id, v, p) {
        // A Complete* at 32767 is only a stuck producer while nothing follows it: the
        // InitProducerId retry of an epoch-fence abort finds it exhausted and rotates
        // (`TransactionMetadata.prepareProducerIdRotation`, Empty of a new producer id at
        // epoch 0; TransactionCoordinatorTest.shouldNotCauseEpochOverflowWhenInitPidDuringOngoingTxnV2),
        // and no client was ever handed 32767. Ongoing/Empty at 32767 show a client holding
        // it whatever follows.
        let complete = matches!(v.state, TxnState::CompleteCommit | TxnState::CompleteAbort);
        if complete {
            latest = Some(out.len());
        }
        out.push(Hit {
            offset,
            finding,
            settle: if complete {
                Settle::Latest
            } else {
                Settle::None
            },
        });
    }
    if let Some(finding) = fenced_on_retry(id, v, p) {
        // The rotation is read from two consecutive values of the id: a batch not read
        // between them may hold the value that recorded it.
        let after = prev.map_or(i64::MIN, |(o, _)| o);
        out.push(Hit {
            offset,
            finding,
            settle: Settle::Between(after),
        });
    }
    latest
}

/// The id of hit `pending` (an index [`on_value`] returned) has a later value or a
/// tombstone: the hit no longer describes the id's latest value and is dropped.
pub fn superseded(out: &mut [Hit], pending: Option<usize>) {
    if let Some(h) = pending.and_then(|i| out.get_mut(i)) {
        h.settle = Settle::Superseded;
    }
}

/// Forget the stuck producers of `out` (a copy a Kafka 4.3+ coordinator loads, which
/// rotates the producer id of an exhausted epoch at the next EndTxn without overflowing it:
/// `producer_stuck_at_exhausted_epoch` is a verdict on earlier releases only).
pub fn drop_stuck(out: &mut Vec<Hit>) {
    out.retain(|h| h.finding.kind != Kind::ProducerStuckAtExhaustedEpoch);
}

/// The latest value `v` of `id` (at `offset`) when it is a TV2 Prepare* at epoch 32767 with
/// no NextProducerId: the Complete record will leave the producer there. Called for each
/// id's latest value in offset order.
pub fn at_risk(id: &str, offset: i64, v: &CoordValue, out: &mut Vec<Hit>) {
    if !(v.version >= 1
        && v.client_transaction_version >= 2
        && matches!(v.state, TxnState::PrepareCommit | TxnState::PrepareAbort)
        && v.producer_epoch == i16::MAX
        && v.next_producer_id < 0)
    {
        return;
    }
    let finding = Finding::new(
        Kind::ProducerStuckAtExhaustedEpoch,
        TRANSACTION_STATE_TOPIC,
        -1,
        format!(
            "transactional id {id}: {} at epoch 32767 with no NextProducerId and no Complete record yet: unless the coordinator still holds the next producer id in memory, the Complete record will leave producer {} at epoch 32767 (a failover now loses it: KAFKA-20310; an epoch-fence abort never allocated one: KAFKA-20090)",
            v.state, v.producer_id
        ),
    )
    .severity(Severity::Warning)
    .offset(offset)
    .producer(v.producer_id, v.producer_epoch)
    .evidence(json!({"transactional_id": id, "shape": "prepare_without_next_producer_id", "value": value_json(v)}))
    .broker(BROKER_STUCK)
    .remediation(format!("watch {}: if it completes at epoch 32767, restart the producer (InitProducerId rotates the producer id); upgrade the brokers past KAFKA-20310 and KAFKA-20090", crate::partition::state::text::describe_command(id)));
    out.push(Hit {
        offset,
        finding,
        settle: Settle::Follows,
    });
}

/// The exhaustion findings of every coordinator model of `logs` (indices into `inputs`),
/// each settled against the batches of its log that were not read.
pub fn check(inputs: &Joined<'_>, logs: &[usize]) -> Vec<Placed> {
    let mut out = Vec::new();
    for &li in logs {
        let log = &inputs.coordinator[li];
        for h in &log.exhaustion {
            let mut f = h.finding.clone();
            match h.settle {
                Settle::None => {}
                Settle::Between(after) => unread::settle(
                    &mut f,
                    &unread::of_log(log, |u| u.may_lie_between(after, h.offset)),
                    "a value of the id between these two",
                ),
                // "No Complete record yet" / "still the latest value": a batch not read
                // past it may hold a later record of the id.
                Settle::Follows | Settle::Latest => unread::settle(
                    &mut f,
                    &unread::of_log(log, |u| u.may_follow(h.offset)),
                    "a later record of the id",
                ),
                Settle::Superseded => continue,
            }
            out.push(place(li, log.partition, h.offset, f));
        }
    }
    out
}

fn place(log: usize, partition: i32, offset: i64, mut f: Finding) -> Placed {
    f.partition = partition;
    f.offset = Some(offset);
    Placed {
        target: Target::Coordinator(log),
        finding: f,
        causes_hanging: Vec::new(),
    }
}

/// A TV2 value that leaves the client at epoch 32767: a Complete* that kept the producer id
/// of a Prepare* at 32767 (the rotation was lost; [`on_value`] holds it only while it is the
/// id's latest value), or Ongoing/Empty at 32767.
fn stuck(id: &str, v: &CoordValue, p: Option<&CoordValue>) -> Option<Finding> {
    if v.version < 1 || v.client_transaction_version < 2 || v.producer_epoch != i16::MAX {
        return None;
    }
    let complete = matches!(v.state, TxnState::CompleteCommit | TxnState::CompleteAbort);
    let held = matches!(v.state, TxnState::Ongoing | TxnState::Empty);
    let (shape, why) = if complete {
        let prep = p.filter(|p| {
            matches!(p.state, TxnState::PrepareCommit | TxnState::PrepareAbort)
                && p.producer_id == v.producer_id
        });
        let why = match prep {
            Some(p) if p.next_producer_id < 0 => "its Prepare record carries no NextProducerId (-1): lost in a coordinator failover (KAFKA-20310) or never allocated by an epoch-fence abort (KAFKA-20090)".to_string(),
            Some(p) => format!(
                "its Prepare record named NextProducerId {} but the Complete record did not switch to it",
                p.next_producer_id
            ),
            None => "the rotation to a next producer id did not happen".to_string(),
        };
        ("complete_without_rotation", why)
    } else if held {
        (
            "client_holds_max_epoch",
            "the coordinator never hands out epoch 32767 (KAFKA-20090 class)".to_string(),
        )
    } else {
        return None;
    };
    Some(
        Finding::new(
            Kind::ProducerStuckAtExhaustedEpoch,
            TRANSACTION_STATE_TOPIC,
            -1,
            format!(
                "transactional id {id}: {} leaves producer {} at epoch 32767: {why}; its next transaction cannot complete normally",
                v.state, v.producer_id
            ),
        )
        .producer(v.producer_id, v.producer_epoch)
        .evidence(json!({
            "transactional_id": id,
            "shape": shape,
            "value": value_json(v),
            "previous": p.map(value_json),
        }))
        .broker(BROKER_STUCK)
        // The epoch is the coordinator's own, so nothing fences it: the next transaction's
        // data and AddPartitionsToTxn at 32767 pass; its EndTxn allocates a next producer id
        // and `TransactionMetadata.prepareAbortOrCommit` bumps 32767 to -32768, which
        // `prepareTransitionTo` refuses (IllegalArgumentException → UNKNOWN_SERVER_ERROR);
        // `TransactionManager.EndTxnHandler` has no case for it (fatal). KAFKA-20090's fix
        // rotates the producer id there instead.
        .client_error(CLIENT_STUCK)
        .remediation(format!(
            "restart the producer of {id} (InitProducerId rotates the producer id); upgrade the brokers past KAFKA-20310 and KAFKA-20090"
        )),
    )
}

/// A rotation to a new producer id (epoch 0 after an exhausted epoch) whose record does not
/// say which id it left (`PreviousProducerId` -1).
fn fenced_on_retry(id: &str, v: &CoordValue, p: Option<&CoordValue>) -> Option<Finding> {
    let p = p?;
    if v.version < 1
        || v.producer_id == p.producer_id
        || p.producer_epoch < EXHAUSTED
        || v.producer_epoch != 0
        || v.previous_producer_id >= 0
        || !matches!(
            v.state,
            TxnState::Empty | TxnState::CompleteCommit | TxnState::CompleteAbort
        )
    {
        return None;
    }
    let init = v.state == TxnState::Empty;
    Some(
        Finding::new(
            Kind::ProducerFencedOnRetryAfterFailover,
            TRANSACTION_STATE_TOPIC,
            -1,
            format!(
                "transactional id {id}: {} rotated producer {} (epoch {}) to producer {} without recording PreviousProducerId (-1, KAFKA-20310){}: a client retrying its {} across a coordinator failover is answered {}",
                v.state,
                p.producer_id,
                p.producer_epoch,
                v.producer_id,
                if init { "; lastProducerEpoch is not persisted either before KAFKA-20357" } else { "" },
                if init { "InitProducerId" } else { "EndTxn" },
                if init { "PRODUCER_FENCED" } else { "INVALID_PRODUCER_ID_MAPPING" }
            ),
        )
        .producer(v.producer_id, v.producer_epoch)
        .evidence(json!({
            "transactional_id": id,
            "rotation": if init { "init_producer_id" } else { "end_txn" },
            "previous_producer_id_recorded": false,
            "value": value_json(v),
            "previous": value_json(p),
        }))
        .broker(if init { BROKER_FENCED } else { BROKER_END_TXN })
        .client_error(if init {
            "ProducerFencedException (PRODUCER_FENCED, fatal: the producer must be closed and re-created)"
        } else {
            // A rotation in a Complete record is TV2 (EndTxn v5+), which only 4.0+ clients
            // speak, and since KAFKA-18019 (4.0) `TransactionManager.EndTxnHandler` makes
            // INVALID_PRODUCER_ID_MAPPING fatal (TransactionManagerTest.
            // testFatalErrorWhenProduceResponseWithInvalidPidMapping); the 3.x clients that
            // took it as abortable never use TV2.
            "InvalidPidMappingException (INVALID_PRODUCER_ID_MAPPING): fatal in the 4.0+ clients that use TV2 (TransactionManager.EndTxnHandler, KAFKA-18019): application-recoverable — close the producer and create a new one (its InitProducerId starts from the id's current producer id)"
        })
        .remediation(if init {
            format!(
                "if the producer of {id} died with ProducerFencedException around this record, re-create it; upgrade the brokers past KAFKA-20310 and KAFKA-20357"
            )
        } else {
            format!(
                "if the producer of {id} failed its commit or abort with InvalidPidMappingException around this record, abort and re-create it; upgrade the brokers past KAFKA-20310"
            )
        }),
    )
}
