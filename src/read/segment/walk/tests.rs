use super::*;
use crate::read::format::Tail;

/// Resident bytes of the mapping that holds `p`, from `/proc/self/smaps` (0 when the
/// mapping is not found).
#[cfg(target_os = "linux")]
fn mapping_rss(p: *const u8) -> usize {
    let at = p as usize;
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut inside = false;
    for line in smaps.lines() {
        let range = line
            .split_whitespace()
            .next()
            .and_then(|r| r.split_once('-'));
        if let Some((lo, hi)) = range
            && let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
        {
            inside = lo <= at && at < hi;
        } else if inside && let Some(kb) = line.strip_prefix("Rss:") {
            return kb.trim().trim_end_matches(" kB").parse::<usize>().unwrap() * 1024;
        }
    }
    0
}

/// The searches for a split segment's piece starts leave nothing of the file mapped,
/// even where the kernel maps whole large folios on a fault (Linux 6.x file systems:
/// one byte read every 4 MiB of a warm file mapped ~2 MiB per read). On a kernel
/// without large folios it holds trivially (and `touched` in the message is small).
#[cfg(target_os = "linux")]
#[test]
fn sync_point_searches_release_the_folios_they_mapped() {
    const STEP: usize = 4 << 20;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("00000000000000000000.log");
    // No batch anywhere: every search reads its whole window and finds nothing.
    std::fs::write(&p, vec![0u8; 8 * STEP]).unwrap();
    // Back into the page cache through readahead, which is what builds large folios
    // (as the files of a running broker are cached).
    {
        use std::os::fd::AsRawFd;
        let f = std::fs::File::open(&p).unwrap();
        f.sync_all().unwrap();
        // SAFETY: plain advice on an open descriptor.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        std::io::copy(&mut &f, &mut std::io::sink()).unwrap();
    }
    // What the searches map without a release (in a map of their own).
    let control = map_file(&p, None).unwrap().expect("mapped");
    for k in 1..8 {
        assert_eq!(
            sync_point(&control, k * STEP, 64 << 10, 64 << 10, true),
            None
        );
    }
    let touched = mapping_rss(control.as_ptr());
    drop(control);
    let data = map_file(&p, None).unwrap().expect("mapped");
    for k in 1..8 {
        assert_eq!(mapped_sync_point(&data, k * STEP, 64 << 10, 64 << 10), None);
    }
    let after = mapping_rss(data.as_ptr());
    assert!(
        after < (256 << 10),
        "{after} bytes still mapped after the searches ({touched} after bare reads)"
    );
}

/// Resident flags of every page of `p` (through a map of its own).
#[cfg(target_os = "linux")]
fn resident(p: &std::path::Path) -> Vec<bool> {
    let m = map_file(p, None).unwrap().expect("mapped");
    m.resident_pages(0, m.len())
}

/// A search for piece starts leaves the page cache as it found it: on a cold file the
/// pages it read are dropped again (so the walk's read-ahead later finds whole uncached
/// windows), on a warm file nothing is dropped; it finds what `mapped_sync_point` finds.
/// Where the file system keeps pages cached whatever the advice, only the warm half and
/// the found points are checked.
#[cfg(target_os = "linux")]
#[test]
fn sync_point_searches_leave_the_page_cache_as_they_found_it() {
    const STEP: usize = 4 << 20;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("00000000000000000000.log");
    std::fs::write(&p, vec![0u8; 4 * STEP]).unwrap();
    let (file, _) = open_regular(&p).unwrap();
    file.raw().0.sync_all().unwrap();
    let search = |data: &FileData| {
        (1..4)
            .map(|k| mapped_sync_point_uncached(data, Some(&file), k * STEP, 64 << 10, 64 << 10))
            .collect::<Vec<_>>()
    };
    // Warm: every page stays.
    std::io::copy(&mut file.reader(), &mut std::io::sink()).unwrap();
    let warm = resident(&p);
    let data = map_file(&p, None).unwrap().expect("mapped");
    data.advise_random(true);
    assert_eq!(search(&data), vec![None, None, None]);
    assert_eq!(resident(&p), warm, "a warm file's pages were dropped");
    drop(data);
    // Cold: the pages the searches read are gone again.
    file.drop_cached(0, (4 * STEP) as u64);
    if resident(&p).iter().any(|&r| r) {
        return; // no eviction here: nothing to compare with
    }
    let data = map_file(&p, None).unwrap().expect("mapped");
    data.advise_random(true);
    assert_eq!(search(&data), vec![None, None, None]);
    let left = resident(&p).iter().filter(|&&r| r).count();
    assert_eq!(left, 0, "{left} pages the searches read stayed cached");
}

/// `auto` maps only files of at least `MAP_MIN_BYTES` (a small file is read: cheaper
/// than a map, and no `munmap` shootdown on the other threads); `never` never maps.
#[test]
fn auto_maps_only_files_of_at_least_map_min_bytes() {
    assert_eq!(policy(MmapMode::Auto, MAP_MIN_BYTES), ReadPolicy::Map);
    assert_eq!(policy(MmapMode::Auto, u64::MAX), ReadPolicy::Map);
    assert_eq!(policy(MmapMode::Auto, MAP_MIN_BYTES - 1), ReadPolicy::Read);
    assert_eq!(policy(MmapMode::Auto, 0), ReadPolicy::Read);
    assert_eq!(policy(MmapMode::Never, u64::MAX), ReadPolicy::Read);
    // `load` follows the same rule.
    let dir = tempfile::tempdir().unwrap();
    for (len, mapped) in [(MAP_MIN_BYTES - 1, false), (MAP_MIN_BYTES, true)] {
        let p = dir.path().join(format!("{len}.index"));
        std::fs::write(&p, vec![0u8; len as usize]).unwrap();
        let d = load(&p, FileClass::Index, MmapMode::Auto, None).unwrap();
        assert_eq!(d.is_mapped(), mapped, "{len} bytes");
        let d = load(&p, FileClass::Index, MmapMode::Never, None).unwrap();
        assert!(!d.is_mapped());
    }
}

/// A framed entry of `size` bytes after the 12-byte overhead (magic 2, contents not valid).
fn entry(offset: i64, size: i32) -> Vec<u8> {
    let mut v = vec![0u8; 12 + size as usize];
    v[..8].copy_from_slice(&offset.to_be_bytes());
    v[8..12].copy_from_slice(&size.to_be_bytes());
    v[16] = 2;
    for (i, b) in v[17..].iter_mut().enumerate() {
        *b = (i % 251) as u8 + 1;
    }
    v
}

fn walk(path: &Path, policy: ReadPolicy, chunk: usize) -> (Vec<(u64, i64, usize)>, Tail, u64) {
    let mut seen = Vec::new();
    let (tail, len) = walk_entries_chunked(path, policy, None, chunk, |e| {
        seen.push((e.position, e.offset(), e.len()))
    })
    .unwrap();
    (seen, tail, len)
}

#[test]
fn chunked_read_equals_map_for_every_tail_kind() {
    let dir = tempfile::tempdir().unwrap();
    let mut body = Vec::new();
    for i in 0..40 {
        body.extend(entry(i, 49 + (i as i32 * 7) % 300));
    }
    body.extend(entry(40, 5000)); // larger than the chunk
    body.extend(entry(41, 60));
    let tails: Vec<(&str, Vec<u8>)> = vec![
        ("clean", vec![]),
        ("zeros", vec![0u8; 777]),
        ("garbage", vec![0xab; 333]),
        ("partial", entry(42, 900)[..400].to_vec()),
        ("fragment", vec![1, 2, 3]),
        ("corrupt-size", {
            let mut v = entry(42, 100);
            v[8..12].copy_from_slice(&5i32.to_be_bytes());
            v
        }),
        ("absurd-size", {
            let mut v = entry(42, 100);
            v[8..12].copy_from_slice(&(i32::MAX - 15).to_be_bytes());
            v
        }),
        ("zeros-then-junk", {
            let mut v = vec![0u8; 500];
            v.push(9);
            v
        }),
    ];
    for (name, tail) in tails {
        let mut data = body.clone();
        data.extend(&tail);
        let p = dir.path().join(format!("{name}.log"));
        std::fs::write(&p, &data).unwrap();
        let mapped = walk(&p, ReadPolicy::Map, 0);
        assert_eq!(mapped.0.len(), 42, "{name}");
        if name.ends_with("-size") {
            assert!(
                matches!(mapped.1, Tail::CorruptEntry { len: 112, .. }),
                "{name}: {:?}",
                mapped.1
            );
        }
        for chunk in [64usize, 100, 1000, 4096, 1 << 20] {
            let read = walk(&p, ReadPolicy::Read, chunk);
            assert_eq!(read.0, mapped.0, "{name} chunk {chunk}");
            assert_eq!(read.1, mapped.1, "{name} chunk {chunk}");
            assert_eq!(read.2, data.len() as u64);
        }
    }
}

#[test]
fn sync_point_gives_up_on_crafted_candidates() {
    // Every 32-byte slot looks like a batch header whose size reaches another slot
    // (magic 2, growing offsets), and none has a valid CRC: without a bound on the CRC
    // work this is ~32 k candidates × 256 KiB of CRC.
    let mut data = vec![0u8; 1 << 20];
    for (k, slot) in data.chunks_mut(32).enumerate() {
        slot[..8].copy_from_slice(&((k as i64) << 16).to_be_bytes());
        slot[8..12].copy_from_slice(&((256 << 10) - 12i32).to_be_bytes());
        slot[16] = 2;
    }
    assert_eq!(sync_point(&data, 0, data.len(), data.len(), false), None);
}
