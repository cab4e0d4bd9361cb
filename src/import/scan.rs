//! Scanning the bytes of an export eight at a time: most of a file's bytes are runs of
//! plain characters (names, keys, indentation), and a word-wide test skips them in one step.

/// `0x01` in every byte of a word.
pub(crate) const ONES: u64 = u64::from_le_bytes([1; 8]);

/// The high bit of every byte of a word.
const HIGH: u64 = ONES << 7;

/// The first index from `i` of a byte that `continues` refuses, or the length. Whole words
/// are skipped while `alarm` (of the word, read little-endian) sets no byte's high bit: it
/// must set one wherever a byte would stop the run, and a false alarm only sends the bytes to
/// `continues`.
pub(crate) fn run_end(
    b: &[u8],
    mut i: usize,
    alarm: impl Fn(u64) -> u64,
    continues: impl Fn(u8) -> bool,
) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let Ok(bytes) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        if alarm(u64::from_le_bytes(bytes)) & HIGH != 0 {
            break;
        }
        i += 8;
    }
    while b.get(i).is_some_and(|&c| continues(c)) {
        i += 1;
    }
    i
}
