//! The transaction index (`.txnindex`) against the ABORT markers of its segment: the
//! broker's sanity check, the format check, and the aborted transactions recomputed from
//! the log (`ProducerStateManager` / `LogSegment.updateTxnIndex`).

use super::{EVIDENCE_CAP, SegmentCtx, format_error, load_checked, mk, name_of, served};
use crate::finding::{Finding, Kind};
use crate::partition::results::Compaction;
use crate::partition::state::AbortedTxn;
use crate::read::format::index::{
    AbortedTxn as IndexedAbort, IndexVerdicts, TxnIndex, TxnSanityProblem,
};
use crate::read::segment::FileClass;
use serde_json::json;

/// Check one segment's transaction index; a failed sanity check sets `corrupt_index`
/// (the broker recovers the segment at load), or `load_error` when the entry it stops at
/// has an unknown version (the load fails: `LogLoader.loadSegmentFiles` catches only a
/// missing or corrupt index).
pub(super) fn check(
    c: &SegmentCtx<'_>,
    corrupt_index: &mut Option<String>,
    load_error: &mut Option<String>,
    out: &mut Vec<Finding>,
) {
    let (r, opts, s, verdicts, log_name) = (c.r, c.opts, c.files, c.verdicts, c.log_name.as_str());
    let (i, missing_index) = (c.ordinal, c.missing_index);
    // Transaction index.
    let expected: Vec<&AbortedTxn> = r
        .carried
        .outcome
        .aborted
        .iter()
        .filter(|a| a.segment as usize == i)
        .collect();
    let txn_bytes = s
        .txnindex
        .as_deref()
        .and_then(|t| load_checked(t, FileClass::Index, opts, r, out));
    let tname = s
        .txnindex
        .as_deref()
        .map(name_of)
        .unwrap_or_else(|| format!("{:020}.txnindex", s.base_offset));
    let actual: Vec<IndexedAbort> = match &txn_bytes {
        Some(b) => {
            let t = TxnIndex::new(b, s.base_offset);
            let abs = s
                .txnindex
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            // `LogSegment.sanityCheck` reaches the transaction index only when the offset
            // index exists (else the segment is recovered, which rewrites this file) and,
            // before 2.3, when the offset and time indexes passed.
            let checked = !missing_index && corrupt_index.is_none();
            // Since 4.4 (KAFKA-19562, `TransactionIndex.iterable` reading the generated
            // `AbortedTxn`) the version is the whole int16 and only 0 loads; before, the
            // first byte alone (`AbortedTxn.version()`). Without `--broker-version` the
            // older reading stays (it accepts what every release before 4.4 loads).
            let since_4_4 =
                crate::partition::recovery::reads_whole_txn_index_version(opts.broker_version);
            let sanity = if since_4_4 {
                t.sanity_check_since_4_4()
            } else {
                t.sanity_check()
            };
            let refused = |p: TxnSanityProblem| {
                matches!(
                    p,
                    TxnSanityProblem::UnknownVersion | TxnSanityProblem::UnsupportedVersion
                )
            };
            match sanity {
                Err(e) if refused(e.problem) && checked => {
                    let msg = e.kafka_message(&abs);
                    *load_error = Some(msg.clone());
                    out.push(
                        mk(r, Kind::TxnindexMismatch, &tname, format!("{tname}: {msg}"))
                            .evidence(json!({"entry": e.txn}))
                            .broker("KafkaException at load: LogLoader.loadSegmentFiles runs LogSegment.sanityCheck on every segment with an offset index, whatever the shutdown; iterating this file's entries throws, it is neither a missing nor a corrupt index, so the segment is not recovered: the log fails to load and LogManager.loadLogs rethrows it (the broker does not start)")
                            .client_error("none from this file: the broker does not start, so its clients fail over to other replicas or wait")
                            .remediation(format!("move {tname} and the segment's offset index ({:020}.index) out of the partition directory (keep them as evidence) before the restart: the broker then recovers the segment and rebuilds both from the log", s.base_offset)),
                    );
                }
                Err(e) if e.problem == TxnSanityProblem::LastOffsetBelowBase => {
                    let msg = e.kafka_message(&abs);
                    *corrupt_index = Some(format!("corrupt transaction index: {msg}"));
                    out.push(
                    mk(r, Kind::TxnindexMismatch, &tname, format!("{tname}: {msg}"))
                        .offset(e.txn.last_offset)
                        .evidence(json!({"entry": e.txn}))
                        .broker("CorruptIndexException at load: LogLoader recovers the segment and rebuilds the transaction index from the markers")
                        .client_error("none: the load rebuilds the index before any fetch reads it"),
                    );
                }
                _ => {
                    if let Err(e) = t.check() {
                        let broker = if missing_index || corrupt_index.is_some() {
                            "the segment is recovered at load (its offset index is missing or corrupt), which rebuilds the transaction index from the markers"
                        } else {
                            "not checked at load beyond its entries' versions and lastOffset ≥ base offset; read_committed fetches collect aborted transactions from it as it is"
                        };
                        out.push(
                            format_error(r, Kind::TxnindexMismatch, &tname, &e)
                                .broker(broker)
                                .client_error("read_committed consumers fetching this segment get the aborted ranges the readable entries give (no exception)"),
                        );
                    }
                }
            }
            t.entries().collect()
        }
        None => Vec::new(),
    };
    // Compacted as the replay read it: the stated policy, else the cleaner's traces in the
    // batches (the same bytes, the same reading: `Replay::treated_as_compacted`).
    let compaction = r.compaction();
    let cleaned = compaction.map(|_| Cleaned {
        segment_end: r
            .carried
            .segment_walks
            .get(i + 1)
            .map(|w| w.base_offset)
            .or(r.log_end_offset),
    });
    let (mut missing, wrong, extra, lowered) = compare(
        &expected,
        &actual,
        r.carried.first_offset,
        verdicts,
        cleaned,
    );
    // No .txnindex and no offset index: the broker recovers this segment at load
    // (missing offset index) and LogSegment.recover rebuilds the transaction index from
    // the markers, so nothing is missing from the index it will serve (the evidence may
    // simply not include the segment's index files).
    if s.txnindex.is_none() && missing_index {
        missing.clear();
    }
    let lists = Lists {
        missing,
        wrong,
        extra,
        lowered,
    };
    lists.report(
        r,
        (&tname, log_name),
        (expected.len(), actual.len()),
        compaction,
        out,
    );
}

type Listed = Vec<serde_json::Value>;

/// The four lists of entries a comparison found ([`compare`]).
struct Lists {
    missing: Listed,
    wrong: Listed,
    extra: Listed,
    lowered: Listed,
}

impl Lists {
    /// One finding per non-empty list, with what it means for the broker and consumers.
    fn report(
        &self,
        r: &crate::partition::results::PartitionReport,
        (tname, log_name): (&str, &str),
        (expected, indexed): (usize, usize),
        compaction: Option<Compaction>,
        out: &mut Vec<Finding>,
    ) {
        // (entries, what they are, the broker's and the consumers' consequence, whether a fetch
        // is unchanged by them)
        for (list, what, consequence, client, harmless) in [
            (
                &self.missing,
                "aborted transactions missing from",
                "read_committed consumers receive the aborted records of these transactions (the broker never rebuilds a .txnindex below the recovery point)",
                "consumer: none — read_committed consumers deliver the records of these aborted transactions as if committed (no exception)",
                false,
            ),
            (
                &self.extra,
                "entries with no matching ABORT marker in",
                "read_committed consumers drop these producers' transactional records from firstOffset until an ABORT marker of the same producer (or the end of the fetch response), hiding committed data",
                "consumer: none — read_committed consumers silently skip these producers' committed transactional records from firstOffset until an ABORT marker of the producer or the end of the fetch response (CompletedFetch; no exception)",
                false,
            ),
            (
                &self.wrong,
                "entries with a wrong firstOffset or lastStableOffset in",
                "read_committed consumers drop the wrong range, or the broker stops collecting aborted transactions too early",
                "consumer: none — read_committed consumers skip the wrong range of records, or deliver aborted ones (no exception)",
                false,
            ),
            (
                &self.lowered,
                "entries with a lastStableOffset below the one the markers give in",
                "no broker writes such an entry, but no fetch changes: TransactionIndex.collectAbortedTxns picks entries by firstOffset and lastOffset and uses lastStableOffset only to stop its search, which a lower value only prolongs",
                "consumer: none — every read_committed fetch gets the same aborted transactions as from the right entry",
                true,
            ),
        ] {
            if list.is_empty() {
                continue;
            }
            let off = list[0].get("last_offset").and_then(|v| v.as_i64());
            let mut f = mk(
                r,
                Kind::TxnindexMismatch,
                tname,
                format!(
                    "{tname}: {} {what} the index (recomputed from the markers of {log_name})",
                    list.len()
                ),
            )
            .evidence(evidence(list, expected, indexed, compaction))
            .broker(served(
                r,
                consequence,
                "no read_committed consumer reads a -delete copy (deleted once loaded)",
            ))
            .client_error(client);
            if harmless {
                f = f.severity(crate::finding::Severity::Warning);
            }
            if let Some(o) = off {
                f = f.offset(o);
            }
            out.push(f);
        }
    }
}

/// A finding's evidence: the entries (capped), their counts, and on what ground the
/// partition was read as compacted when it was (`cleaner_traces`: no input states the
/// policy, the verdict rests on the cleaner's traces in the batches).
fn evidence(
    list: &Listed,
    expected: usize,
    indexed: usize,
    compaction: Option<Compaction>,
) -> serde_json::Value {
    let mut e = json!({"entries": list.iter().take(EVIDENCE_CAP).collect::<Vec<_>>(), "count": list.len(), "expected": expected, "indexed": indexed});
    if let Some(c) = compaction {
        e["treated_as_compacted"] = json!(c);
    }
    e
}

/// What the comparison needs of a partition treated as compacted.
#[derive(Clone, Copy)]
struct Cleaned {
    /// Where the segment ends (the next segment's base offset, else the log end): a
    /// fetched chunk lies in one segment, so a follower's lastStableOffset that cleaning
    /// hid entirely lies below it.
    segment_end: Option<i64>,
}

/// Compare the index's entries with the aborted transactions recomputed from the markers;
/// returns the (missing, wrong, extra, lowered) entries as evidence: `lowered` are entries
/// right but for a lastStableOffset below every value a broker writes for them, which
/// changes no fetch (`TransactionIndex.collectAbortedTxns` selects entries by their
/// offsets, and a lastStableOffset at or above the fetch's upper bound only ends the
/// search: a lower one searches on); a higher one can end it before a later segment's entry
/// (`wrong`).
///
/// Below the first offset held (`held_from`) the log can neither confirm nor refute: a
/// firstOffset there (the transaction began in deleted segments) or a lastStableOffset
/// there (another transaction was open since then) is unknown, not wrong, and only that
/// field goes unchecked. An entry the replay cannot produce because its transaction began
/// below `held_from` is unknown only when its lastOffset is an ABORT marker of its producer:
/// `ProducerAppendInfo.appendEndTxnMarker` completes a transaction at the marker batch's
/// offset and `LogSegment.updateTxnIndex` indexes only aborts.
///
/// On a compacted partition (`cleaned`) the log cleaner writes each segment's index anew:
/// it copies the entry of every ABORT it keeps, unchanged, when it read any batch of that
/// transaction in the pass — even one it then removed, as it removes all aborted data
/// (`CleanedTransactionMetadata.onControlBatchRead`). So an entry at an ABORT marker of its
/// producer is not extra though no data of the transaction remains, and its firstOffset
/// and lastStableOffset may lie below what the cleaned log gives (batches removed since);
/// a firstOffset above it is still wrong.
///
/// An entry whose firstOffset is its lastOffset, at an ABORT marker of its producer, is
/// what a broker before 2.8 indexed for an ABORT that closed no transaction (before
/// KAFKA-10702, `ProducerAppendInfo.appendEndTxnMarker` made such a marker a transaction of
/// its own, begun and ended at the marker): segments written then are still served, and
/// the entry hides nothing — a read_committed consumer adds the producer at that marker
/// batch and removes it at the same batch (`CompletedFetch.consumeAbortedTransactionsUpTo`,
/// `containsAbortMarker`; `FetcherTest.testMultipleAbortMarkers`). It is not extra.
///
/// A follower's lastStableOffset (a transaction of another producer the same fetched chunk
/// began after the marker, [`AbortedTxn::follower_last_stable_offset`]) is as right as the
/// leader's. Cleaning can remove that transaction's first batches, which raises the
/// follower value the cleaned log gives, or all of them, which leaves none: the entry,
/// copied unchanged, may then hold any offset from the leader's value up to the follower
/// value the cleaned log shows (the segment's end when it shows none); above that it is wrong
/// (`UnifiedLogTest.testTransactionIndexUpdatedThroughReplication`, then
/// `CleanedTransactionMetadata.onControlBatchRead`).
fn compare(
    expected: &[&AbortedTxn],
    actual: &[IndexedAbort],
    held_from: Option<i64>,
    verdicts: Option<&IndexVerdicts>,
    cleaned: Option<Cleaned>,
) -> (Listed, Listed, Listed, Listed) {
    let held_from = held_from.unwrap_or(i64::MAX);
    let abort_marker_at = |a: &IndexedAbort| {
        verdicts.is_some_and(|v| v.has_abort_marker(a.last_offset, a.producer_id))
    };
    let differs = |a: i64, e: i64| a >= held_from && (a > e || (a < e && cleaned.is_none()));
    // The lastStableOffset: the leader's value, the follower's, or (cleaned) anything below
    // the follower's as the cleaned log shows it.
    let lso_wrong = |a: i64, e: &AbortedTxn| {
        if a < held_from || a == e.last_stable_offset {
            return false;
        }
        match cleaned {
            None => e.follower_last_stable_offset != Some(a),
            Some(c) => {
                let upper = e
                    .follower_last_stable_offset
                    .or(c.segment_end)
                    .unwrap_or(e.last_stable_offset);
                a > upper.max(e.last_stable_offset)
            }
        }
    };
    let mut missing = Vec::new();
    let mut wrong = Vec::new();
    let mut lowered = Vec::new();
    for e in expected {
        let Some(a) = actual
            .iter()
            .find(|a| a.producer_id == e.producer_id && a.last_offset == e.last_offset)
        else {
            missing.push(json!({"producer_id": e.producer_id, "first_offset": e.first_offset, "last_offset": e.last_offset, "last_stable_offset": e.last_stable_offset}));
            continue;
        };
        let first_wrong = differs(a.first_offset, e.first_offset);
        if !first_wrong && !lso_wrong(a.last_stable_offset, e) {
            continue;
        }
        let entry = json!({
            "producer_id": e.producer_id, "last_offset": e.last_offset,
            "first_offset": a.first_offset, "expected_first_offset": e.first_offset,
            "last_stable_offset": a.last_stable_offset, "expected_last_stable_offset": e.last_stable_offset});
        let lowest = e
            .follower_last_stable_offset
            .map_or(e.last_stable_offset, |f| f.min(e.last_stable_offset));
        match !first_wrong && a.last_stable_offset < lowest {
            true => lowered.push(entry),
            false => wrong.push(entry),
        }
    }
    let extra = actual
        .iter()
        .filter(|a| !((cleaned.is_some() || a.first_offset < held_from || a.first_offset == a.last_offset) && abort_marker_at(a)))
        .filter(|a| !expected.iter().any(|e| e.producer_id == a.producer_id && e.last_offset == a.last_offset))
        .map(|a| json!({"producer_id": a.producer_id, "first_offset": a.first_offset, "last_offset": a.last_offset, "last_stable_offset": a.last_stable_offset}))
        .collect();
    (missing, wrong, extra, lowered)
}
