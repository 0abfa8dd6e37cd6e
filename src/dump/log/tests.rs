use super::json_text::*;
use super::*;

#[test]
fn hand_written_json_matches_serde_json() {
    let mut vals: Vec<u64> = vec![0, u64::MAX, u64::MAX - 1, i64::MAX as u64];
    let mut p = 1u64;
    for _ in 0..20 {
        vals.extend([p - 1, p, p + 1, p.wrapping_mul(7)]);
        p = p.wrapping_mul(10);
    }
    for v in vals {
        let mut b = Vec::new();
        push_u64(&mut b, v);
        assert_eq!(b, serde_json::to_vec(&v).unwrap(), "{v}");
        let s = v as i64;
        let mut b = Vec::new();
        push_i64(&mut b, s);
        assert_eq!(b, serde_json::to_vec(&s).unwrap(), "{s}");
    }
    for s in [
        "",
        "plain",
        "quote\"",
        "back\\slash",
        "tab\t nl\n",
        "\u{1}\u{1f}\u{7f}",
        "ünïcödé ✓",
    ] {
        let mut b = Vec::new();
        push_str(&mut b, s);
        assert_eq!(b, serde_json::to_vec(s).unwrap(), "{s:?}");
    }
}

#[test]
fn sequences_wrap_like_java() {
    assert_eq!(crate::read::format::bytes::increment_sequence(-1, 5), -1);
    assert_eq!(crate::read::format::bytes::increment_sequence(3, 4), 7);
    assert_eq!(
        crate::read::format::bytes::increment_sequence(i32::MAX, 1),
        0
    );
    assert_eq!(
        crate::read::format::bytes::increment_sequence(i32::MAX - 1, 3),
        1
    );
    // A corrupt negative delta must not panic.
    let _ = crate::read::format::bytes::increment_sequence(5, -1);
    let _ = crate::read::format::bytes::increment_sequence(0, i32::MIN);
}

use crate::read::format::bytes::{put_varint, put_varlong};

fn run(data: &[u8], opts: &DumpOptions) -> (String, String, LogDumpSummary) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let s = dump_log(
        Path::new("00000000000000000010.log"),
        data,
        opts,
        &mut out,
        &mut err,
    )
    .unwrap();
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
        s,
    )
}

/// One v2 batch: LogAppendTime, delete horizon 500, one record with headers and a
/// value that is not UTF-8.
fn v2_batch() -> Vec<u8> {
    let mut rec = vec![0u8];
    put_varlong(&mut rec, 0);
    put_varint(&mut rec, 0);
    put_varint(&mut rec, 1);
    rec.push(b'k');
    put_varint(&mut rec, 2);
    rec.extend_from_slice(&[0xff, 0xfe]);
    put_varint(&mut rec, 2);
    put_varint(&mut rec, 2);
    rec.extend_from_slice(b"h1");
    put_varint(&mut rec, 1);
    rec.push(b'x');
    put_varint(&mut rec, 2);
    rec.extend_from_slice(b"h2");
    put_varint(&mut rec, -1);
    let mut records = Vec::new();
    put_varint(&mut records, rec.len() as i32);
    records.extend_from_slice(&rec);
    let mut b = Vec::new();
    b.extend_from_slice(&10i64.to_be_bytes());
    b.extend_from_slice(&((49 + records.len()) as i32).to_be_bytes());
    b.extend_from_slice(&2i32.to_be_bytes()); // leader epoch
    b.push(2);
    b.extend_from_slice(&[0; 4]); // crc, filled below
    b.extend_from_slice(&(0x08i16 | 0x40).to_be_bytes()); // LogAppendTime + horizon
    b.extend_from_slice(&0i32.to_be_bytes()); // lastOffsetDelta
    b.extend_from_slice(&500i64.to_be_bytes()); // baseTimestamp = horizon
    b.extend_from_slice(&900i64.to_be_bytes()); // maxTimestamp
    b.extend_from_slice(&3i64.to_be_bytes());
    b.extend_from_slice(&1i16.to_be_bytes());
    b.extend_from_slice(&5i32.to_be_bytes());
    b.extend_from_slice(&1i32.to_be_bytes());
    b.extend_from_slice(&records);
    let crc = crate::read::format::crc::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

#[test]
fn v2_text_lines() {
    let b = v2_batch();
    let crc = crate::read::format::crc::crc32c(&b[21..]);
    let opts = DumpOptions {
        print_data_log: true,
        ..Default::default()
    };
    let (out, err, s) = run(&b, &opts);
    assert_eq!(
        out,
        format!(
            "Dumping 00000000000000000010.log\nLog starting offset: 10\n\
             baseOffset: 10 lastOffset: 10 count: 1 baseSequence: 5 lastSequence: 5 producerId: 3 producerEpoch: 1 partitionLeaderEpoch: 2 isTransactional: false isControl: false deleteHorizonMs: OptionalLong[500] position: 0 LogAppendTime: 900 size: {} magic: 2 compresscodec: none crc: {crc} isvalid: true\n\
             | offset: 10 LogAppendTime: 900 keySize: 1 valueSize: 2 sequence: 5 headerKeys: [h1,h2] key: k payload: \u{FFFD}\u{FFFD}\n",
            b.len()
        )
    );
    assert!(err.is_empty());
    assert!(!s.has_problems());
    // JSON: bytes that are not UTF-8 are base64.
    let (out, _, _) = run(
        &b,
        &DumpOptions {
            format: DumpFormat::Json,
            ..opts
        },
    );
    let batch: serde_json::Value = serde_json::from_str(out.lines().nth(1).unwrap()).unwrap();
    assert_eq!(batch["deleteHorizonMs"], 500);
    assert_eq!(batch["records"][0]["value"]["bytes"], "//4=");
    assert_eq!(
        batch["records"][0]["headers"][1]["value"],
        serde_json::Value::Null
    );
    assert_eq!(batch["records"][0]["headers"][0]["value"]["text"], "x");
}

#[test]
fn legacy_batch_line() {
    // magic 1, CreateTime 1000, null key, value "abc", offset 7.
    let mut m = vec![1u8, 0];
    m.extend_from_slice(&1000i64.to_be_bytes());
    m.extend_from_slice(&(-1i32).to_be_bytes());
    m.extend_from_slice(&3i32.to_be_bytes());
    m.extend_from_slice(b"abc");
    let crc = crc32fast::hash(&m);
    let mut e = Vec::new();
    e.extend_from_slice(&7i64.to_be_bytes());
    e.extend_from_slice(&((m.len() + 4) as i32).to_be_bytes());
    e.extend_from_slice(&crc.to_be_bytes());
    e.extend_from_slice(&m);
    let deep = DumpOptions {
        deep_iteration: true,
        ..Default::default()
    };
    let (out, err, s) = run(&e, &deep);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[2],
        format!(
            "offset: 7 position: 0 CreateTime: 1000 size: {} magic: 1 compresscodec: none crc: {crc} isvalid: true",
            e.len()
        )
    );
    assert!(err.is_empty());
    assert_eq!(s.invalid_batches, 0);
    // Record lines come from `LegacyMessage::inner_messages` (implemented on the codec
    // branch); when present they must have Kafka's legacy shape, stray brace included.
    if let Some(r) = lines.get(3) {
        assert_eq!(
            *r,
            format!(
                "| offset: 7 CreateTime: 1000 keySize: -1 valueSize: 3 isValid: true crc: {crc}}}"
            )
        );
    }
    // A flipped byte: CRC fails, still printed.
    let mut bad = e.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    let (out, _, s) = run(&bad, &DumpOptions::default());
    assert!(out.contains(" isvalid: false"));
    assert_eq!(s.invalid_batches, 1);
    assert!(s.has_problems());
}

#[test]
fn file_kinds() {
    assert_eq!(
        LogFileKind::of(Path::new("/x/00000000000000000042.log")),
        LogFileKind::Segment {
            start_offset: Some(42)
        }
    );
    assert_eq!(
        LogFileKind::of(Path::new("00000000000000007364-0000000001.checkpoint")),
        LogFileKind::Snapshot {
            end_offset: Some(7364),
            epoch: Some(1)
        }
    );
    assert_eq!(
        LogFileKind::of(Path::new("bootstrap.checkpoint")),
        LogFileKind::BootstrapSnapshot
    );
}
