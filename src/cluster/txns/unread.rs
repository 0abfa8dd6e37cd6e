//! The join's verdicts that rest on what a coordinator log does *not* hold — no later
//! record of a transaction (`transaction_stuck_in_prepare`, a Prepare* at an exhausted
//! epoch with no Complete yet), no record listing a partition
//! (`transaction_partition_unlisted`), no record between two values of an id
//! (`producer_fenced_on_retry_after_failover`), no record of the transaction at all (the
//! `marker_order` grouping) — are confirmed only when the batches of that log that could
//! hold such a record were all read ([`CoordModel::records_not_read`]: a batch over
//! 64 MiB, one that does not decompress or parse, a segment that could not be read).
//! Otherwise the finding says `unconfirmed:` and why, an error becomes a warning, and the
//! evidence carries `confirmed: false`, `unconfirmed_reason` and `records_not_read` — as the
//! coordinator's own verdicts do (`evidence.coordinator` of `hanging_transaction`).

use super::Joined;
use super::TRANSACTION_STATE_TOPIC;
use super::input::UnreadBatch;
use crate::cluster::coordinator::model::CoordModel;
use crate::finding::{Finding, Severity};
use serde_json::{Value, json};

/// Unread batches, each with its log.
pub type Unread<'a> = Vec<(&'a CoordModel, &'a UnreadBatch)>;

/// The unread batches of `log` that `may_hold` accepts.
pub fn of_log<'a>(log: &'a CoordModel, may_hold: impl Fn(&UnreadBatch) -> bool) -> Unread<'a> {
    log.records_not_read
        .iter()
        .filter(|u| may_hold(u))
        .map(|u| (log, u))
        .collect()
}

/// Every unread batch of the coordinator logs `logs` (indices into `inputs`).
pub fn of_logs<'a>(inputs: &'a Joined<'a>, logs: &[usize]) -> Unread<'a> {
    logs.iter()
        .filter_map(|&i| inputs.coordinator.get(i))
        .flat_map(|log| of_log(log, |_| true))
        .collect()
}

/// Settle a verdict that rests on the absence of `what` in the coordinator's log:
/// `confirmed: true` when no batch in `unread` could hold it, else [`qualify`].
pub fn settle(f: &mut Finding, unread: &Unread<'_>, what: &str) {
    if unread.is_empty() {
        insert(f, "confirmed", json!(true));
    } else {
        qualify(f, unread, what);
    }
}

/// Mark `f` unconfirmed because `unread` (not empty) may hold `what`: the message says
/// so, an error becomes a warning, the evidence carries `confirmed: false`,
/// `unconfirmed_reason` and `records_not_read`.
pub fn qualify(f: &mut Finding, unread: &Unread<'_>, what: &str) {
    let Some((log, first)) = unread.first() else {
        return;
    };
    let mut partitions: Vec<i32> = unread.iter().map(|(l, _)| l.partition).collect();
    partitions.sort_unstable();
    partitions.dedup();
    let why = format!(
        "{} batch(es) of {TRANSACTION_STATE_TOPIC}-{} not read (first: {}: {}); {what} may be among them",
        unread.len(),
        log.partition,
        first.segment,
        first.reason
    );
    if f.severity == Severity::Error {
        f.severity = Severity::Warning;
    }
    f.message.push_str(&format!(" (unconfirmed: {why})"));
    insert(f, "confirmed", json!(false));
    insert(f, "unconfirmed_reason", json!(why));
    insert(
        f,
        "records_not_read",
        json!({
            "batches": unread.len(),
            "partitions": partitions,
            "first": {
                "partition": log.partition,
                "path": log.origin.path,
                "segment": first.segment,
                "reason": first.reason,
                "first_offset": first.offsets.map(|o| o.0),
                "last_offset": first.offsets.map(|o| o.1),
            },
        }),
    );
}

fn insert(f: &mut Finding, key: &str, v: Value) {
    if let Value::Object(m) = &mut f.evidence {
        m.insert(key.into(), v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::txns::input::{CoordinatorLog, Origin};
    use crate::finding::Kind;

    fn log(unread: Vec<UnreadBatch>) -> CoordinatorLog {
        let origin = Origin {
            path: "/d/__transaction_state-4".into(),
            live: true,
            ..Origin::default()
        };
        CoordinatorLog {
            records_not_read: unread,
            ..CoordinatorLog::of_records(4, origin, Vec::new())
        }
    }

    fn model(unread: Vec<UnreadBatch>) -> CoordModel {
        CoordModel::of(&log(unread), None)
    }

    fn batch(offsets: Option<(i64, i64)>) -> UnreadBatch {
        UnreadBatch {
            segment: "00000000000000000000.log".into(),
            reason: "too large".into(),
            offsets,
        }
    }

    #[test]
    fn localised_by_offsets_unknown_everywhere() {
        let b = batch(Some((10, 12)));
        assert!(b.may_follow(11) && !b.may_follow(12));
        assert!(b.may_lie_between(9, 11) && b.may_lie_between(11, 20));
        assert!(!b.may_lie_between(12, 20) && !b.may_lie_between(0, 10));
        let any = batch(None);
        assert!(any.may_follow(i64::MAX) && any.may_lie_between(5, 6));
    }

    #[test]
    fn settle_confirms_or_qualifies() {
        let l = model(vec![batch(Some((10, 12))), batch(None)]);
        let mut f = Finding::new(Kind::TransactionStuckInPrepare, "t", 4, "m");
        settle(
            &mut f,
            &of_log(&l, |u| u.may_follow(20)),
            "its Complete record",
        );
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.evidence["confirmed"], false);
        assert_eq!(f.evidence["records_not_read"]["batches"], 1);
        assert!(f.evidence["records_not_read"]["first"]["first_offset"].is_null());
        assert!(
            f.message
                .contains("(unconfirmed: 1 batch(es) of __transaction_state-4")
        );
        let mut g = Finding::new(Kind::TransactionStuckInPrepare, "t", 4, "m");
        settle(
            &mut g,
            &of_log(&l, |u| u.offsets.is_some() && u.may_follow(20)),
            "x",
        );
        assert_eq!(g.evidence["confirmed"], true);
        assert_eq!((g.severity, g.message.as_str()), (Severity::Error, "m"));
        assert!(g.evidence.get("records_not_read").is_none());
    }
}
