//! Entries too large to hold whole: CRC-checked streaming ("one ~2 GiB batch per
//! partition").
//!
//! A walk that can do without an entry's bytes (the scan: its events need only the batch
//! header) asks for [`Item`]s instead of [`RawEntry`]s. An entry larger than [`BIG_ENTRY`]
//! then arrives as an [`Item::Big`]: its header (the first [`V2_HEADER_SIZE`] bytes) and its
//! CRC, computed over the rest in bounded steps — read in chunks with `pread` (read policy),
//! or over the map with the pages behind the cursor released (`madvise(DONTNEED)`, map
//! policy) — so memory stays bounded whatever the entry's size. The CRC ranges are the
//! broker's: CRC-32C from the attributes field (byte 21) for magic 2 (`DefaultRecordBatch.
//! ensureValid`), CRC-32 from the magic byte (byte 16) for magic 0/1
//! (`LegacyRecord.ensureValid`).

use super::prefetch::{self, Ahead};
use super::{FileData, Handle, read_exact_at};
use crate::read::format::RawEntry;
use crate::read::format::batch::V2_HEADER_SIZE;
use std::io;

/// Entries larger than this are CRC-checked streaming when the walk asks for [`Item`]s
/// (never held whole). Far above Kafka's default `message.max.bytes` (1 MiB), so the
/// batches of a real log are always decoded; below it, an entry is buffered whole, so a
/// walk holds at most this much of one entry.
pub const BIG_ENTRY: usize = 64 << 20;

/// What a walk that does not need large entries' bytes receives.
#[derive(Debug)]
pub enum Item<'a> {
    /// A whole entry (at most [`BIG_ENTRY`] bytes, or any size when it is mapped and the
    /// walk releases it behind the cursor).
    Entry(RawEntry<'a>),
    /// An entry larger than [`BIG_ENTRY`], checked streaming.
    Big(BigEntry),
}

/// An entry larger than [`BIG_ENTRY`]: its header and its CRC, never its bytes.
#[derive(Debug, Clone)]
pub struct BigEntry {
    /// Byte position of the entry in the file.
    pub position: u64,
    /// The entry's length, `12 + size`.
    pub len: u64,
    /// Its first [`V2_HEADER_SIZE`] bytes (a v2 header; for magic 0/1, the message header
    /// and the start of its key).
    pub header: [u8; V2_HEADER_SIZE],
    /// The CRC computed over the entry's CRC range (CRC-32C for magic 2, CRC-32 for 0/1).
    pub computed_crc: u32,
}

impl BigEntry {
    pub fn magic(&self) -> i8 {
        self.header[16] as i8
    }
    /// The CRC stored in the entry (bytes 17–20 for magic 2, 12–15 for magic 0/1).
    pub fn stored_crc(&self) -> u32 {
        let at = if self.magic() >= 2 { 17 } else { 12 };
        u32::from_be_bytes([
            self.header[at],
            self.header[at + 1],
            self.header[at + 2],
            self.header[at + 3],
        ])
    }
    pub fn crc_valid(&self) -> bool {
        self.stored_crc() == self.computed_crc
    }

    /// A small entry with this entry's header fields and an empty body: a v2 batch header
    /// whose `batchLength` says no records follow, or a legacy message with a null key and
    /// value. The header views of `format` read it as they read the real entry (offsets,
    /// producer fields, attributes, timestamps); its CRC, size, records and key/value are
    /// not the real entry's.
    pub fn header_only(&self) -> Vec<u8> {
        let h = &self.header;
        if self.magic() >= 2 {
            let mut v = h.to_vec();
            v[8..12].copy_from_slice(&((V2_HEADER_SIZE - 12) as i32).to_be_bytes());
            return v;
        }
        // offset(8) size(4) crc(4) magic(1) attributes(1) [timestamp(8)] keyLength(4) valueLength(4)
        let fixed = if self.magic() == 1 { 26 } else { 18 };
        let mut v = h[..fixed].to_vec();
        v.extend_from_slice(&(-1i32).to_be_bytes());
        v.extend_from_slice(&(-1i32).to_be_bytes());
        let size = (v.len() - 12) as i32;
        v[8..12].copy_from_slice(&size.to_be_bytes());
        v
    }
}

/// Where an entry's CRC range starts.
fn crc_from(magic: i8) -> usize {
    if magic >= 2 { 21 } else { 16 }
}

/// A running CRC of either kind.
enum Crc {
    C(u32),
    Ieee(crc32fast::Hasher),
}

impl Crc {
    fn new(magic: i8) -> Crc {
        if magic >= 2 {
            Crc::C(0)
        } else {
            Crc::Ieee(crc32fast::Hasher::new())
        }
    }
    fn update(&mut self, b: &[u8]) {
        match self {
            Crc::C(c) => *c = crc32c::crc32c_append(*c, b),
            Crc::Ieee(h) => h.update(b),
        }
    }
    fn finish(self) -> u32 {
        match self {
            Crc::C(c) => c,
            Crc::Ieee(h) => h.finalize(),
        }
    }
}

fn header_of(bytes: &[u8]) -> [u8; V2_HEADER_SIZE] {
    let mut h = [0u8; V2_HEADER_SIZE];
    let n = bytes.len().min(V2_HEADER_SIZE);
    h[..n].copy_from_slice(&bytes[..n]);
    h
}

/// The item for entry `e` of the mapped file `data`: [`Item::Big`] when it is larger than
/// [`BIG_ENTRY`] (its CRC computed over the map, pages released behind the cursor every
/// [`super::RELEASE_STEP`] bytes), else the entry itself; what follows it in the map is
/// asked for ahead of the walk as `how` says.
#[inline]
pub fn mapped_item<'a>(data: &FileData, e: RawEntry<'a>, how: Ahead) -> Item<'a> {
    prefetch::ahead(data, e.bytes, how);
    item_over(Some(data), e, BIG_ENTRY)
}

/// The item for `e` with threshold `big`; `data`: the map `e` is a slice of, whose pages
/// are released behind the CRC (`None`: `e` is in a buffer, nothing is released).
#[inline]
pub(super) fn item_over<'a>(data: Option<&FileData>, e: RawEntry<'a>, big: usize) -> Item<'a> {
    if e.len() <= big || e.len() < V2_HEADER_SIZE {
        return Item::Entry(e);
    }
    big_item(data, e)
}

/// [`item_over`] for an entry over the threshold: its CRC computed in steps, the map's
/// pages released behind it. Out of line: the per-entry path above stays a compare.
#[cold]
#[inline(never)]
fn big_item<'a>(data: Option<&FileData>, e: RawEntry<'a>) -> Item<'a> {
    // Where the entry lies in the map (None: not a slice of it; nothing is released).
    let base = data.and_then(|data| {
        (e.bytes.as_ptr() as usize)
            .checked_sub(data.as_ptr() as usize)
            .filter(|&b| b + e.len() <= data.len())
            .map(|b| (data, b))
    });
    let magic = e.magic();
    let mut crc = Crc::new(magic);
    let mut at = crc_from(magic);
    while at < e.len() {
        let to = (at + super::RELEASE_STEP).min(e.len());
        crc.update(&e.bytes[at..to]);
        if let Some((data, b)) = base {
            data.release_range(b + at, b + to);
        }
        at = to;
    }
    Item::Big(BigEntry {
        position: e.position,
        len: e.len() as u64,
        header: header_of(e.bytes),
        computed_crc: crc.finish(),
    })
}

/// Check the entry of `len` bytes at `position` of `file` streaming: `have` holds its
/// first bytes (at least [`V2_HEADER_SIZE`]), the rest is read in `scratch`-sized chunks
/// with `pread` and CRC-checked as it comes, never held.
pub(super) fn read_big(
    file: &Handle,
    position: u64,
    len: u64,
    have: &[u8],
    scratch: &mut [u8],
) -> io::Result<BigEntry> {
    let magic = have[16] as i8;
    let mut crc = Crc::new(magic);
    let from = crc_from(magic);
    let have = &have[..have.len().min(len as usize)];
    crc.update(have.get(from..).unwrap_or(&[]));
    let mut at = have.len().max(from) as u64;
    while at < len {
        let n = (scratch.len() as u64).min(len - at) as usize;
        read_exact_at(file, &mut scratch[..n], position + at)?;
        crc.update(&scratch[..n]);
        at += n as u64;
    }
    Ok(BigEntry {
        position,
        len,
        header: header_of(have),
        computed_crc: crc.finish(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{ReadPolicy, walk_items_chunked};
    use super::*;
    use crate::read::format::{BatchView, LegacyMessage, Tail};

    /// A v2 batch of `len` bytes at `offset` (body bytes vary), with a valid CRC.
    fn v2(offset: i64, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        v[..8].copy_from_slice(&offset.to_be_bytes());
        v[8..12].copy_from_slice(&((len - 12) as i32).to_be_bytes());
        v[16] = 2;
        v[57..61].copy_from_slice(&1i32.to_be_bytes());
        for (i, b) in v[61..].iter_mut().enumerate() {
            *b = (i % 253) as u8;
        }
        let crc = crate::read::format::crc::crc32c(&v[21..]);
        v[17..21].copy_from_slice(&crc.to_be_bytes());
        v
    }

    /// A magic-1 message of `len` bytes at `offset` whose value fills it, valid CRC.
    fn legacy(offset: i64, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        v[..8].copy_from_slice(&offset.to_be_bytes());
        v[8..12].copy_from_slice(&((len - 12) as i32).to_be_bytes());
        v[16] = 1;
        v[18..26].copy_from_slice(&1_700_000_000_000i64.to_be_bytes());
        v[26..30].copy_from_slice(&(-1i32).to_be_bytes());
        v[30..34].copy_from_slice(&((len - 34) as i32).to_be_bytes());
        for (i, b) in v[34..].iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        let crc = crc32fast::hash(&v[16..]);
        v[12..16].copy_from_slice(&crc.to_be_bytes());
        v
    }

    /// (position, len, crc valid, computed crc, big?) of every item.
    type Seen = Vec<(u64, u64, bool, u32, bool)>;

    fn walk(path: &std::path::Path, policy: ReadPolicy, chunk: usize) -> (Seen, Tail) {
        let mut seen = Vec::new();
        let (tail, _) = walk_items_chunked(
            path,
            policy,
            None,
            chunk,
            (Some(4096), super::super::Ahead::Bytes),
            |i| {
                seen.push(match i {
                    Item::Entry(e) => {
                        let (ok, crc) = if e.magic() >= 2 {
                            let b = BatchView::new(e.bytes, e.position).unwrap();
                            (b.is_valid(), b.compute_crc())
                        } else {
                            let m = LegacyMessage::new(e).unwrap();
                            (m.is_valid(), m.compute_crc())
                        };
                        assert!(e.len() <= 4096, "an entry over the threshold came whole");
                        (e.position, e.len() as u64, ok, crc, false)
                    }
                    Item::Big(b) => (b.position, b.len, b.crc_valid(), b.computed_crc, true),
                })
            },
        )
        .unwrap();
        (seen, tail)
    }

    #[test]
    fn large_entries_are_checked_streaming_with_the_crc_of_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut data = Vec::new();
        let mut whole = Vec::new();
        for e in [
            v2(0, 300),
            v2(1, 20_000),
            legacy(2, 100),
            legacy(3, 9_000),
            v2(4, 4_097),
            v2(5, 4_096),
        ] {
            let crc = if e[16] >= 2 {
                crate::read::format::crc::crc32c(&e[21..])
            } else {
                crc32fast::hash(&e[16..])
            };
            whole.push((data.len() as u64, e.len() as u64, true, crc, e.len() > 4096));
            data.extend(e);
        }
        // A flipped byte deep inside a large entry fails its CRC.
        let mut bad = data.clone();
        bad[300 + 15_000] ^= 1;
        for (name, bytes, ok) in [("good", &data, true), ("bad", &bad, false)] {
            let p = dir.path().join(format!("{name}.log"));
            std::fs::write(&p, bytes).unwrap();
            let mapped = walk(&p, ReadPolicy::Map, 0);
            assert_eq!(mapped.1, Tail::Clean);
            if ok {
                assert_eq!(mapped.0, whole);
            } else {
                assert!(!mapped.0[1].2 && mapped.0[1].4, "{:?}", mapped.0[1]);
                assert!(mapped.0.iter().enumerate().all(|(i, s)| i == 1 || s.2));
            }
            for chunk in [64usize, 100, 1000, 4096, 1 << 20] {
                assert_eq!(
                    walk(&p, ReadPolicy::Read, chunk),
                    mapped,
                    "{name} chunk {chunk}"
                );
            }
        }
    }

    #[test]
    fn a_large_partial_entry_is_classified_without_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut data = v2(0, 300);
        data.extend(&v2(1, 20_000)[..10_000]);
        let p = dir.path().join("partial.log");
        std::fs::write(&p, &data).unwrap();
        let want = Tail::Partial {
            position: 300,
            declared: 20_000,
            available: 10_000,
            offset: 1,
        };
        assert_eq!(walk(&p, ReadPolicy::Map, 0).1, want);
        for chunk in [64usize, 310, 1000, 1 << 20] {
            let (seen, tail) = walk(&p, ReadPolicy::Read, chunk);
            assert_eq!((seen.len(), tail), (1, want), "chunk {chunk}");
        }
    }

    #[test]
    fn the_header_only_copy_reads_as_the_entry() {
        let e = v2(7, 9000);
        let big = BigEntry {
            position: 5,
            len: 9000,
            header: header_of(&e),
            computed_crc: crate::read::format::crc::crc32c(&e[21..]),
        };
        assert!(big.crc_valid());
        let h = big.header_only();
        let (a, b) = (
            BatchView::new(&e, 5).unwrap(),
            BatchView::new(&h, 5).unwrap(),
        );
        assert_eq!(
            (
                a.base_offset(),
                a.last_offset(),
                a.records_count(),
                a.max_timestamp()
            ),
            (
                b.base_offset(),
                b.last_offset(),
                b.records_count(),
                b.max_timestamp()
            )
        );
        let l = legacy(9, 5000);
        let big = BigEntry {
            position: 0,
            len: 5000,
            header: header_of(&l),
            computed_crc: crc32fast::hash(&l[16..]),
        };
        assert!(big.crc_valid());
        let h = big.header_only();
        let m = LegacyMessage::new(RawEntry {
            position: 0,
            bytes: &h,
        })
        .unwrap();
        assert_eq!(
            (m.offset(), m.timestamp(), m.magic()),
            (9, 1_700_000_000_000, 1)
        );
    }
}
