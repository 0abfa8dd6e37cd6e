//! A marker at its data's epoch that the coordinator's record shows a transaction version
//! 0/1 EndTxn wrote: the partition's `marker_epoch_not_bumped` lowered to info.
//!
//! The partition's replay infers a producer's transaction version from its markers
//! (`partition::state::marker`): after a COMMIT one epoch above its data the producer is
//! taken for TV2, and a marker at its data's epoch is then `marker_epoch_not_bumped`
//! (warning: a delayed marker closing the wrong transaction, or a downgrade). The version is
//! the transaction's, not the producer's: each EndTxn carries its client's own
//! (`TransactionCoordinator.endTransaction` takes it from the request), and only a TV2
//! EndTxn bumps the epoch (`TransactionMetadata.prepareAbortOrCommit` with
//! `supportsEpochBump`; `TransactionCoordinatorTest.shouldReturnWhenTransactionVersionDowngraded`:
//! after a TV2 transaction, the downgraded client's EndTxns keep the epoch). The
//! coordinator writes that version into the transaction's Prepare* and Complete* values
//! (`ClientTransactionVersion`, v1 values). A leader accepts such a marker: before 4.2
//! `ProducerAppendInfo.checkProducerEpoch` refuses only an epoch below the producer's; from
//! 4.2 (KIP-1228) the coordinator sends each marker with the transaction's own version
//! (`WriteTxnMarkersRequest` v2's `TransactionVersion`, from the transaction's metadata),
//! and the strict check (an epoch above the producer's) is for version 2 only.
//!
//! So when the join matched the marker to a coordinator transaction of the same outcome and
//! end epoch whose end value records `ClientTransactionVersion` 0 or 1
//! ([`CoordTxn::end_version`]), the marker is that EndTxn's, written by Kafka's rule for its
//! version, whatever the producer's earlier transactions did: the finding becomes an info
//! naming the coordinator's record. Without that record (no coordinator log, a v0 value that
//! records no version) the partition's verdict stands.

use super::group::{Group, Parts, rec};
use crate::cluster::coordinator::model::CoordTxn;
use crate::finding::{Finding, Kind, Severity};
use crate::partition::state::txnrec::TxnEnd;
use serde_json::{Value, json};
use std::sync::Arc;

const BROKER_TV01: &str = "accepted: the coordinator wrote this marker for a transaction version 0/1 EndTxn, which keeps the producer's epoch; a leader refuses only a marker below the producer's epoch (ProducerAppendInfo.checkProducerEpoch), and from 4.2 (KIP-1228) the coordinator sends the marker with the transaction's own version, whose check is the same";

/// A marker of a transaction whose coordinator record gives a TV0/1 EndTxn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tv01Marker {
    /// Index of its partition in the join's inputs.
    pub input: usize,
    pub marker_offset: i64,
    pub producer_id: i64,
    pub transactional_id: Arc<str>,
    /// `__transaction_state-N`.
    pub log_partition: i32,
    /// Offset of the Prepare* value (of the Complete* value when only that is known).
    pub record_offset: i64,
    pub end_epoch: i16,
    pub client_transaction_version: i16,
}

/// The markers of group `g` (matched to a coordinator transaction of `coord`) that its
/// coordinator record shows a TV0/1 EndTxn wrote, at their transaction's data epoch.
pub fn of_group(p: Parts<'_>, g: &Group, coord: &[CoordTxn], out: &mut Vec<Tv01Marker>) {
    let Some(c) = g.coord.and_then(|i| coord.get(i)) else {
        return;
    };
    let (Some(v), Some(end), Some(commit)) = (c.end_version, c.end_epoch, c.commit) else {
        return;
    };
    if v >= 2 {
        return;
    }
    for &m in g.members.iter() {
        let r = rec(p, m);
        let outcome = if commit {
            TxnEnd::Commit
        } else {
            TxnEnd::Abort
        };
        if r.is_empty() || r.end != outcome || r.marker_epoch != end || !c.has_pid(r.producer_id) {
            continue;
        }
        if r.marker_epoch > r.producer_epoch {
            continue; // bumped: nothing to lower
        }
        out.push(Tv01Marker {
            input: m.input,
            marker_offset: r.marker_offset,
            producer_id: r.producer_id,
            transactional_id: c.transactional_id.clone(),
            log_partition: c.log_partition,
            record_offset: c.prepare_offset.unwrap_or(c.last_record_offset),
            end_epoch: end,
            client_transaction_version: v,
        });
    }
}

/// Whether `f` is the partition's `marker_epoch_not_bumped` at `m`'s marker.
pub fn is_finding_of(f: &Finding, m: &Tv01Marker) -> bool {
    f.kind == Kind::MarkerEpochNotBumped
        && f.offset == Some(m.marker_offset)
        && f.producer_id == Some(m.producer_id)
}

/// Lower `f`, the `marker_epoch_not_bumped` at `m`'s marker, to an info naming the
/// coordinator's record (once).
pub fn lower(f: &mut Finding, m: &Tv01Marker) {
    let Value::Object(ev) = &mut f.evidence else {
        return;
    };
    if ev.contains_key("coordinator_transaction") {
        return;
    }
    ev.insert(
        "coordinator_transaction".into(),
        json!({
            "transactional_id": &*m.transactional_id,
            "log_partition": m.log_partition,
            "offset": m.record_offset,
            "end_epoch": m.end_epoch,
            "client_transaction_version": m.client_transaction_version,
        }),
    );
    f.message.push_str(&format!(
        "; but the coordinator's record of this transaction (transactional id {}, {}-{} offset {}) gives its EndTxn ClientTransactionVersion {}: a transaction version 0/1 EndTxn (the transaction.version feature downgraded, or the client went back to TV0/1), which keeps the epoch (TransactionMetadata.prepareAbortOrCommit bumps only under TV2): a marker at the data's epoch is what that EndTxn writes",
        m.transactional_id,
        super::TRANSACTION_STATE_TOPIC,
        m.log_partition,
        m.record_offset,
        m.client_transaction_version
    ));
    f.severity = Severity::Info;
    f.broker_behaviour = BROKER_TV01.to_string();
    f.remediation = Some(
        "none: a transaction version 0/1 transaction's markers carry its data's epoch; if the downgrade was not intended, check the cluster's transaction.version feature and the producer's client version".to_string(),
    );
}
