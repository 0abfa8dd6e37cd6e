//! Fuzz entry points: one plain function per parser. The `fuzz/` crate wraps each in a
//! libFuzzer target (`cargo fuzz run NAME`, needs nightly or `RUSTC_BOOTSTRAP=1`), and
//! `tests/fuzz_replay.rs` runs them on stable with random bytes (proptest) and on the
//! committed corpus. Each must return normally for every input: no panic, no abort, no
//! unbounded allocation.

use crate::partition::event::{BatchEvent, Classified, classify};
use crate::read::format::{self, Compression, Decompressor, Entries};
use std::hint::black_box;

/// Every result goes through `black_box`: a result dropped unused lets the optimiser
/// delete the parsing that computes it (libFuzzer saw 16 edges of the control parser).
fn keep<T>(t: T) {
    black_box(t);
}

/// Cap used by the fuzz entry points (small, so a bomb is found quickly).
const CAP: usize = 1 << 20;

/// A `.log` image: framing, v2 views, events, records (decompressed), legacy inner messages.
pub fn log_segment(data: &[u8]) {
    let mut dec = Decompressor::new(CAP);
    let mut entries = Entries::new(data, 0);
    for e in entries.by_ref() {
        big_entry(e);
        match classify(e) {
            Classified::V2(b) => {
                let ev = BatchEvent::from_v2(&b, 0, true);
                keep(ev.marker());
                if let Ok(records) = format::batch_records(&b, &mut dec) {
                    for r in records {
                        match r {
                            Ok(r) => {
                                keep(r.headers().count());
                            }
                            Err(_) => break,
                        }
                    }
                }
            }
            Classified::Legacy(m) => {
                keep(BatchEvent::from_legacy(&m, 0, true));
                if let Ok(inner) = m.inner_messages(&mut dec) {
                    for i in inner {
                        if i.is_err() {
                            break;
                        }
                    }
                }
                keep(m.offset_range(&mut dec));
            }
            Classified::Invalid(_) => {}
        }
    }
    keep(entries.tail());
}

/// What the scan makes of an entry too large to hold (`segment::BigEntry`): its header
/// and CRC only, read through a header-only copy.
fn big_entry(e: format::RawEntry<'_>) {
    if e.len() < format::batch::V2_HEADER_SIZE {
        return;
    }
    let mut header = [0u8; format::batch::V2_HEADER_SIZE];
    header.copy_from_slice(&e.bytes[..format::batch::V2_HEADER_SIZE]);
    let big = crate::read::segment::BigEntry {
        position: e.position,
        len: e.len() as u64,
        header,
        computed_crc: 0,
    };
    keep(big.crc_valid());
    let head = big.header_only();
    let copy = format::RawEntry {
        position: e.position,
        bytes: &head,
    };
    match classify(copy) {
        Classified::V2(b) => {
            keep(BatchEvent::from_v2(&b, 0, false));
        }
        Classified::Legacy(m) => {
            keep(BatchEvent::from_legacy(&m, 0, false));
        }
        Classified::Invalid(_) => {}
    }
}

/// A compressed payload: the first byte picks the codec (and the legacy-lz4 flag).
pub fn codec(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let codec = Compression::from_id(1 + sel % 4);
    let mut dec = Decompressor::new(CAP);
    keep(dec.decompress(codec, rest, sel & 0x80 != 0));
}

/// A control record: the first byte splits the rest into key and value.
pub fn control(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let at = (sel as usize).min(rest.len());
    let (k, v) = rest.split_at(at);
    keep(format::control::parse_control(Some(k), Some(v)));
}

/// Index files: the first byte picks offset / time / transaction index; the rest is the file.
/// Also checks the entries against the same bytes read as a log (positions must not panic).
pub fn index(data: &[u8]) {
    use crate::read::format::index::{
        LogBatches, OffsetIndex, TimeIndex, TxnIndex, check_offset_index, check_time_index,
    };
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let base = (sel as i64) << 8;
    let log = LogBatches::from_log(rest);
    match sel % 3 {
        0 => {
            let i = OffsetIndex::new(rest, base);
            keep((i.layout(), i.sanity_check(), i.check(), i.entries().count()));
            keep(check_offset_index(&i, &log));
        }
        1 => {
            let i = TimeIndex::new(rest, base);
            keep((i.layout(), i.sanity_check(), i.check(), i.entries().count()));
            keep(check_time_index(&i, &log));
        }
        _ => {
            let i = TxnIndex::new(rest, base);
            keep((i.sanity_check(), i.check(), i.entries().count()));
        }
    }
}

/// A producer-state snapshot file.
pub fn snapshot(data: &[u8]) {
    if let Ok(s) = crate::read::format::snapshot::ProducerSnapshot::parse(data) {
        for e in s.entries() {
            keep((
                e.first_sequence(),
                e.first_offset(),
                e.open_txn_first_offset(),
            ));
        }
    }
}

/// Text checkpoint and metadata files: the first byte picks the parser.
pub fn checkpoint(data: &[u8]) {
    use crate::read::format::checkpoint::*;
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    // Every checkpoint kind: the offset-checkpoint kinds differ in their checks.
    match sel % 10 {
        0 => keep(parse_offset_checkpoint(
            rest,
            TextFileKind::ReplicationOffsetCheckpoint,
        )),
        1 => keep(parse_leader_epoch_checkpoint(rest)),
        2 => keep(parse_partition_metadata(rest)),
        3 => keep(parse_meta_properties(rest)),
        4 => keep(parse_clean_shutdown(rest)),
        5 => keep(parse_offset_checkpoint(
            rest,
            TextFileKind::RecoveryPointOffsetCheckpoint,
        )),
        6 => keep(parse_offset_checkpoint(
            rest,
            TextFileKind::LogStartOffsetCheckpoint,
        )),
        7 => keep(parse_offset_checkpoint(
            rest,
            TextFileKind::CleanerOffsetCheckpoint,
        )),
        8 => keep(parse_offset_checkpoint(
            rest,
            TextFileKind::OffsetCheckpoint,
        )),
        _ => {
            if let Ok(s) = std::str::from_utf8(rest) {
                keep(decode_uuid(s));
            }
        }
    }
}

/// Split `data` into a key and a value: the first two bytes give the key length.
fn key_value(data: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = data.split_first_chunk::<2>()?;
    let at = (u16::from_be_bytes(*len) as usize).min(rest.len());
    Some(rest.split_at(at))
}

/// A `__transaction_state` record (`format::txnlog`, and the dump's text decoder): the
/// first two bytes give the key length, the rest is key then value.
pub fn txnlog(data: &[u8]) {
    use crate::read::format::txnlog::{LogKey, parse_key, parse_value};
    let Some((k, v)) = key_value(data) else {
        return;
    };
    if let Ok(LogKey::Transaction(key)) = parse_key(k) {
        keep(key.transactional_id.map(|id| id.len()));
    }
    if let Ok(Some(value)) = parse_value(Some(v)) {
        keep((value.state.name(), value.state.is_in_progress()));
        for p in value.partitions.iter().flatten() {
            keep((p.topic.as_deref(), p.partition_ids.len()));
            keep(value.lists(p.topic.as_deref().unwrap_or(""), 0));
        }
    }
    keep(parse_value(None));
    keep(crate::dump::decoders::transaction_log(Some(k), Some(v)));
    keep(crate::dump::decoders::transaction_log(Some(k), None));
}

/// A `__consumer_offsets` / `__share_group_state` record (the dump's text decoder, and
/// `format::groups`' decoder and load check) and the KRaft control-record decoders of
/// `dump`: split as in [`txnlog`].
pub fn offsets(data: &[u8]) {
    use crate::dump::decoders;
    let Some((k, v)) = key_value(data) else {
        return;
    };
    keep(decoders::offsets(Some(k), Some(v), 0));
    keep(decoders::offsets(Some(k), None, 1));
    use crate::read::format::groups::{Topic, decode, validate};
    for topic in [Topic::ConsumerOffsets, Topic::ShareGroupState] {
        keep(validate(topic, Some(k), Some(v)));
        keep(decode(topic, Some(k), Some(v)));
    }
    keep(decoders::snapshot_header_json(v));
    keep(decoders::snapshot_footer_json(v));
    keep(decoders::kraft_version_json(v));
    keep(decoders::voters_json(v));
    keep(decoders::leader_change_json(v));
}

/// The records of the metadata-carrying logs and the tiered-storage files beside them: the
/// first byte picks the parser, the rest is the input. A KRaft metadata record value
/// (`format::metadata`, as the leadership replay and `dump` read it), a
/// `__remote_log_metadata` value (as the tiering replay and `dump` read it), a
/// `remote_log_snapshot` file, and an Aiven plugin's manifest and custom metadata.
pub fn metadata(data: &[u8]) {
    use crate::read::format::{aiven, metadata, remote_log};
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    match sel % 5 {
        0 => {
            keep(metadata::decode_record(rest).map(|r| r.type_name()));
            keep(crate::dump::coordinator_json::metadata_record(
                Some(rest),
                0,
            ));
        }
        1 => {
            keep(remote_log::decode(rest).is_ok());
            keep(crate::dump::remote_log_text::record(Some(rest), 0));
        }
        2 => {
            if let Ok(Some((header, entries))) = remote_log::parse_remote_log_snapshot(rest) {
                keep(header.entries);
                // A hostile count cannot make this loop long: each entry consumes bytes.
                for e in entries {
                    if e.is_err() {
                        break;
                    }
                }
            }
        }
        3 => {
            if let Ok(m) = aiven::parse_manifest(rest) {
                keep((m.chunk_index.count(), m.chunk_index.transformed_size()));
                keep(m.chunk_index.chunks().take(1 << 16).count());
            }
        }
        _ => {
            keep(aiven::parse_custom_metadata(rest));
            keep(aiven::decode_chunk_sizes(rest));
            if let Ok(s) = std::str::from_utf8(rest) {
                keep(aiven::decode_transformed_chunks(s));
            }
        }
    }
}
