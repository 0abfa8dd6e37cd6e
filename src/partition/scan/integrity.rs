//! The integrity rules of the walk (`DefaultRecordBatch.ensureValid`, `LogSegment.recover`): CRC,
//! header structure and offsets of each entry, record-level checks with `--deep`, and rule 32
//! over `__consumer_offsets` records. Each returns findings; where the broker's recovery stops
//! is decided by the walk and the recovery model, not here.

use super::segment_finding;
use crate::finding::{Finding, Kind};
use crate::partition::event::BatchEvent;
use crate::partition::state::PartitionContext;
use crate::read::format::{self, Compression, Decompressor, FormatError, TimestampType};
use serde_json::json;

pub(super) fn legacy_range(
    m: &format::LegacyMessage<'_>,
    dec: &mut Decompressor,
) -> Result<(i64, u32), FormatError> {
    m.checked_offset_range(dec)
        .map(|(first, _last, count)| (first, count))
}

pub(super) fn crc_finding(
    ctx: &PartitionContext,
    name: &str,
    ev: &BatchEvent,
    stored: u32,
    computed: u32,
) -> Finding {
    segment_finding(
        ctx,
        Kind::CrcMismatch,
        name,
        ev.position,
        format!(
            "{name}: batch at offset {} (byte {}) has CRC {stored}, computed {computed}",
            ev.base_offset, ev.position
        ),
    )
    .offset(ev.base_offset)
    .evidence(json!({"stored_crc": stored, "computed_crc": computed, "size": ev.size, "magic": ev.magic}))
    .broker("rejected on append (CorruptRecordException); recovery truncates the segment here and deletes all later segments")
    .client_error(crc_client_text(ev))
}

/// What a consumer (and a follower) meets at an entry whose CRC does not match
/// (`CompletedFetch.maybeEnsureValid`, with `check.crcs=true`, the default). A v2 batch is
/// checked whole; a legacy (magic 0/1) entry never is — each record is: an uncompressed
/// message is its own record, while a compressed wrapper is opened and only its inner
/// messages' CRCs are checked (`AbstractLegacyRecordBatch.DeepRecordsIterator`), so the
/// wrapper's own CRC is nothing a consumer sees.
fn crc_client_text(ev: &BatchEvent) -> &'static str {
    match (ev.magic >= 2, ev.compression == Compression::None) {
        (true, _) => {
            "consumer: KafkaException (\"Record batch for partition … at offset … is invalid, cause: …\", the CorruptRecordException's message; CompletedFetch.maybeEnsureValid with check.crcs=true, the default; not retriable): poll fails at this offset until the application seeks past it; a follower fetching it fails its fetch with CorruptRecordException"
        }
        (false, true) => {
            "consumer: KafkaException (\"Record for partition … at offset … is invalid, cause: …\": CompletedFetch.maybeEnsureValid checks each legacy message's CRC with check.crcs=true, the default; FetcherTest.testParseCorruptedRecord; not retriable): poll fails at this offset until the application seeks past it; a follower fetching it fails its fetch with CorruptRecordException"
        }
        (false, false) => {
            "consumer: the wrapper's own CRC is not checked (CompletedFetch.maybeEnsureValid checks whole batches of magic 2 only): the consumer opens it and checks each inner message's CRC — with the inner messages intact it delivers them; damage inside the compressed payload fails the decompression or an inner message's CRC (KafkaException \"Record for partition … at offset … is invalid\"); a follower fetching it fails its fetch with CorruptRecordException"
        }
    }
}

pub(super) fn invalid_batch(
    ctx: &PartitionContext,
    name: &str,
    pos: u64,
    offset: Option<i64>,
    e: &FormatError,
) -> Finding {
    let mut f = segment_finding(ctx, Kind::InvalidBatch, name, pos, format!("{name}: invalid batch at byte {pos}: {e}"))
        .evidence(json!({"structure": e.structure, "field": e.field, "error_position": e.position, "problem": e.problem.to_string()}))
        .broker("rejected on append (InvalidRecordException / CorruptRecordException); consumers fail to read it");
    // A count of 0 over records bytes: every reader's record iterator reads none of them
    // (`DefaultRecordBatch.iterator`, `RecordIterator` checks leftovers only after a last
    // declared record), and `CompletedFetch.maybeEnsureValid` checks only size and CRC.
    if matches!(e.problem, format::Problem::Invalid(m) if m == format::record::COUNT_0_OVER_BYTES) {
        f = f
            .broker("rejected on append (LogValidator.validateBatch refuses a record count of 0); every reader reads no record of it, replicas and recovery keep it")
            .client_error("consumer: no exception — the batch's size and CRC are valid, which is all CompletedFetch.maybeEnsureValid checks, and its record iterator yields no record for a count of 0: the consumer delivers nothing of it and goes on at the next offset");
    }
    if let Some(o) = offset {
        f = f.offset(o);
    }
    f
}

#[inline]
pub(super) fn check_offset_range(
    ctx: &PartitionContext,
    name: &str,
    ev: &BatchEvent,
    base: i64,
    out: &mut Vec<Finding>,
) {
    let rel_first = ev.base_offset.wrapping_sub(base);
    if rel_first < 0 || !last_in_range(ev.last_offset, base) {
        offset_out_of_range(ctx, name, ev, base, out);
    }
}

/// Whether `last_offset` converts to an offset relative to the segment base `base`
/// (`LogSegment.canConvertToRelativeOffset`: 0..=2^31-1 above it).
#[inline]
fn last_in_range(last_offset: i64, base: i64) -> bool {
    (0..=i32::MAX as i64).contains(&last_offset.wrapping_sub(base))
}

/// The finding of [`check_offset_range`], out of line (run for a damaged batch only).
#[cold]
#[inline(never)]
fn offset_out_of_range(
    ctx: &PartitionContext,
    name: &str,
    ev: &BatchEvent,
    base: i64,
    out: &mut Vec<Finding>,
) {
    out.push(
        segment_finding(
            ctx,
            Kind::SegmentOffsetOutOfRange,
            name,
            ev.position,
            format!(
                "{name}: batch offsets {}..{} lie outside what base offset {base} allows (0..=2^31-1 relative)",
                ev.base_offset, ev.last_offset
            ),
        )
        .offset(ev.base_offset)
        .evidence(json!({"segment_base_offset": base, "base_offset": ev.base_offset, "last_offset": ev.last_offset}))
        .broker(if last_in_range(ev.last_offset, base) {
            // `LogSegment.append` and `LogSegment.recover` range-check a batch's last
            // offset only (`ensureOffsetInRange`).
            "not checked by the broker (append and recovery range-check a batch's last offset only): kept; reads of the offsets below the segment's base offset do not find this segment"
        } else {
            "recovery raises LogSegmentOffsetOverflowException and splits the segment (KAFKA-6264); index lookups are wrong until then"
        }),
    );
}

pub(super) fn check_v2_header(
    ctx: &PartitionContext,
    name: &str,
    b: &format::BatchView<'_>,
    ev: &BatchEvent,
    base: i64,
    out: &mut Vec<Finding>,
) {
    if !ev.crc_valid {
        out.push(crc_finding(ctx, name, ev, b.crc(), b.compute_crc()));
        return; // Nothing else in the batch can be trusted.
    }
    if header_may_be_invalid(ctx, b) {
        check_header_fields(ctx, name, b, ev, out);
    }
    check_offset_range(ctx, name, ev, base, out);
}

/// False only when [`check_header_fields`] would find nothing: every batch a producer
/// wrote passes this test and skips the out-of-line checks (they build the finding's
/// problem list). Control batches always take the full checks.
#[inline]
fn header_may_be_invalid(ctx: &PartitionContext, b: &format::BatchView<'_>) -> bool {
    let count = b.records_count() as i64;
    let delta = b.last_offset_delta() as i64;
    b.magic() != 2
        || count < 0
        || delta < 0
        || count > delta + 1
        || b.checked_last_offset().is_none()
        || (ctx.compacted == Some(false) && count < delta + 1 && !b.has_delete_horizon())
        || matches!(b.compression(), Compression::Unknown(_))
        || b.is_control()
}

/// The header rules of a v2 batch (what the leader validates on append:
/// `LogValidator.validateBatch`): one `invalid_batch` finding listing every problem.
#[cold]
#[inline(never)]
fn check_header_fields(
    ctx: &PartitionContext,
    name: &str,
    b: &format::BatchView<'_>,
    ev: &BatchEvent,
    out: &mut Vec<Finding>,
) {
    let mut problems: Vec<String> = Vec::new();
    // What a consumer meets (the report's per-kind client text would otherwise give the
    // CRC text, which a batch of a valid CRC never earns): the worst of the problems'
    // readings.
    let mut consumer = Consumer::Nothing;
    if b.magic() != 2 {
        problems.push(format!("magic {} is not 2", b.magic()));
        consumer = consumer.max(Consumer::InvalidMagic);
    }
    let count = b.records_count();
    let delta = b.last_offset_delta();
    if count < 0 {
        problems.push(format!("recordsCount {count} is negative"));
        consumer = consumer.max(Consumer::Fails);
    }
    if delta < 0 {
        problems.push(format!("lastOffsetDelta {delta} is negative"));
        consumer = consumer.max(Consumer::NotJudged);
    }
    if b.checked_last_offset().is_none() {
        consumer = consumer.max(Consumer::NotJudged);
        // Checked arithmetic: the sum (or the log end offset after it) leaves the i64
        // range; it is never printed wrapped (the broker assigns offsets below it).
        problems.push(format!(
            "baseOffset {} + lastOffsetDelta {delta} overflows a 64-bit offset",
            b.base_offset()
        ));
    }
    if count >= 0 && delta >= 0 && count as i64 > delta as i64 + 1 {
        consumer = consumer.max(Consumer::NotJudged);
        problems.push(format!(
            "recordsCount {count} exceeds lastOffsetDelta + 1 = {}",
            delta as i64 + 1
        ));
    }
    if ctx.compacted == Some(false)
        && count >= 0
        && delta >= 0
        && (count as i64) < delta as i64 + 1
        && !b.has_delete_horizon()
    {
        problems.push(format!(
            "recordsCount {count} < lastOffsetDelta + 1 on a non-compacted topic"
        ));
    }
    if let Compression::Unknown(id) = b.compression() {
        problems.push(format!("compression codec id {id} is unknown"));
        consumer = consumer.max(Consumer::Fails);
    }
    // Attribute bits 7–15 are unused: no reader or validator looks at them
    // (`DefaultRecordBatch`; `LogValidator` rewrites the attributes only with the max
    // timestamp), so a producer's stray bits are stored and read as any batch: no finding.
    // Problems of a marker batch the coordinator never writes but every reader takes.
    let mut marker_shape: Vec<&str> = Vec::new();
    if b.is_control() {
        if b.compression() != Compression::None && count > 0 {
            problems.push("control batch is compressed".into());
        }
        // A transaction marker batch holds one record (`MemoryRecords.withEndTransactionMarker`,
        // the coordinator's marker writer); a KRaft control batch may hold several: the new
        // leader's LEADER_CHANGE, KRAFT_VERSION and KRAFT_VOTERS in one batch
        // (`LeaderState.appendStartOfEpochControlRecords`, kraft.version 1).
        if count > 1
            && matches!(
                ev.control,
                Some(crate::partition::event::ControlInfo::Marker { .. })
            )
        {
            problems.push(format!(
                "transaction marker batch holds {count} records (the coordinator writes one; the producer-state update and consumers read the first)"
            ));
            marker_shape.push(MARKER_COUNT);
        }
        // The coordinator's marker batches are transactional: `MemoryRecordsBuilder`
        // refuses an end-transaction marker in a batch without the bit
        // (`appendEndTxnMarker`; `MemoryRecordsBuilderTest.testWriteEndTxnMarkerNonTransactionalBatch`).
        // No reader looks at the bit of a control batch: `ProducerAppendInfo.append`, the
        // consumer (`CompletedFetch`) and the cleaner (`onControlBatchRead`) take its
        // COMMIT/ABORT all the same.
        if !ev.is_transactional
            && ev.has_producer_id()
            && matches!(
                ev.control,
                Some(crate::partition::event::ControlInfo::Marker { .. })
            )
        {
            problems.push(
                "transaction marker batch without the transactional bit (the coordinator's markers always carry it; every reader takes the marker all the same)"
                    .into(),
            );
            marker_shape.push(MARKER_NOT_TRANSACTIONAL);
        }
        if ev.control.is_some_and(|c| c.undecodable())
            && let Err(e) = format::batch_control_with(b, &mut Decompressor::new(4096))
        {
            problems.push(format!("control record: {e}"));
            consumer = consumer.max(Consumer::NotJudged);
        }
        // `ProducerAppendInfo.append` takes a control batch with a producer id as a
        // COMMIT/ABORT (`EndTransactionMarker.deserialize`): another type throws.
        if let Some(crate::partition::event::ControlInfo::Other(kind)) = ev.control
            && ev.has_producer_id()
        {
            problems.push(format!(
                "control record of type {} ({kind:?}) in a batch with producer id {}: only COMMIT/ABORT markers carry one",
                kind.id(),
                ev.producer_id
            ));
        }
    }
    if !problems.is_empty() {
        let control_throws = ev.has_producer_id()
            && ev.control.is_some_and(|c| {
                c.undecodable() || matches!(c, crate::partition::event::ControlInfo::Other(_))
            });
        let broker = if control_throws {
            CONTROL_THROWS
        } else if consumer == Consumer::InvalidMagic {
            "kept by recovery (FileLogInputStream takes any magic above 1 for v2, and the CRC-32C does not cover the magic byte); no broker writes it (a produce request's batches must have magic 2), and a follower's fetch of it fails in ByteBufferLogInputStream, so the copy cannot be replicated past it"
        } else if !marker_shape.is_empty() && marker_shape.len() == problems.len() {
            &marker_shape.join("; ")
        } else {
            "rejected on append by the leader (InvalidRecordException); never re-checked by replicas or recovery"
        };
        out.push(
            segment_finding(ctx, Kind::InvalidBatch, name, b.position(), format!("{name}: batch at offset {}: {}", b.base_offset(), problems.join("; ")))
                .offset(b.base_offset())
                .evidence(json!({"problems": problems, "records_count": count, "last_offset_delta": delta, "attributes": b.attributes()}))
                .broker(broker)
                .client_error(consumer.text()),
        );
    }
}

/// What a consumer meets reading a batch whose size and CRC are valid (all that
/// `CompletedFetch.maybeEnsureValid` checks: `DefaultRecordBatch.ensureValid`) but whose
/// header [`check_header_fields`] faults, ordered from the mildest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Consumer {
    /// A compressed or many-record control batch, a record count below lastOffsetDelta + 1,
    /// another control type with a producer id: a consumer decompresses control batches,
    /// skips their records and reads the first one only for an ABORT, and never holds the
    /// count against the delta (`FetcherTest.testFetcherIgnoresControlRecords`,
    /// `testUpdatePositionWithLastRecordMissingFromBatch`).
    Nothing,
    /// A negative magic-2 header field, an offset overflow, a record count above
    /// lastOffsetDelta + 1, a control record that does not decode: what the consumer's
    /// record iterator and position make of them is not modelled.
    NotJudged,
    /// A negative record count (`DefaultRecordBatch`'s iterator: InvalidRecordException
    /// "Found invalid record count"), an unknown compression id
    /// (`CompressionType.forId`: IllegalArgumentException).
    Fails,
    /// A magic above 2 under a CRC that holds (the CRC-32C starts after the magic byte):
    /// the broker's `FileLogInputStream` hands it to the v2 reader and recovery keeps it,
    /// but the fetch response's `ByteBufferLogInputStream.nextBatchSize` refuses any magic
    /// outside 0–2 before `maybeEnsureValid` runs.
    InvalidMagic,
}

impl Consumer {
    fn text(self) -> &'static str {
        match self {
            Consumer::Nothing => {
                "consumer: no exception — the batch's size and CRC are valid, which is all CompletedFetch.maybeEnsureValid checks; consumers skip control records (reading the first one only for an ABORT) and never hold the record count against lastOffsetDelta"
            }
            Consumer::NotJudged => {
                "consumer: the batch's size and CRC are valid, so CompletedFetch.maybeEnsureValid passes it; what reading its records does to a consumer is not judged for these fields"
            }
            Consumer::InvalidMagic => {
                "consumer: the fetch response's batch iterator refuses a magic outside 0-2 (ByteBufferLogInputStream.nextBatchSize: CorruptRecordException \"Invalid magic found in record\"; not retriable): poll fails at this offset until the application seeks past it, and a follower fetching it meets the same exception; the broker keeps the batch (FileLogInputStream takes any magic above 1 for v2, and the CRC-32C does not cover the magic byte)"
            }
            Consumer::Fails => {
                "consumer: the batch passes CompletedFetch.maybeEnsureValid (its size and CRC are valid), then reading its records throws (InvalidRecordException for a negative record count, IllegalArgumentException for an unknown compression id; not retriable): poll fails at this offset until the application seeks past it"
            }
        }
    }
}

/// What the broker does with a compressed batch whose record's length is not its fields'.
const RECORD_LENGTH_IN_PLACE: &str = "appended by a leader that keeps the producer's codec (LogValidator's in-place path reads the records with DefaultRecord.readPartiallyFrom, which never holds a record's fields against its length), refused by one that recompresses the batch (InvalidRecordException from DefaultRecord.readFrom); never re-checked by replicas or recovery; consumers fail to read it";

/// What the broker does with a COMMIT/ABORT batch of more than one record.
const MARKER_COUNT: &str = "not rejected on append (the leader checks no record count of the coordinator's marker batches) and not checked by replicas or recovery: ProducerAppendInfo.appendEndTxnMarker and consumers (CompletedFetch) read only the first record; a batch Kafka's coordinator never writes";

/// What the broker does with a COMMIT/ABORT batch with a producer id but without the
/// transactional bit.
const MARKER_NOT_TRANSACTIONAL: &str = "not rejected on append (the leader's validator refuses control batches from clients only; the coordinator's markers are not checked) and not checked by replicas or recovery: ProducerAppendInfo.append, consumers (CompletedFetch) and the cleaner (onControlBatchRead) take the marker whatever the batch's transactional bit; a batch Kafka's coordinator never writes (MemoryRecordsBuilder.appendEndTxnMarker refuses a marker in a batch without it)";

/// What the broker does with a control batch with a producer id whose record its
/// producer-state update cannot take (`ProducerAppendInfo.append` →
/// `EndTransactionMarker.deserialize`; `verify`'s load failure says whether a load reads it).
const CONTROL_THROWS: &str = "rejected on append by the leader; at load every producer-state replay that reads it throws — InvalidRecordException for a COMMIT/ABORT record that does not decode (LogSegment.recover catches that one but keeps the batch and cuts what follows it), IllegalArgumentException for another control type, NullPointerException for a null key or COMMIT/ABORT value (neither caught by anyone) — and the broker does not start";

mod coordinator_records;
pub(super) use coordinator_records::{
    OFFSETS_TOPIC, OffsetsCheck, SHARE_STATE_TOPIC, coordinator_topic,
};

/// `--deep`: decode the records and check them against the header.
pub(super) fn check_records(
    ctx: &PartitionContext,
    name: &str,
    b: &format::BatchView<'_>,
    dec: &mut Decompressor,
    mut offsets: Option<&mut OffsetsCheck>,
    keyless_seen: &mut super::keyless::Keyless,
    out: &mut Vec<Finding>,
) {
    let delta = b.last_offset_delta();
    let create_time = b.timestamp_type() == TimestampType::CreateTime;
    let mut problems: Vec<String> = Vec::new();
    let mut n = 0i64;
    let mut prev_delta: Option<i32> = None;
    // Kafka's writers start the batch's maximum at NO_TIMESTAMP (-1), so records stamped
    // before 1970 leave it at -1 (`LogValidator.assignOffsetsNonCompressed`,
    // `MemoryRecordsBuilder`).
    let mut max_ts = -1i64;
    let keyless_rule = super::keyless::applies(ctx) && !b.is_control();
    let mut keyless = super::keyless::BatchKeyless::default();
    let records = match format::batch_records(b, dec) {
        Ok(r) => r,
        Err(e) => {
            out.push(invalid_batch(
                ctx,
                name,
                b.position(),
                Some(b.base_offset()),
                &e,
            ));
            return;
        }
    };
    for r in records {
        match r {
            Ok(r) => {
                n += 1;
                if let Some(c) = offsets.as_deref_mut() {
                    c.record(b, &r);
                }
                if r.offset_delta < 0 || r.offset_delta > delta {
                    problems.push(format!(
                        "record offsetDelta {} outside [0, {delta}]",
                        r.offset_delta
                    ));
                }
                if let Some(p) = prev_delta
                    && r.offset_delta <= p
                {
                    {
                        problems.push(format!(
                            "record offsetDelta {} not above the previous {p}",
                            r.offset_delta
                        ));
                    }
                }
                prev_delta = Some(r.offset_delta);
                max_ts = max_ts.max(b.base_timestamp().wrapping_add(r.timestamp_delta));
                if keyless_rule {
                    let offset = b.base_offset().wrapping_add(i64::from(r.offset_delta));
                    keyless.record(offset, r.key.is_some());
                }
            }
            Err(e) => {
                // Positions inside an uncompressed records section are file positions once
                // shifted; inside a decompressed buffer they are not: there the finding keeps
                // the batch position and the evidence says the error position is an offset
                // into the decompressed records.
                let compressed = b.compression() != Compression::None;
                let e = if compressed {
                    e
                } else {
                    e.at(b.position() + 61)
                };
                let mut f = invalid_batch(ctx, name, b.position(), Some(b.base_offset()), &e);
                if compressed && let Some(ev) = f.evidence.as_object_mut() {
                    ev.insert("error_position_in".into(), json!("decompressed records"));
                }
                // A leader that keeps the producer's codec validates a compressed batch in
                // place (`LogValidator.validateMessagesAndAssignOffsetsCompressed`:
                // `skipKeyValueIterator`, `DefaultRecord.readPartiallyFrom`), reading the
                // fields one after the other and never against the record's length.
                if compressed && e.structure == "record" && e.field == "length" {
                    f = f.broker(RECORD_LENGTH_IN_PLACE);
                }
                out.push(f);
                return;
            }
        }
        if problems.len() > 3 {
            break;
        }
    }
    keyless_seen.add(keyless, name, b.position(), b.base_offset());
    // The newest timestamp is only known once every record is read (not when the loop
    // stopped early on the problems above).
    let all_read = i64::from(b.records_count()) == n;
    if create_time
        && all_read
        && n > 0
        && !b.is_control()
        && max_ts != b.max_timestamp()
        && ctx.compacted != Some(true)
    {
        problems.push(format!(
            "maxTimestamp {} differs from the newest record timestamp {max_ts}",
            b.max_timestamp()
        ));
    }
    if !problems.is_empty() {
        out.push(
            segment_finding(
                ctx,
                Kind::InvalidBatch,
                name,
                b.position(),
                format!(
                    "{name}: batch at offset {}: {}",
                    b.base_offset(),
                    problems.join("; ")
                ),
            )
            .offset(b.base_offset())
            .evidence(json!({"problems": problems, "deep": true}))
            .broker("rejected on append by the leader; never re-checked by replicas or recovery"),
        );
    }
}

/// `--deep` on a legacy entry whose own CRC holds: what recovery, which checks only the
/// wrapper's size and CRC (`LegacyRecord.ensureValid` on the outer message), keeps but the
/// validator refuses (`LogValidator.validateRecordCompression`, `validateRecord`) — an
/// inner message that is itself compressed (a consumer's `DeepRecordsIterator` throws
/// "Inner messages must not be compressed"), one whose CRC does not hold (a consumer with
/// `check.crcs`, the default, fails on it), one whose magic differs from the wrapper's
/// (readers take it as stored: the iterator is built without `ensureMatchingMagic`) — and
/// keyless records on a compacted topic ([`super::keyless`]). One `invalid_batch` at the
/// wrapper names its problems.
pub(super) fn check_legacy_records(
    ctx: &PartitionContext,
    name: &str,
    m: &format::LegacyMessage<'_>,
    inner: format::legacy::InnerMessages<'_>,
    keyless_seen: &mut super::keyless::Keyless,
    out: &mut Vec<Finding>,
) {
    let wrapper = m.compression() != Compression::None;
    let keyless_rule = super::keyless::applies(ctx);
    let mut keyless = super::keyless::BatchKeyless::default();
    let mut problems: Vec<String> = Vec::new();
    let mut consumers_fail = false;
    for r in inner {
        let im = match r {
            Ok(im) => im,
            Err(e) => {
                problems.push(format!(
                    "inner message at byte {} of the decompressed set: {}",
                    e.position, e.problem
                ));
                consumers_fail = true;
                break;
            }
        };
        if keyless_rule {
            keyless.record(im.offset, im.message.key().is_some());
        }
        if !wrapper || problems.len() > 3 {
            continue;
        }
        if im.message.magic() != m.magic() {
            problems.push(format!(
                "inner message at offset {} has magic {}, its wrapper {}",
                im.offset,
                im.message.magic(),
                m.magic()
            ));
        }
        if !im.message.is_valid() {
            problems.push(format!(
                "inner message at offset {} has CRC {}, computed {}",
                im.offset,
                im.message.crc(),
                im.message.compute_crc()
            ));
            consumers_fail = true;
        }
    }
    keyless_seen.add(keyless, name, m.position(), m.offset());
    if problems.is_empty() {
        return;
    }
    out.push(
        segment_finding(
            ctx,
            Kind::InvalidBatch,
            name,
            m.position(),
            format!("{name}: legacy wrapper at offset {}: {}", m.offset(), problems.join("; ")),
        )
        .offset(m.offset())
        .evidence(json!({"problems": problems, "deep": true, "magic": m.magic()}))
        .broker("refused on append by the leader (LogValidator); recovery checks the wrapper's size and CRC only and keeps it")
        .client_error(if consumers_fail {
            "consumer: KafkaException wrapping CorruptRecordException / InvalidRecordException: a consumer reaching the inner message fails (check.crcs=true, the default, checks each inner CRC; a compressed inner message is refused by the deep iterator); not retriable, the application has to seek past it"
        } else {
            "none: consumers read the inner messages as stored"
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A v2 batch of `len` bytes (≥ 61) whose header bytes 16.. come from `head`, with a
    /// consistent batchLength.
    fn batch(head: &[u8], len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len.max(format::batch::V2_HEADER_SIZE)];
        let n = head.len().min(v.len() - 16);
        v[16..16 + n].copy_from_slice(&head[..n]);
        let declared = (v.len() - 12) as i32;
        v[8..12].copy_from_slice(&declared.to_be_bytes());
        v
    }

    fn header_findings(ctx: &PartitionContext, bytes: &[u8]) -> Vec<Finding> {
        let b = format::BatchView::new(bytes, 0).expect("a whole header");
        let ev = BatchEvent::from_v2(&b, 0, false);
        let mut out = Vec::new();
        check_header_fields(ctx, "00000000000000000000.log", &b, &ev, &mut out);
        out
    }

    fn ctx(compacted: Option<bool>) -> PartitionContext {
        PartitionContext {
            compacted,
            ..PartitionContext::default()
        }
    }

    /// magic 2, attributes, lastOffsetDelta, timestamps, producer fields, recordsCount.
    fn header(attributes: u16, delta: i32, count: i32) -> Vec<u8> {
        let mut h = vec![2u8, 0, 0, 0, 0];
        h.extend_from_slice(&attributes.to_be_bytes());
        h.extend_from_slice(&delta.to_be_bytes());
        h.extend_from_slice(&[0; 16]); // timestamps
        h.extend_from_slice(&(-1i64).to_be_bytes());
        h.extend_from_slice(&(-1i16).to_be_bytes());
        h.extend_from_slice(&(-1i32).to_be_bytes());
        h.extend_from_slice(&count.to_be_bytes());
        h
    }

    #[test]
    fn a_healthy_header_skips_the_field_checks_and_a_broken_one_is_reported() {
        let c = ctx(Some(false));
        let healthy = batch(&header(0, 4, 5), 80);
        let b = format::BatchView::new(&healthy, 0).unwrap();
        assert!(!header_may_be_invalid(&c, &b));
        assert!(header_findings(&c, &healthy).is_empty());
        // Unused attribute bits (7–15) are looked at by no Kafka reader: healthy.
        let unused = batch(&header(0x0180, 4, 5), 80);
        let b = format::BatchView::new(&unused, 0).unwrap();
        assert!(!header_may_be_invalid(&c, &b));
        assert!(header_findings(&c, &unused).is_empty());
        // Negative: more records than offsets, an unknown codec, a control batch (whose
        // zero bytes hold no control record): each takes the full checks, which report it.
        for (attributes, delta, count) in [(0u16, 1, 5), (7, 4, 5), (0x20, 0, 1)] {
            let bytes = batch(&header(attributes, delta, count), 80);
            let b = format::BatchView::new(&bytes, 0).unwrap();
            assert!(
                header_may_be_invalid(&c, &b),
                "{attributes:#x} {delta} {count}"
            );
            assert_eq!(header_findings(&c, &bytes).len(), 1);
        }
    }

    proptest! {
        /// Skipping the field checks never hides an `invalid_batch` finding: over any
        /// header bytes, the fast test passes only headers the full checks accept.
        #[test]
        fn the_fast_test_never_hides_a_problem(
            head in proptest::collection::vec(any::<u8>(), 45),
            magic_two in any::<bool>(),
            small in any::<bool>(),
            compacted in proptest::option::of(any::<bool>()),
            extra in 0usize..40,
        ) {
            let mut head = head;
            if magic_two {
                head[0] = 2;
            }
            if small {
                // Plausible counts and deltas (the random ones are mostly huge).
                let (delta, count) = (head[7] as i32 % 8, head[41] as i32 % 9);
                // Known codec, no control bit, no unused bit.
                head[5] = 0;
                head[6] = (head[6] & 0x58) | (head[6] % 5);
                head[7..11].copy_from_slice(&delta.to_be_bytes());
                head[41..45].copy_from_slice(&count.to_be_bytes());
            }
            let bytes = batch(&head, format::batch::V2_HEADER_SIZE + extra);
            let c = ctx(compacted);
            let b = format::BatchView::new(&bytes, 0).unwrap();
            if !header_may_be_invalid(&c, &b) {
                prop_assert!(header_findings(&c, &bytes).is_empty());
            }
        }
    }
}
