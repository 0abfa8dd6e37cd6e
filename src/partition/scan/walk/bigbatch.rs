//! The walk's handling of entries too large to hold (`segment::BigEntry`, over
//! `segment::BIG_ENTRY` bytes): they arrive CRC-checked streaming, as their header and
//! CRC only. The header gives the event the replay needs (offsets, producer fields,
//! timestamps) and the header checks; what needs the records is not done and is said:
//!
//! * a control batch is an `invalid_batch`: Kafka writes control batches itself, one record
//!   of a few dozen bytes (`EndTransactionMarker`, `ControlRecordUtils`), so its marker is not read (the replay sees a
//!   control batch whose record could not be decoded);
//! * with `--deep`, on `__consumer_offsets` (whose records are checked by default), and for
//!   a compressed legacy wrapper (opened to learn its first inner offset), a
//!   `batch_not_decoded` finding says the records of this batch were not checked; the
//!   same on `__transaction_state` and `__cluster_metadata`, whose records the cluster
//!   checks read (the batch key still goes to the replica comparison).

use super::super::integrity::{
    OFFSETS_TOPIC, SHARE_STATE_TOPIC, check_offset_range, check_v2_header, crc_finding,
    invalid_batch,
};
use super::super::segment_finding;
use super::Walker;
use crate::finding::Kind;
use crate::partition::event::BatchEvent;
use crate::partition::recovery::StopReason;
use crate::read::format::{self, Classified, Compression, RawEntry, TimestampType};
use crate::read::segment::{BIG_ENTRY, BigEntry, Item};
use serde_json::json;

/// Internal topics whose records are read without `--deep`: `__consumer_offsets` and
/// `__share_group_state` (their records are checked: rule 32), `__transaction_state` (the
/// coordinator's view and rule 31) and `__cluster_metadata` (cleanup policies, partition
/// counts).
const RECORDS_READ: [&str; 4] = [
    OFFSETS_TOPIC,
    SHARE_STATE_TOPIC,
    "__transaction_state",
    "__cluster_metadata",
];

impl Walker<'_> {
    /// One item of a walk: a whole entry, or one checked streaming.
    pub(in crate::partition::scan) fn item(&mut self, item: Item<'_>) {
        match item {
            Item::Entry(e) => self.entry(e),
            Item::Big(b) => self.big(&b),
        }
    }

    /// An entry larger than `BIG_ENTRY`: header checks and the event from its header, its
    /// CRC computed streaming, the record-level checks not done (and said).
    fn big(&mut self, big: &BigEntry) {
        let (ctx, name, idx, base, opts) = (self.ctx, self.name, self.idx, self.base, self.opts);
        let head = big.header_only();
        let pos = big.position;
        let entry = RawEntry {
            position: pos,
            bytes: &head,
        };
        // What the cluster checks need of it: its batch key; its records are not kept.
        if self.out.collected.wants() {
            self.out.collected.big(big, idx);
        }
        let classified = format::classify(entry);
        if let Some(b) = &mut self.batches {
            b.entry(&classified, pos, entry.offset());
        }
        let crc_valid = !opts.check_crc || big.crc_valid();
        let (mut ev, compressed) = match &classified {
            Classified::V2(b) => (BatchEvent::from_v2(b, idx, false), b.compression()),
            Classified::Legacy(m) => (BatchEvent::from_legacy(m, idx, false), m.compression()),
            // The header alone parses for magic 0-2 (the walk checked magic and size); an
            // entry of a negative magic is handed out only under a legacy CRC that holds
            // (`LegacyRecord.ensureValid`): recovery keeps it, readers refuse it.
            Classified::Invalid(e) => {
                let offset = entry.offset();
                self.out
                    .findings
                    .push(invalid_batch(ctx, name, pos, Some(offset), e));
                if big.crc_valid() {
                    self.events.push(BatchEvent::recovery_only(
                        idx,
                        pos,
                        u32::try_from(big.len).unwrap_or(u32::MAX),
                        big.magic(),
                        offset,
                    ));
                } else {
                    self.stop_at(pos, Some(offset), || StopReason::InvalidBatch {
                        error: e.to_string(),
                    });
                }
                return;
            }
        };
        ev.size = u32::try_from(big.len).unwrap_or(u32::MAX);
        ev.crc_valid = crc_valid;
        // The header-only copy has no record to decode: a control record not read is
        // unknown, not malformed.
        ev.control = None;
        if !crc_valid {
            self.out.findings.push(crc_finding(
                ctx,
                name,
                &ev,
                big.stored_crc(),
                big.computed_crc,
            ));
            let at = if ev.magic >= 2 {
                ev.base_offset
            } else {
                ev.last_offset
            };
            self.stop_at(pos, Some(at), || StopReason::CrcMismatch);
        } else if let Classified::V2(b) = &classified {
            check_v2_header(ctx, name, b, &ev, base, &mut self.out.findings);
            if b.is_control() {
                self.out.findings.push(
                    segment_finding(
                        ctx,
                        Kind::InvalidBatch,
                        name,
                        pos,
                        format!(
                            "{name}: control batch at offset {} is {} bytes; Kafka writes a control batch with one record of a few dozen bytes, and this one was not decoded (its marker, if any, is not applied)",
                            ev.base_offset, big.len
                        ),
                    )
                    .offset(ev.base_offset)
                    .evidence(json!({"structure": "control batch", "size": big.len, "max_decoded_size": BIG_ENTRY}))
                    .broker("never written by a broker (control batches come from the coordinator's WriteTxnMarkers or the KRaft layer, and clients may not write them)"),
                );
            } else if opts.deep || RECORDS_READ.contains(&ctx.topic.as_str()) {
                self.not_decoded(big, &ev, compressed);
            }
        } else {
            // Legacy: a compressed wrapper is opened to learn its first offset (the wrapper
            // offset stands in for it here), its records with --deep.
            if compressed != Compression::None || opts.deep {
                self.not_decoded(big, &ev, compressed);
            }
            check_offset_range(ctx, name, &ev, base, &mut self.out.findings);
        }
        self.out.records += if ev.magic >= 2 {
            ev.records_count.max(0) as u64
        } else {
            1
        };
        if ev.crc_valid && ev.timestamp_type != TimestampType::NoTimestampType {
            self.out.max_timestamp = self.out.max_timestamp.max(ev.max_timestamp);
            if ev.broker_stamped() {
                self.out.broker_timestamp = self.out.broker_timestamp.max(ev.max_timestamp);
            }
        }
        self.events.push(ev);
    }

    fn not_decoded(&mut self, big: &BigEntry, ev: &BatchEvent, compression: Compression) {
        let (ctx, name) = (self.ctx, self.name);
        self.out.findings.push(
            segment_finding(
                ctx,
                Kind::BatchNotDecoded,
                name,
                big.position,
                format!(
                    "{name}: batch at offset {} (byte {}) is {} bytes, more than the {} MiB klogscan holds in memory: its header and CRC were checked (streaming), its records were not decoded",
                    ev.base_offset,
                    big.position,
                    big.len,
                    BIG_ENTRY >> 20
                ),
            )
            .offset(ev.base_offset)
            .evidence(json!({"size": big.len, "max_decoded_size": BIG_ENTRY, "magic": ev.magic, "compression": compression.name(), "records_count": ev.records_count}))
            .broker("not applicable: a limit of this analysis, not of the data")
            .remediation("inspect this batch's records with kafka-dump-log.sh --deep-iteration (klogscan dump prints its header and CRC verdict, not its records)"),
        );
    }
}
