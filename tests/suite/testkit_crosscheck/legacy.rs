//! Legacy magic 0/1 messages and compressed wrappers: what the testkit writes, decompressed
//! independently of klogscan's codec module and read through klogscan's reader.

use super::*;

#[test]
fn legacy_messages_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("legacy", 0).start_time(T0);
    p.legacy(Legacy::v0().values(["a", "b"]).message(Some(b"k"), None));
    p.legacy(Legacy::v1().values(["c"]).message(None, Some(b"d")));
    let m = p.write(dir.path()).unwrap();
    let data = log_bytes(&m);
    let msgs: Vec<LegacyMessage> = Entries::new(&data, 0)
        .map(|e| LegacyMessage::new(e).unwrap())
        .collect();
    assert_eq!(msgs.len(), 5);
    for (i, (msg, mb)) in msgs.iter().zip(&m.batches).enumerate() {
        assert!(msg.is_valid());
        assert_eq!(msg.offset(), i as i64);
        assert_eq!(msg.offset(), mb.last_offset);
        assert_eq!(msg.magic(), if i < 3 { 0 } else { 1 });
        assert_eq!(msg.compression(), Compression::None);
    }
    assert_eq!(msgs[0].timestamp(), -1);
    assert_eq!(msgs[0].timestamp_type(), TimestampType::NoTimestampType);
    assert_eq!(msgs[2].key(), Some(&b"k"[..]));
    assert_eq!(msgs[2].value(), None);
    // the clock moved one step (1 s) after the first legacy append
    assert_eq!(msgs[3].timestamp(), T0 + 1000);
    assert_eq!(msgs[4].timestamp(), T0 + 1001);
    assert_eq!(m.batches[4].max_timestamp, T0 + 1001);
    assert_eq!(msgs[3].value(), Some(&b"c"[..]));
}

/// Decompress a legacy wrapper value independently of klogscan's codec module.
fn unwrap_legacy(codec: Compression, v: &[u8]) -> Vec<u8> {
    use std::io::Read;
    match codec {
        Compression::Gzip => {
            let mut o = Vec::new();
            flate2::read::MultiGzDecoder::new(v)
                .read_to_end(&mut o)
                .unwrap();
            o
        }
        Compression::Snappy => {
            assert_eq!(&v[..16], &encode::XERIAL_HEADER);
            let mut o = Vec::new();
            let mut pos = 16;
            while pos < v.len() {
                let n = i32::from_be_bytes(v[pos..pos + 4].try_into().unwrap()) as usize;
                o.extend(
                    snap::raw::Decoder::new()
                        .decompress_vec(&v[pos + 4..pos + 4 + n])
                        .unwrap(),
                );
                pos += 4 + n;
            }
            o
        }
        Compression::Lz4 => {
            let mut o = Vec::new();
            let mut pos = 7;
            loop {
                let n = u32::from_le_bytes(v[pos..pos + 4].try_into().unwrap());
                pos += 4;
                if n == 0 {
                    break;
                }
                let len = (n & 0x7fff_ffff) as usize;
                if n & 0x8000_0000 != 0 {
                    o.extend_from_slice(&v[pos..pos + len]);
                } else {
                    o.extend(lz4_flex::block::decompress(&v[pos..pos + len], 65536).unwrap());
                }
                pos += len;
            }
            o
        }
        c => panic!("{c:?}"),
    }
}

#[test]
fn legacy_wrappers_hold_absolute_or_relative_inner_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("wrap", 0).start_time(T0);
    p.legacy(Legacy::v0().values(["x"])); // offset 0
    let cases = [
        (0u8, Codec::Gzip),
        (0, Codec::SnappyXerial),
        (0, Codec::Lz4),
        (1, Codec::Gzip),
        (1, Codec::SnappyXerial),
        (1, Codec::Lz4),
    ];
    for (magic, c) in cases {
        let l = if magic == 0 {
            Legacy::v0()
        } else {
            Legacy::v1()
        };
        p.legacy(l.codec(c).values(["one", "two", "three"]));
    }
    let m = p.write(dir.path()).unwrap();
    let data = log_bytes(&m);
    let msgs: Vec<LegacyMessage> = Entries::new(&data, 0)
        .map(|e| LegacyMessage::new(e).unwrap())
        .collect();
    assert_eq!(msgs.len(), 7);
    for (k, (w, (magic, c))) in msgs[1..].iter().zip(cases).enumerate() {
        let first = 1 + 3 * k as i64;
        assert!(w.is_valid());
        assert_eq!(w.magic(), magic);
        assert_eq!(w.offset(), first + 2, "wrapper offset = last inner offset");
        assert_eq!(w.key(), None);
        let value = w.value().unwrap();
        if c == Codec::Lz4 {
            let hc = value[6];
            assert_eq!(hc, encode::lz4_header_checksum(0x60, 0x40, magic == 0));
        }
        let set = unwrap_legacy(w.compression(), value);
        let inner: Vec<LegacyMessage> = Entries::new(&set, 0)
            .map(|e| LegacyMessage::new(e).unwrap())
            .collect();
        assert_eq!(inner.len(), 3);
        for (i, m) in inner.iter().enumerate() {
            assert!(m.is_valid());
            assert_eq!(m.magic(), magic);
            assert_eq!(m.compression(), Compression::None);
            let want = if magic == 0 {
                first + i as i64
            } else {
                i as i64
            };
            assert_eq!(m.offset(), want);
            if magic == 1 {
                assert!(m.timestamp() <= w.timestamp());
            }
        }
        assert_eq!(inner[2].value(), Some(&b"three"[..]));
        if magic == 1 {
            assert_eq!(
                w.timestamp(),
                inner.iter().map(|m| m.timestamp()).max().unwrap()
            );
        }
    }
}

#[test]
fn legacy_wrappers_through_the_reader() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = PartitionBuilder::new("wrapr", 0).start_time(T0);
    p.legacy(Legacy::v0().codec(Codec::Lz4).values(["a", "b"]));
    p.legacy(Legacy::v1().codec(Codec::Gzip).values(["c", "d", "e"]));
    let m = p.write(dir.path()).unwrap();
    let data = log_bytes(&m);
    let mut offsets = Vec::new();
    for e in Entries::new(&data, 0) {
        let msg = LegacyMessage::new(e).unwrap();
        let mut dec = Decompressor::default();
        for im in msg.inner_messages(&mut dec).unwrap() {
            offsets.push(im.unwrap().offset);
        }
    }
    assert_eq!(offsets, vec![0, 1, 2, 3, 4]);
}
