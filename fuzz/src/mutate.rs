//! Mutations of an input: blind byte-level ones, splicing with other corpus entries, and
//! ones that know the inputs are lines of `key = value` or CSV cells holding numbers.

use crate::rng::Rng;

/// Numbers at the edges of what the parsers and the arithmetic behind them handle.
const BOUNDARY_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "65536",
    "65537",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "1e19",
    "1e300",
    "-1e300",
    "1e-300",
    "inf",
    "-inf",
    "nan",
    "NaN",
    "-0.0",
    "0.5",
    "1.0000000000000002",
    "5e-324",
];

/// Bytes that carry structure in TOML, CSV, YAML and JSON.
const STRUCTURE_BYTES: &[u8] = b"\"'=[]{},:-.#\n\r\t 0e";

/// Applies one to four mutations to `base`, drawing splice material from `pool`.
pub fn mutate(base: &[u8], pool: &[Vec<u8>], rng: &mut Rng, max_len: usize) -> Vec<u8> {
    let mut out = base.to_vec();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        match rng.below(14) {
            0 => flip_bit(&mut out, rng),
            1 => set_byte(&mut out, rng),
            2 => insert_bytes(&mut out, rng),
            3 => delete_range(&mut out, rng),
            4 => splice(&mut out, pool, rng),
            5..=7 => replace_number(&mut out, rng),
            8 => duplicate_line(&mut out, rng),
            9 => remove_line(&mut out, rng),
            10 => swap_lines(&mut out, rng),
            11 => swap_keys(&mut out, rng),
            12 => truncate(&mut out, rng),
            _ => insert_word(&mut out, pool, rng),
        }
    }
    out.truncate(max_len);
    out
}

fn flip_bit(out: &mut [u8], rng: &mut Rng) {
    if !out.is_empty() {
        let i = rng.below(out.len());
        out[i] ^= 1 << rng.below(8);
    }
}

fn set_byte(out: &mut [u8], rng: &mut Rng) {
    if !out.is_empty() {
        let i = rng.below(out.len());
        out[i] = if rng.one_in(2) {
            STRUCTURE_BYTES[rng.below(STRUCTURE_BYTES.len())]
        } else {
            rng.next_u64() as u8
        };
    }
}

fn insert_bytes(out: &mut Vec<u8>, rng: &mut Rng) {
    let at = rng.below(out.len() + 1);
    let n = 1 + rng.below(8);
    let bytes: Vec<u8> = (0..n)
        .map(|_| {
            if rng.one_in(2) {
                STRUCTURE_BYTES[rng.below(STRUCTURE_BYTES.len())]
            } else {
                rng.next_u64() as u8
            }
        })
        .collect();
    out.splice(at..at, bytes);
}

fn delete_range(out: &mut Vec<u8>, rng: &mut Rng) {
    if out.is_empty() {
        return;
    }
    let at = rng.below(out.len());
    let n = 1 + rng.below(16.min(out.len() - at));
    out.drain(at..at + n);
}

/// Replaces a range with a chunk of another entry (or of itself).
fn splice(out: &mut Vec<u8>, pool: &[Vec<u8>], rng: &mut Rng) {
    let other = &pool[rng.below(pool.len())];
    if other.is_empty() {
        return;
    }
    let from = rng.below(other.len());
    let n = 1 + rng.below((other.len() - from).min(256));
    let chunk = other[from..from + n].to_vec();
    let at = rng.below(out.len() + 1);
    let cut = rng.below((out.len() - at).min(64) + 1);
    out.splice(at..at + cut, chunk);
}

/// The byte ranges of number-like tokens (digits with signs, dots and exponents).
fn numbers(out: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < out.len() {
        if out[i].is_ascii_digit() {
            let mut start = i;
            if start > 0 && out[start - 1] == b'-' {
                start -= 1;
            }
            let mut end = i;
            while end < out.len() && matches!(out[end], b'0'..=b'9' | b'.' | b'e' | b'E' | b'_') {
                end += 1;
                if end < out.len()
                    && matches!(out[end], b'+' | b'-')
                    && matches!(out[end - 1], b'e' | b'E')
                {
                    end += 1;
                }
            }
            spans.push((start, end));
            i = end;
        } else {
            i += 1;
        }
    }
    spans
}

fn replace_number(out: &mut Vec<u8>, rng: &mut Rng) {
    let spans = numbers(out);
    if spans.is_empty() {
        insert_bytes(out, rng);
        return;
    }
    let (start, end) = spans[rng.below(spans.len())];
    let value = BOUNDARY_NUMBERS[rng.below(BOUNDARY_NUMBERS.len())];
    out.splice(start..end, value.bytes());
}

/// Line ranges `(start, end)`, each end past its newline when it has one.
fn lines(out: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, b) in out.iter().enumerate() {
        if *b == b'\n' {
            spans.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < out.len() {
        spans.push((start, out.len()));
    }
    spans
}

fn duplicate_line(out: &mut Vec<u8>, rng: &mut Rng) {
    let spans = lines(out);
    if spans.is_empty() {
        return;
    }
    let (s, e) = spans[rng.below(spans.len())];
    let mut line = out[s..e].to_vec();
    if line.last() != Some(&b'\n') {
        line.insert(0, b'\n');
    }
    let (at, _) = spans[rng.below(spans.len())];
    out.splice(at..at, line);
}

fn remove_line(out: &mut Vec<u8>, rng: &mut Rng) {
    let spans = lines(out);
    if spans.is_empty() {
        return;
    }
    let (s, e) = spans[rng.below(spans.len())];
    out.drain(s..e);
}

fn swap_lines(out: &mut Vec<u8>, rng: &mut Rng) {
    let spans = lines(out);
    if spans.len() < 2 {
        return;
    }
    let a = rng.below(spans.len());
    let b = rng.below(spans.len());
    let (a, b) = (a.min(b), a.max(b));
    if a == b {
        return;
    }
    let mut next = Vec::with_capacity(out.len() + 1);
    let line = |i: usize| {
        let (s, e) = spans[i];
        let mut l = out[s..e].to_vec();
        if l.last() != Some(&b'\n') {
            l.push(b'\n');
        }
        l
    };
    for i in 0..spans.len() {
        let j = if i == a {
            b
        } else if i == b {
            a
        } else {
            i
        };
        next.extend(line(j));
    }
    *out = next;
}

/// Swaps the keys of two `key = value` / `key: value` lines, keeping their values.
fn swap_keys(out: &mut Vec<u8>, rng: &mut Rng) {
    let keyed: Vec<(usize, usize, usize)> = lines(out)
        .into_iter()
        .filter_map(|(s, e)| {
            let sep = out[s..e].iter().position(|b| *b == b'=' || *b == b':')?;
            Some((s, s + sep, e))
        })
        .collect();
    if keyed.len() < 2 {
        return;
    }
    let (a, b) = (keyed[rng.below(keyed.len())], keyed[rng.below(keyed.len())]);
    let (first, second) = if a.0 <= b.0 { (a, b) } else { (b, a) };
    if first.0 == second.0 {
        return;
    }
    let key_a = out[first.0..first.1].to_vec();
    let key_b = out[second.0..second.1].to_vec();
    // The later one first, so the earlier offsets still hold.
    out.splice(second.0..second.1, key_a);
    out.splice(first.0..first.1, key_b);
}

fn truncate(out: &mut Vec<u8>, rng: &mut Rng) {
    let at = rng.below(out.len() + 1);
    out.truncate(at);
}

/// Inserts a word (a run of identifier characters) taken from a corpus entry: a key or a
/// value another input uses, in a place it was not.
fn insert_word(out: &mut Vec<u8>, pool: &[Vec<u8>], rng: &mut Rng) {
    let other = &pool[rng.below(pool.len())];
    if other.is_empty() {
        return;
    }
    let mut s = rng.below(other.len());
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    while s > 0 && word(other[s - 1]) {
        s -= 1;
    }
    let mut e = s;
    while e < other.len() && word(other[e]) {
        e += 1;
    }
    if e == s {
        return;
    }
    let chunk = other[s..e].to_vec();
    let at = rng.below(out.len() + 1);
    out.splice(at..at, chunk);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_found_with_sign_and_exponent() {
        let spans = numbers(b"a = -1.5e+3, b = 7");
        assert_eq!(spans, vec![(4, 11), (17, 18)]);
    }

    #[test]
    fn mutation_is_deterministic() {
        let pool = vec![b"count = 3\nname = \"x\"\n".to_vec()];
        let a = mutate(&pool[0], &pool, &mut Rng::new(1), 1 << 16);
        let b = mutate(&pool[0], &pool, &mut Rng::new(1), 1 << 16);
        assert_eq!(a, b);
    }
}
