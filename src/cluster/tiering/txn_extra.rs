//! `remote_txn_index_extra`: entries of a finished remote segment's transaction index that
//! end at no ABORT marker of their producer in the segment.
//!
//! `LogSegment.updateTxnIndex` appends one entry for each transaction an ABORT marker
//! completes (`ProducerAppendInfo.appendEndTxnMarker` builds the `CompletedTxn`: the
//! producer, the transaction's first offset, the marker's offset as its last), in the
//! segment holding the marker; `RemoteLogManager.copyLogSegment` uploads that index with the
//! segment. So every entry of a remote segment's index whose last offset lies in the segment
//! names an ABORT marker of its producer there. `RemoteLogManager.collectAbortedTransactions`
//! hands a remote read_committed fetch every entry overlapping the fetched range (the
//! producer and first offset); the consumer (`CompletedFetch.nextFetchedRecord`) then counts
//! that producer aborted from the first batch of its ending at or after the first offset and
//! skips its transactional batches until it reads an ABORT marker of that producer — a COMMIT
//! marker does not end it. An entry with no ABORT behind it therefore hides committed
//! records.

use super::checks::SegmentEvidence;
use super::replay::{RemoteSegment, UserPartition};
use super::txn_index::RemoteAborts;
use crate::finding::{Finding, Kind, Severity};
use crate::partition::state::txnrec::TxnEnd;
use crate::read::format::checkpoint::encode_uuid;
use crate::read::format::index::TxnIndex;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::Path;

#[derive(Serialize)]
struct Extra {
    segment: SegmentEvidence,
    file: String,
    index_entries: u64,
    /// The entries that end at no ABORT marker of their producer (at most 20).
    entries: Vec<Entry>,
    extra_count: usize,
    /// Committed transactions of those entries' producers with data in the entries'
    /// ranges: their batches from the entry's first offset on are skipped by every
    /// read_committed fetch from remote storage.
    committed_transactions_hidden: u64,
}

#[derive(Serialize)]
struct Entry {
    producer_id: i64,
    first_offset: i64,
    last_offset: i64,
    last_stable_offset: i64,
    /// What the replay read at `last_offset` for this producer: `commit` (its COMMIT
    /// marker) or `none`.
    marker_at_last_offset: &'static str,
    /// The producer's committed transactions with data in `[first_offset, last_offset]`.
    committed_transactions_hidden: u64,
}

/// `remote_txn_index_extra` for segment `s`, read whole by the replay `aborts`: the entries
/// of `index` (the object at `file`) whose last offset lies in the segment but is no ABORT
/// marker of their producer. An error when the replay read a committed transaction of such
/// a producer with data inside such an entry's range (every read_committed fetch from remote
/// storage skips its batches from the entry's first offset on), a warning otherwise (the entry then hides only what that producer
/// writes after it within the same fetch, before its next ABORT). Entries ending outside
/// the segment are not judged here: their marker, if any, is another segment's.
pub(super) fn extra(
    up: &UserPartition,
    s: &RemoteSegment,
    aborts: &RemoteAborts<'_>,
    file: &Path,
    index: &TxnIndex<'_>,
) -> Option<Finding> {
    let inside = |o: i64| (s.start_offset..=s.end_offset).contains(&o);
    let markers = |end: TxnEnd| -> HashSet<(i64, i64)> {
        (aborts.txns.iter())
            .filter(|t| t.end == end && inside(t.marker_offset))
            .map(|t| (t.producer_id, t.marker_offset))
            .collect()
    };
    let (aborted, committed) = (markers(TxnEnd::Abort), markers(TxnEnd::Commit));
    // Each producer's committed transactions with data, as (first, last data offset) by
    // first offset: one producer's transactions follow each other, so both ends ascend and
    // the ones meeting a range are counted by two binary searches (an index of a million
    // entries against many transactions stays linear-logarithmic).
    let mut by_producer: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
    for t in (aborts.txns.iter()).filter(|t| t.end == TxnEnd::Commit && !t.is_empty()) {
        (by_producer.entry(t.producer_id).or_default()).push((t.first_offset, t.last_data_offset));
    }
    for v in by_producer.values_mut() {
        v.sort_unstable();
    }
    let meeting = |producer: i64, first: i64, last: i64| -> u64 {
        let Some(v) = by_producer.get(&producer) else {
            return 0;
        };
        let upto = v.partition_point(|&(f, _)| f <= last);
        let before = v.partition_point(|&(_, l)| l < first);
        upto.saturating_sub(before) as u64
    };
    let mut entries = Vec::new();
    let mut extra_count = 0;
    let mut hidden_total = 0u64;
    for e in index.entries() {
        let at = (e.producer_id, e.last_offset);
        if !inside(e.last_offset) || aborted.contains(&at) {
            continue;
        }
        let hidden = meeting(e.producer_id, e.first_offset, e.last_offset);
        extra_count += 1;
        hidden_total += hidden;
        if entries.len() < super::corrupt::LISTED {
            entries.push(Entry {
                producer_id: e.producer_id,
                first_offset: e.first_offset,
                last_offset: e.last_offset,
                last_stable_offset: e.last_stable_offset,
                marker_at_last_offset: if committed.contains(&at) {
                    "commit"
                } else {
                    "none"
                },
                committed_transactions_hidden: hidden,
            });
        }
    }
    let first = entries.first()?;
    let msg = format!(
        "remote segment {} (offsets {}..={}) has a transaction index with {extra_count} entr{} ending at no ABORT marker of its producer (first: producer {} from offset {} to {}, where the segment holds {}){}",
        encode_uuid(&s.id),
        s.start_offset,
        s.end_offset,
        if extra_count == 1 { "y" } else { "ies" },
        first.producer_id,
        first.first_offset,
        first.last_offset,
        match first.marker_at_last_offset {
            "commit" => "its COMMIT marker",
            _ => "no marker of it",
        },
        match hidden_total {
            0 => String::new(),
            n => format!(
                ": {n} committed transaction(s) of those producers have data in those ranges, skipped as aborted"
            ),
        },
    );
    let severity = if hidden_total > 0 {
        Severity::Error
    } else {
        Severity::Warning
    };
    let at = first.last_offset;
    let evidence = Extra {
        segment: SegmentEvidence::of(s),
        file: file.display().to_string(),
        index_entries: index.len() as u64,
        entries,
        extra_count,
        committed_transactions_hidden: hidden_total,
    };
    Some(
        Finding::new(Kind::RemoteTxnIndexExtra, &up.topic, up.partition, msg)
            .severity(severity)
            .offset(at)
            .segment(file.display().to_string())
            .broker("RemoteLogManager.collectAbortedTransactions hands a remote read_committed fetch every transaction index entry overlapping the fetched range; the consumer counts the entry's producer aborted from its first offset and skips that producer's transactional batches until it reads an ABORT marker of that producer (a COMMIT marker does not end it): the producer's committed records from the entry's first offset on are skipped in fetches served from remote storage. LogSegment.updateTxnIndex appends an entry only at an ABORT marker, and RemoteLogManager.copyLogSegment uploads the local index as it was: the local index was already wrong, or the object was replaced")
            .client_error("read_committed consumer: no exception — committed records of the entries' producers are silently skipped when fetched from remote storage")
            .remediation("keep the objects and the __remote_log_metadata partitions as they are; read_committed consumers that read this range from remote storage must be checked for the committed records they skipped (the producers and ranges are in the evidence); a read_uncommitted consumer or a fetch from a replica's local log is not affected; the index object can be rebuilt from the segment's markers only by the storage's owner, outside Kafka")
            .evidence(serde_json::to_value(evidence).unwrap_or_default()),
    )
}
