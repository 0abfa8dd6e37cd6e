//! Bundles at scale, generated: N bundles of P partitions each, for the merge benchmark
//! (`examples/merge_scale`) and the merge's memory-bound test.
//!
//! One template broker of P partitions (three small batches each; the first partition
//! holds a hanging transaction) is written with the testkit and collected once; each of
//! the N bundles is that bundle with its paths, broker id and topic renamed, re-framed and
//! re-checksummed as `collect` writes them (docs/cluster.md). Brokers come in groups of
//! three holding the same topic (replication factor 3), so every partition has two
//! replicas to be compared with, as in a real cluster.

use super::files::LogDirBuilder;
use super::scenario::{Batch, PartitionBuilder, Producer};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

const TOPIC: &str = "tpltopic";

fn template(root: &Path, partitions: i32) -> std::io::Result<PathBuf> {
    let ld = root.join("template").join("data");
    let mut b = LogDirBuilder::new(1).cluster_id("c1");
    for n in 0..partitions {
        let mut p = PartitionBuilder::new(TOPIC, n).start_time(1_700_000_000_000);
        p.append(Batch::new(Producer::idempotent(100 + i64::from(n), 0)).records(3));
        if n == 0 {
            p.append(Batch::new(Producer::transactional(900, 1)).records(2));
            p.advance_time(20 * 60_000);
        }
        p.append(Batch::new(Producer::PLAIN).values(["a", "b"]));
        p.append(Batch::new(Producer::PLAIN).values(["c"]));
        b = b.partition(p);
    }
    b.write(&ld)?;
    Ok(ld)
}

/// The frames of a bundle: (type, payload).
fn frames(bundle: &[u8]) -> std::io::Result<Vec<(u8, Vec<u8>)>> {
    let mut raw = Vec::new();
    zstd::stream::Decoder::new(&bundle[20..])?.read_to_end(&mut raw)?;
    let mut out = Vec::new();
    let mut at = 0;
    while at < raw.len() {
        let len = u32::from_le_bytes(raw[at + 1..at + 5].try_into().unwrap_or_default()) as usize;
        out.push((raw[at], raw[at + 5..at + 5 + len].to_vec()));
        at += 5 + len + 4;
    }
    Ok(out)
}

fn write(path: &Path, head: &[u8], frames: &[(u8, Vec<u8>)]) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    f.write_all(head)?;
    let mut z = zstd::stream::Encoder::new(f, 3)?;
    z.include_checksum(true)?;
    for (tag, payload) in frames {
        let mut h = vec![*tag];
        h.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        let crc = crc32c::crc32c_append(crc32c::crc32c(&h), payload);
        z.write_all(&h)?;
        z.write_all(payload)?;
        z.write_all(&crc.to_le_bytes())?;
    }
    z.finish()?.flush()
}

/// What [`write_bundles`] wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// The directory of the bundles (`<out>/bundles`).
    pub dir: PathBuf,
    /// Their total size in bytes, and the template's.
    pub bytes: u64,
    pub template_bytes: u64,
}

/// Write `n` bundles of `p` partitions each into `<out>/bundles` (`b0000.klb`, …);
/// `collect` writes the template log dir's bundle into the file it is given (the caller's
/// `klogscan::bundle::collect`: the testkit imports no stage of the analysis).
pub fn write_bundles(
    out: &Path,
    n: usize,
    p: i32,
    collect: impl FnOnce(&Path, std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<Written> {
    std::fs::create_dir_all(out.join("bundles"))?;
    let out = out.canonicalize()?;
    let ld = template(&out, p)?;
    let tpl = out.join("template.klb");
    collect(&ld, std::fs::File::create(&tpl)?)?;
    std::fs::remove_dir_all(out.join("template"))?;
    let bytes = std::fs::read(&tpl)?;
    std::fs::remove_file(&tpl)?;
    let template = frames(&bytes)?;
    let root = out.join("template").display().to_string();
    let mut total = 0;
    for i in 0..n {
        let broker = format!("{}/broker-{i:04}", out.display());
        let topic = format!("t{:04}", i / 3);
        let rename = |s: &str| {
            s.replace(&root, &broker)
                .replace(TOPIC, &topic)
                .replace("\"node_id\":1", &format!("\"node_id\":{i}"))
                .replace("\"broker_id\":1", &format!("\"broker_id\":{i}"))
        };
        let renamed: Vec<(u8, Vec<u8>)> = template
            .iter()
            .map(|(tag, payload)| match tag {
                // Fingerprints: the path, length-prefixed, then binary keys.
                4 => {
                    let len =
                        u32::from_le_bytes(payload[..4].try_into().unwrap_or_default()) as usize;
                    let path = rename(&String::from_utf8_lossy(&payload[4..4 + len]));
                    let mut f = (path.len() as u32).to_le_bytes().to_vec();
                    f.extend_from_slice(path.as_bytes());
                    f.extend_from_slice(&payload[4 + len..]);
                    (*tag, f)
                }
                255 => (*tag, payload.clone()),
                _ => (*tag, rename(&String::from_utf8_lossy(payload)).into_bytes()),
            })
            .collect();
        let path = out.join("bundles").join(format!("b{i:04}.klb"));
        write(&path, &bytes[..20], &renamed)?;
        total += std::fs::metadata(&path)?.len();
    }
    Ok(Written {
        dir: out.join("bundles"),
        bytes: total,
        template_bytes: bytes.len() as u64,
    })
}
