//! Where JSON's tokens end, read from the bytes alone: the quick checks of the values nothing
//! reads, and the plain runs of the strings the parser copies.

use crate::import::scan::{ONES, run_end};

/// Past the closing quote of the string whose opening quote is at `i`; `None` where there is
/// no string there or the parser's reading of strings might refuse it.
pub(super) fn string_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let hex4 = |i: usize| -> Option<u32> {
        let digits = b.get(i..i + 4)?;
        let digits = std::str::from_utf8(digits).ok()?;
        u32::from_str_radix(digits, 16).ok()
    };
    let mut i = i + 1;
    loop {
        i = plain_run(b, i);
        match *b.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => match b.get(i + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                b'u' => {
                    let first = hex4(i + 2)?;
                    i += 6;
                    if (0xD800..0xDC00).contains(&first) {
                        if b.get(i..i + 2) != Some(b"\\u") {
                            return None;
                        }
                        match hex4(i + 2) {
                            Some(low) if (0xDC00..0xE000).contains(&low) => i += 6,
                            _ => return None,
                        }
                    } else if (0xDC00..0xE000).contains(&first) {
                        return None;
                    }
                }
                _ => return None,
            },
            _ => return None,
        }
    }
}

/// Where the number at `i` ends (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`); `None`
/// where it is malformed.
pub(super) fn number_end(b: &[u8], mut i: usize) -> Option<usize> {
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let from = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - from
    };
    let whole_from = i;
    let whole = digits(&mut i);
    let mut ok = whole > 0 && !(whole > 1 && b[whole_from] == b'0');
    if ok && b.get(i) == Some(&b'.') {
        i += 1;
        ok = digits(&mut i) > 0;
    }
    if ok && matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        ok = digits(&mut i) > 0;
    }
    ok.then_some(i)
}

/// The first index from `i` of a byte that ends a run of a string's plain characters (a
/// quote, a backslash or a control character), or the length: eight bytes at a time, as
/// strings (names, managedFields' keys) are most of a file's bytes.
pub(super) fn plain_run(b: &[u8], i: usize) -> usize {
    let alarm = |w: u64| {
        let quote = w ^ (ONES * u64::from(b'"'));
        let backslash = w ^ (ONES * u64::from(b'\\'));
        // A byte is zero (or below 0x20) where the subtraction borrows into its high bit.
        (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (w.wrapping_sub(ONES * 0x20) & !w)
    };
    run_end(b, i, alarm, |c| c != b'"' && c != b'\\' && c >= 0x20)
}
