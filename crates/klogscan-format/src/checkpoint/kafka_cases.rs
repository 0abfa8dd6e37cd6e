//! Kafka's own tests of the small files of a log dir, reproduced on the parsers: what
//! Kafka's readers accept, what they refuse and which Java exception they throw (the
//! exception decides what the broker does next; docs/testing.md, "Kafka's small-file
//! tests"). Kafka test names are cited on each test.

use super::*;

const RP: TextFileKind = TextFileKind::RecoveryPointOffsetCheckpoint;

fn offsets(text: &[u8]) -> Vec<(String, i32, i64)> {
    parse_offset_checkpoint(text, RP)
        .unwrap()
        .into_iter()
        .map(|e| (e.topic, e.partition, e.offset))
        .collect()
}

fn err<T: std::fmt::Debug>(r: Result<T, CheckpointError>) -> CheckpointError {
    r.expect_err("expected the file to be refused")
}

// ----- CheckpointFile (CheckpointReadBuffer.read) -------------------------------------------

/// `CheckpointReadBuffer.read` reads its lines with `BufferedReader.readLine`, which ends a
/// line at `\n`, at `\r\n` and at a lone `\r`: a file written with old Mac line ends reads
/// as the same entries, and a `\r` inside an entry ends it there (the rest is a line of
/// its own, so the entry is malformed and the count does not hold).
#[test]
fn a_lone_carriage_return_ends_a_line_as_read_line_does() {
    assert_eq!(
        offsets(b"0\r2\rfoo 1 5\rbar 2 10\r"),
        vec![("foo".into(), 1, 5), ("bar".into(), 2, 10)]
    );
    assert_eq!(offsets(b"0\r\n1\r\nfoo 1 5"), vec![("foo".into(), 1, 5)]);
    // `foo 1` and `5` are two lines: the first has two fields.
    let e = err(parse_offset_checkpoint(b"0\n1\nfoo 1\r5\n", RP));
    assert_eq!(e.line, 3, "{e}");
    let le = parse_leader_epoch_checkpoint(b"0\r1\r3 40\r").unwrap();
    assert_eq!(
        le,
        vec![EpochEntry {
            epoch: 3,
            start_offset: 40
        }]
    );
}

/// `OffsetCheckpointFile.Formatter.fromString` splits a line on `\s+` and takes three
/// fields: leading whitespace gives an empty first field, so ` 0 7` is the entry of topic
/// `""`, partition 0, offset 7 — valid for the broker (no topic carries that name, so it
/// is never looked up), and ` foo 0 7` has four fields and is malformed.
#[test]
fn leading_whitespace_makes_an_empty_topic_the_broker_accepts() {
    assert_eq!(offsets(b"0\n1\n 0 7\n"), vec![(String::new(), 0, 7)]);
    assert_eq!(offsets(b"0\n1\n\t0 7 \n"), vec![(String::new(), 0, 7)]);
    let e = err(parse_offset_checkpoint(b"0\n1\n foo 0 7\n", RP));
    assert_eq!(e.line, 3);
}

// ----- PartitionMetadataFile (PartitionMetadataReadBuffer.read) -----------------------------

/// `PartitionMetadataReadBuffer.read` splits each of its two lines on `:\s+` and wants two
/// parts; it never looks at the first (the key), so any key is accepted, an empty one
/// included.
#[test]
fn partition_metadata_keys_are_not_checked() {
    let id = "B3_HiNPgSQ6oxG9ZZ6ED5A";
    for text in [
        format!("version: 0\ntopic_id: {id}"),
        format!("v: 0\nid: {id}\n"),
        format!(": 3\n: {id}\n"),
    ] {
        let pm = parse_partition_metadata(text.as_bytes()).unwrap();
        assert_eq!(pm.topic_id_string(), id, "{text:?}");
    }
    assert_eq!(
        parse_partition_metadata(format!(": 3\n: {id}\n").as_bytes())
            .unwrap()
            .version,
        3
    );
}

/// The value is the second part of that split, untrimmed: `Integer.parseInt("0 ")` and
/// `Uuid.fromString("… ")` both fail, so trailing whitespace after the version or the
/// topic id is refused; a second `: ` inside a line makes three parts (malformed), one at
/// its end an empty last part, which the split drops.
#[test]
fn partition_metadata_values_are_not_trimmed() {
    let id = "B3_HiNPgSQ6oxG9ZZ6ED5A";
    let e = err(parse_partition_metadata(
        format!("version: 0 \ntopic_id: {id}").as_bytes(),
    ));
    assert_eq!(e.line, 1, "{e}");
    let e = err(parse_partition_metadata(
        format!("version: 0\ntopic_id: {id} ").as_bytes(),
    ));
    assert_eq!(e.line, 2, "{e}");
    let e = err(parse_partition_metadata(
        format!("version: 0\ntopic_id: x: {id}").as_bytes(),
    ));
    assert_eq!(e.line, 2, "{e}");
    // A trailing `: ` leaves an empty last part, which Java's split drops: two parts, valid.
    let pm = parse_partition_metadata(format!("version: 0: \ntopic_id: {id}: ").as_bytes());
    assert_eq!(pm.unwrap().topic_id_string(), id);
    // A line that is only `: ` splits into nothing at all.
    let e = err(parse_partition_metadata(
        format!(": \ntopic_id: {id}").as_bytes(),
    ));
    assert_eq!(e.line, 1, "{e}");
}

/// The reader reads two lines and stops: what follows them is never parsed, so a file with
/// more lines gives the broker its topic id. Its bytes are still decoded (the reader
/// decodes the whole small file as it fills its buffer, and a byte that is not UTF-8 throws
/// `MalformedInputException`), so bad UTF-8 anywhere is refused.
#[test]
fn partition_metadata_lines_after_the_second_are_not_read() {
    let pm = parse_partition_metadata(b"version: 0\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A\nextra: 1\n")
        .unwrap();
    assert_eq!(pm.topic_id_string(), "B3_HiNPgSQ6oxG9ZZ6ED5A");
    let e = err(parse_partition_metadata(
        b"version: 0\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A\nextra: \xff\n",
    ));
    assert_eq!(e.line, 3, "{e}");
}

// ----- MetaProperties ----------------------------------------------------------------------

/// `MetaPropertiesVersion.fromNumberString` parses `version` with `Integer.parseInt` after
/// `String.trim` (`testV0FromNumberString`, `testV1FromNumberString`, `testFromInvalidNumber`,
/// `testFromInvalidString`): ` 1 `, `01`, `+1` are version 1; `2` and `orange` are refused.
#[test]
fn meta_properties_version_is_a_trimmed_java_int() {
    for v in ["1 ", "01", "+1", "1\t"] {
        let text = format!("version={v}\nnode.id=1\ncluster.id=c\n");
        let m = parse_meta_properties(text.as_bytes()).unwrap();
        assert_eq!(m.version, 1, "{v:?}");
    }
    for v in ["0 ", "00", "-0"] {
        let m = parse_meta_properties(format!("version={v}\n").as_bytes()).unwrap();
        assert_eq!(m.version, 0, "{v:?}");
    }
    for v in ["2", "orange", "", "1.0"] {
        let e = err(parse_meta_properties(format!("version={v}\n").as_bytes()));
        assert_eq!(e.line, 1, "{v:?}: {e}");
    }
}

/// `PropertiesUtils.loadRequiredIntProp` gives `node.id` (v1) and `broker.id` (v0) to
/// `Integer.parseInt` untrimmed: `node.id=1 ` is refused ("Unable to read node.id as a
/// base-10 number").
#[test]
fn node_and_broker_ids_are_not_trimmed() {
    let e = err(parse_meta_properties(
        b"version=1\nnode.id=1 \ncluster.id=c\n",
    ));
    assert_eq!(e.line, 2, "{e}");
    let e = err(parse_meta_properties(b"broker.id=7\t\n"));
    assert_eq!(e.line, 1, "{e}");
    let m = parse_meta_properties(b"broker.id=+7\n").unwrap();
    assert_eq!(m.node_id, Some(7));
}

/// `MetaPropertiesEnsemble.verify` refuses a directory id that `DirectoryId.reserved` calls
/// reserved: most significant half 0 and least significant half below 100, read as a
/// signed long — so not only MIGRATING, UNASSIGNED and LOST (0, 1, 2), but 3 to 99 and
/// every id whose low half has its top bit set.
#[test]
fn every_reserved_directory_id_is_refused() {
    let id = |lsb: i64| {
        let mut b = [0u8; 16];
        b[8..].copy_from_slice(&lsb.to_be_bytes());
        encode_uuid(&b)
    };
    for lsb in [0, 1, 2, 3, 50, 99, -1, i64::MIN] {
        let text = format!("version=0\ndirectory.id={}\n", id(lsb));
        let e = err(parse_meta_properties(text.as_bytes()));
        assert!(e.problem.contains("reserved"), "{lsb}: {e}");
        // `MetaProperties.Builder` reads it (the log dir is not an error dir): the
        // refusal is the ensemble's.
        let m = parse_meta_properties_unverified(text.as_bytes()).unwrap();
        assert!(m.reserved_directory_id().is_some(), "{lsb}");
    }
    for lsb in [100, i64::MAX] {
        let text = format!("version=0\ndirectory.id={}\n", id(lsb));
        assert!(parse_meta_properties(text.as_bytes()).is_ok(), "{lsb}");
        let m = parse_meta_properties_unverified(text.as_bytes()).unwrap();
        assert_eq!(m.reserved_directory_id(), None, "{lsb}");
    }
    // A non-zero high half is never reserved.
    let mut b = [0u8; 16];
    b[7] = 1;
    let text = format!("version=0\ndirectory.id={}\n", encode_uuid(&b));
    assert!(parse_meta_properties(text.as_bytes()).is_ok());
}

// ----- which exception the broker's reader throws -------------------------------------------

/// What the broker does with a refused file depends on the exception its reader throws:
/// `CheckpointFileWithFailureHandler.read` and `PartitionMetadataFile.read` report the log
/// dir to `LogDirFailureChannel` only for an `IOException`. `CheckpointReadBuffer.read`
/// throws one for a version or count line that is not an int (`toInt`), a wrong version,
/// an entry the formatter rejects (field count), a count that does not hold and bad UTF-8
/// (`MalformedInputException`); the formatters' own `Integer.parseInt`/`Long.parseLong`
/// throw `NumberFormatException`, and a negative count makes `new ArrayList<>(count)` throw
/// `IllegalArgumentException` (`OffsetCheckpointFileWithFailureHandlerTest.shouldThrowIfVersionIsNotRecognised`
/// is the first kind).
#[test]
fn offset_checkpoint_failures_name_the_exception_the_broker_meets() {
    use JavaThrows::*;
    for (text, throws) in [
        (&b"1\n0\n"[..], IoException),
        (b"x\n", IoException),
        (b"0\nx\n", IoException),
        (b"0\n1\nfoo 0\n", IoException),
        (b"0\n2\nfoo 0 1\n", IoException),
        (b"0\n1\nfoo 0 1\nbar 0 1\n", IoException),
        (b"0\n1\nfo\xffo 0 1\n", IoException),
        (b"0\n1\nfoo x 1\n", NumberFormatException),
        (b"0\n1\nfoo 0 1.5\n", NumberFormatException),
        (b"0\n1\nfoo 99999999999 1\n", NumberFormatException),
        (b"0\n-1\n", IllegalArgumentException),
    ] {
        let e = err(parse_offset_checkpoint(text, RP));
        assert_eq!(e.throws, throws, "{:?}: {e}", String::from_utf8_lossy(text));
    }
    let e = err(parse_leader_epoch_checkpoint(b"0\n1\n3\n"));
    assert_eq!(e.throws, IoException);
    let e = err(parse_leader_epoch_checkpoint(b"0\n1\n3 x\n"));
    assert_eq!(e.throws, NumberFormatException);
}

/// `PartitionMetadataReadBuffer.read` turns a `NumberFormatException` of the version into an
/// `IOException`, and throws one for a line that does not split in two, a negative version
/// and the all-zero topic id; a topic id that is not base64 makes `Uuid.fromString` throw
/// `IllegalArgumentException` (not caught), and a file that ends before its second line
/// gives `split` a null line (`NullPointerException`).
#[test]
fn partition_metadata_failures_name_the_exception_the_broker_meets() {
    use JavaThrows::*;
    for (text, throws) in [
        (
            &b"version 0\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A"[..],
            IoException,
        ),
        (b"version: x\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A", IoException),
        (
            b"version: -1\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A",
            IoException,
        ),
        (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", IoException),
        (b"version: 0\ntopic_id B3_HiNPgSQ6oxG9ZZ6ED5A", IoException),
        (
            b"version: 0\ntopic_id: B3_HiNPgSQ6oxG9ZZ6ED5A\n\xff",
            IoException,
        ),
        (
            b"version: 0\ntopic_id: B3+HiNPgSQ6oxG9ZZ6ED5A",
            IllegalArgumentException,
        ),
        (
            b"version: 0\ntopic_id: B3_HiNPgSQ6",
            IllegalArgumentException,
        ),
        (b"", NullPointerException),
        (b"version: 0\n", NullPointerException),
    ] {
        let e = err(parse_partition_metadata(text));
        assert_eq!(e.throws, throws, "{:?}: {e}", String::from_utf8_lossy(text));
    }
}

/// Every refusal of `meta.properties` is a `RuntimeException` of `MetaProperties.Builder`
/// (or `Properties.load`'s `IllegalArgumentException` for a bad `\uXXXX`), which
/// `MetaPropertiesEnsemble.Loader.load` catches alike: the log dir is an error dir.
#[test]
fn meta_properties_failures_are_runtime_exceptions() {
    for text in [
        &b"version=2\n"[..],
        b"version=1\ncluster.id=c\n",
        b"broker.id=x\n",
        b"directory.id=AAAAAAAAAAAAAAAAAAAAAA\n",
    ] {
        let e = err(parse_meta_properties(text));
        assert_eq!(e.throws, JavaThrows::RuntimeException, "{e}");
    }
}

/// `Integer.parseInt` and `Long.parseLong` read every decimal digit `Character.digit`
/// reads, not only ASCII ones (JDK 17: `Integer.parseInt("+١٢")` is 12,
/// `Long.parseLong("-９")` is -9): an offset checkpoint, a leader-epoch-checkpoint, a
/// partition.metadata version and meta.properties' numbers written so are read by the
/// broker, not refused with a `NumberFormatException`. A letter is still refused, and a
/// digit beyond the Basic Multilingual Plane (a surrogate pair in Java: `𝟗`) too.
#[test]
fn java_reads_every_unicode_decimal_digit() {
    assert_eq!(
        offsets("0\n1\nfoo +١ -９\n".as_bytes()),
        vec![("foo".into(), 1, -9)]
    );
    assert_eq!(
        offsets("٠\n١\nfoo 0 ７\n".as_bytes()),
        vec![("foo".into(), 0, 7)]
    );
    let le = parse_leader_epoch_checkpoint("0\n1\n३ ४०\n".as_bytes()).unwrap();
    assert_eq!(
        le,
        vec![EpochEntry {
            epoch: 3,
            start_offset: 40
        }]
    );
    // meta.properties is read as ISO-8859-1 (`Properties.load`): a digit there is a
    // `\uXXXX` escape; its UTF-8 bytes are two Latin-1 letters, refused.
    let m = parse_meta_properties(b"version=\\u0661\nnode.id=\\u0667\ncluster.id=c\n").unwrap();
    assert_eq!(m.node_id, Some(7));
    err(parse_meta_properties("broker.id=٧\n".as_bytes()));
    err(parse_offset_checkpoint("0\n1\nfoo 0 𝟗\n".as_bytes(), RP));
    err(parse_offset_checkpoint("0\n1\nfoo 0 Ⅸ\n".as_bytes(), RP));
}
