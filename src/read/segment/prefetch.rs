//! Requests to the CPU for the bytes of a mapped segment before the walk reaches them.
//!
//! A walk over a map hops from entry header to entry header: each hop is a load whose
//! address depends on the length field read by the hop before, so, with the segment in
//! the page cache but not in the CPU's caches, every hop waits for memory (and for a page
//! walk: an entry of a few KiB is usually on a page of its own). A prefetch is a hint that
//! starts that load early and lets the walk go on meanwhile; it never faults and reads
//! nothing into the program, so a wrong guess costs only bandwidth.
//!
//! Two shapes, measured on the 1 GiB synth dir (`docs/performance.md`, "Prefetch ahead of
//! the walk"): a walk that reads every byte of each entry (its CRC, `--deep`'s records)
//! gains from a window sliding a few KiB ahead of the cursor, each line asked for once; a
//! walk that reads headers only (`--no-crc`) gains from asking for the next header alone,
//! and loses with the window (it brings in lines the walk never reads).

/// Which bytes of the map a walk asks for ahead of itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ahead {
    /// Every line of the entry's length, [`WINDOW`] bytes past the entry: for walks that
    /// read each entry whole.
    Bytes,
    /// The next entry's header (the two lines it may span): for walks that read headers.
    Header,
}

/// How far ahead of an entry the [`Ahead::Bytes`] window runs.
pub const WINDOW: usize = 4096;

const LINE: usize = 64;

/// Ask for what `how` names past entry `e`, a slice of the map `data` (nothing when `e`
/// is not in `data`).
#[inline]
pub fn ahead(data: &[u8], e: &[u8], how: Ahead) {
    let Some(at) = (e.as_ptr() as usize)
        .checked_sub(data.as_ptr() as usize)
        .filter(|&at| at + e.len() <= data.len())
    else {
        return;
    };
    let end = at + e.len();
    match how {
        Ahead::Header => {
            // The v2 header is 61 bytes: it may span two lines.
            line(data, end);
            line(data, end + 60);
        }
        Ahead::Bytes => {
            let mut off = at + WINDOW;
            let to = end.saturating_add(WINDOW).min(data.len());
            while off < to {
                line(data, off);
                off += LINE;
            }
        }
    }
}

/// Ask for the cache line holding `data[off]` (nothing past the end).
#[inline(always)]
fn line(data: &[u8], off: usize) {
    #[cfg(target_arch = "x86_64")]
    if off < data.len() {
        // SAFETY: `off` lies inside `data`; a prefetch reads nothing into the program and
        // never faults, whatever the page's state.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                data.as_ptr().add(off).cast(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, off);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_outside_the_map_and_at_its_end_ask_for_nothing_out_of_bounds() {
        let map = vec![0u8; 10_000];
        let other = vec![0u8; 100];
        // Not a slice of the map: no request (would be out of bounds).
        ahead(&map, &other, Ahead::Bytes);
        ahead(&map, &other, Ahead::Header);
        // The last entry of the map: the window and the next header lie past its end.
        ahead(&map, &map[9_000..], Ahead::Bytes);
        ahead(&map, &map[9_000..], Ahead::Header);
        ahead(&map, &map[..0], Ahead::Bytes);
    }
}
