//! Names, caps and refused paths.
use super::*;

#[test]
fn kafka_file_names() {
    for n in [
        "00000000000000000000.log",
        "00000000000000000000.index",
        "00000000000000000017.snapshot",
        "leader-epoch-checkpoint",
        "replication-offset-checkpoint",
        "meta.properties",
        "partition.metadata",
        "00000000000000000000.log.deleted",
        "00000000000000000000.checkpoint",
    ] {
        assert!(is_kafka_file_name(n), "{n}");
    }
    for n in ["README.md", "notes.txt", ".log", "server.properties"] {
        assert!(!is_kafka_file_name(n), "{n}");
    }
}

fn tar_of(files: &[(&str, usize)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, size) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(*size as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, name, vec![0u8; *size].as_slice())
            .unwrap();
    }
    b.into_inner().unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "klogscan-archive-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn absurd_entries_and_the_total_cap_are_refused_and_said() {
    let d = scratch("limits");
    // Compressed: what is analysed is written to the disk, under the caps.
    let ar = d.join("b.tgz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    io::Write::write_all(
        &mut gz,
        &tar_of(&[
            ("t-0/00000000000000000000.log", 100),
            ("t-0/00000000000000000000.index", 5000),
            ("t-1/00000000000000000000.log", 300),
            ("t-1/notes.txt", 10),
        ]),
    )
    .unwrap();
    std::fs::write(&ar, gz.finish().unwrap()).unwrap();
    let limits = Limits {
        max_total_bytes: 350,
        max_entry_bytes: 1000,
        max_entries: 100,
        ..Limits::default()
    };
    let p = prepare(std::slice::from_ref(&ar), &limits).unwrap();
    let root = &p.paths[0];
    assert!(root.join("t-0/00000000000000000000.log").is_file());
    assert!(
        !root.join("t-0/00000000000000000000.index").exists(),
        "above one file's limit"
    );
    assert!(
        !root.join("t-1/00000000000000000000.log").exists(),
        "above the total cap"
    );
    assert!(!root.join("t-1/notes.txt").exists(), "not a Kafka file");
    let w = p.warnings.join("\n");
    assert!(
        w.contains("above the 1000 bytes allowed for one file"),
        "{w}"
    );
    assert!(w.contains("extraction cap"), "{w}");
    assert_eq!(
        p.display(&root.join("t-0").display().to_string()),
        format!("{}!/t-0", ar.display())
    );
    let tmp = root.clone();
    drop(p);
    assert!(
        !tmp.exists(),
        "the temporary directory is removed with the inputs"
    );
    let too_many = Limits {
        max_entries: 2,
        ..Limits::default()
    };
    let p = prepare(std::slice::from_ref(&ar), &too_many).unwrap();
    // The entries before the limit are analysed.
    assert!(p.paths[0].join("t-0/00000000000000000000.log").is_file());
    assert!(
        p.failed[0].1.contains("more than 2 entries"),
        "{:?}",
        p.failed
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn escaping_paths_are_refused() {
    assert!(safe_relative(Path::new("../etc/passwd")).is_err());
    assert!(safe_relative(Path::new("/etc/passwd")).is_err());
    assert!(safe_relative(Path::new("a/../../b")).is_err());
    assert_eq!(
        safe_relative(Path::new("./data/t-0/x.log")).unwrap(),
        PathBuf::from("data/t-0/x.log")
    );
}
