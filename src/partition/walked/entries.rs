//! The entries of internal topics the walk keeps records of besides v2 batches: legacy
//! (magic 0/1) messages, and entries too large to hold.

use super::{
    BatchKey, Collector, Internal, LogItem, LogRecord, decompressor, offset_range, record_bytes,
};
use crate::read::format::{self, RawEntry};

impl Collector {
    /// A legacy (magic 0/1) entry of an internal topic: its messages, a compressed
    /// wrapper's inner ones included, are the coordinators' records as any batch's are
    /// (their loads iterate `MemoryRecords.batches()`, legacy ones too:
    /// `CoordinatorLoaderImpl`, `GroupMetadataManager.doLoadGroupsAndOffsets`). A legacy
    /// message has no producer id (never transactional) and no leader epoch.
    pub(super) fn legacy_entry(&mut self, e: RawEntry<'_>, segment: u32, internal: Internal) {
        let Ok(m) = format::LegacyMessage::new(e) else {
            return; // not framed as a message: the walk's own checks report it
        };
        let dec = decompressor(&mut self.dec, self.max_decompressed);
        let undecodable = |message: String| LogItem::Undecodable {
            segment,
            message,
            offsets: offset_range(m.offset(), m.offset()),
        };
        let inner = match m.inner_messages(dec) {
            Ok(i) => i,
            Err(err) => {
                self.items.push(undecodable(err.to_string()));
                return;
            }
        };
        for r in inner {
            match r {
                Ok(i) => {
                    let r = LogRecord {
                        offset: i.offset,
                        segment,
                        position: e.position,
                        timestamp: i.timestamp,
                        leader_epoch: -1,
                        producer_id: None,
                        idempotent_producer_id: None,
                        key: i.message.key().map(<[u8]>::to_vec),
                        value: i.message.value().map(<[u8]>::to_vec),
                    };
                    if internal == Internal::TransactionState && !self.keep.add(record_bytes(&r)) {
                        self.items = Vec::new();
                        return;
                    }
                    self.items.push(LogItem::Record(r));
                }
                Err(err) => {
                    self.items.push(undecodable(err.to_string()));
                    break;
                }
            }
        }
    }

    /// An entry too large to hold (`segment::BigEntry`, checked streaming): its batch key
    /// from the header; on an internal topic, its records cannot be kept, so it is an
    /// [`LogItem::Undecodable`] saying so (the coordinators' views then know they miss it).
    pub(crate) fn big(&mut self, big: &crate::read::segment::BigEntry, segment: u32) {
        self.read_past(big.position.saturating_add(big.len));
        let key = BatchKey::of_big(big, segment);
        if let (Some(b), Some(k)) = (&mut self.batches, &key) {
            b.push(*k);
        }
        let control = big.magic() >= 2 && big.header[22] & 0x20 != 0;
        // A control batch of __transaction_state holds no transaction state.
        if self.internal.is_none()
            || self.keep.dropped
            || (control && self.internal != Some(Internal::ConsumerOffsets))
        {
            return;
        }
        let offset = i64::from_be_bytes(big.header[..8].try_into().unwrap_or([0; 8]));
        self.items.push(LogItem::Undecodable {
            segment,
            offsets: key.and_then(|k| offset_range(k.base_offset, k.last_offset)),
            message: format!(
                "batch at offset {offset} (byte {}) is {} bytes, more than the {} MiB klogscan holds in memory: its records were not read",
                big.position,
                big.len,
                crate::read::segment::BIG_ENTRY >> 20
            ),
        });
    }
}
