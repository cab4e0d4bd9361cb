//! The Kubernetes resource quantity grammar (`cpu: 63500m`, `memory: 512Gi`, `1e3`):
//!
//! ```text
//! quantity  ::= sign? number suffix
//! number    ::= digits | digits "." digits? | "." digits
//! suffix    ::= "" | binarySI | decimalSI | ("e" | "E") sign? digits
//! binarySI  ::= Ki | Mi | Gi | Ti | Pi | Ei
//! decimalSI ::= n | u | m | k | M | G | T | P | E
//! ```
//!
//! A lone `E` after a number is the decimal suffix exa (10^18), as in the API server; `1E3` is
//! an exponent.

/// Why a quantity does not parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{text}` is not a Kubernetes quantity: {why}")]
pub struct QuantityError {
    /// The text as written.
    pub text: String,
    /// Why it does not parse.
    pub why: &'static str,
}

/// A parsed quantity, as a number (cores for `cpu`, bytes for `memory`, a count otherwise).
pub fn parse(text: &str) -> Result<f64, QuantityError> {
    let fail = |why| QuantityError {
        text: text.to_string(),
        why,
    };
    let s = text.trim();
    if s.is_empty() {
        return Err(fail("it is empty"));
    }
    let (sign, rest) = match s.as_bytes()[0] {
        b'+' => (1.0, &s[1..]),
        b'-' => (-1.0, &s[1..]),
        _ => (1.0, s),
    };
    let number_len = rest
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b'.')
        .count();
    let (number, suffix) = rest.split_at(number_len);
    if number.is_empty() || number == "." {
        return Err(fail("it does not start with a number"));
    }
    if number.bytes().filter(|&b| b == b'.').count() > 1 {
        return Err(fail("the number has more than one decimal point"));
    }
    let mantissa: f64 = number
        .parse()
        .map_err(|_| fail("the number does not parse"))?;
    let scale = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        _ => {
            let Some(exponent) = suffix.strip_prefix(['e', 'E']) else {
                return Err(fail(
                    "unknown suffix (expected one of n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or e<exponent>)",
                ));
            };
            let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(fail("the exponent is not an integer"));
            }
            let e: i32 = exponent
                .parse()
                .map_err(|_| fail("the exponent is out of range"))?;
            10f64.powi(e)
        }
    };
    let value = sign * mantissa * scale;
    if !value.is_finite() {
        return Err(fail("it is out of range"));
    }
    Ok(value)
}

/// A quantity of whole units rounded up (`500m` CPU → 1 core), and whether it was rounded.
/// Values within 1e-9 of an integer count as that integer (decimal suffixes are inexact in
/// binary).
pub fn ceil_units(value: f64) -> (u64, bool) {
    if value <= 0.0 {
        return (0, false);
    }
    let nearest = value.round();
    if (value - nearest).abs() <= 1e-9 * value.max(1.0) {
        return (nearest as u64, false);
    }
    (value.ceil() as u64, true)
}

/// A quantity of whole units rounded down (an allocatable `63500m` → 63 cores), and whether
/// it was rounded.
pub fn floor_units(value: f64) -> (u64, bool) {
    if value <= 0.0 {
        return (0, value < 0.0);
    }
    let nearest = value.round();
    if (value - nearest).abs() <= 1e-9 * value.max(1.0) {
        return (nearest as u64, false);
    }
    (value.floor() as u64, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> f64 {
        parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn plain_and_decimal_numbers() {
        assert_eq!(ok("64"), 64.0);
        assert_eq!(ok("0"), 0.0);
        assert_eq!(ok("1.5"), 1.5);
        assert_eq!(ok(".5"), 0.5);
        assert_eq!(ok("5."), 5.0);
        assert_eq!(ok("+2"), 2.0);
        assert_eq!(ok("-2"), -2.0);
        assert_eq!(ok(" 8 "), 8.0);
    }

    #[test]
    fn milli_and_decimal_si_suffixes() {
        assert!((ok("63500m") - 63.5).abs() < 1e-12);
        assert!((ok("100m") - 0.1).abs() < 1e-12);
        assert!((ok("250u") - 250e-6).abs() < 1e-18);
        assert!((ok("1n") - 1e-9).abs() < 1e-21);
        assert_eq!(ok("1k"), 1e3);
        assert_eq!(ok("2M"), 2e6);
        assert_eq!(ok("3G"), 3e9);
        assert_eq!(ok("1T"), 1e12);
        assert_eq!(ok("1P"), 1e15);
        // A lone E after a number is exa, not an exponent.
        assert_eq!(ok("1E"), 1e18);
    }

    #[test]
    fn binary_si_suffixes() {
        assert_eq!(ok("1Ki"), 1024.0);
        assert_eq!(ok("512Mi"), 512.0 * 1024.0 * 1024.0);
        assert_eq!(ok("1.5Gi"), 1.5 * 1024f64.powi(3));
        assert_eq!(ok("2Ti"), 2.0 * 1024f64.powi(4));
        assert_eq!(ok("1Pi"), 1024f64.powi(5));
        assert_eq!(ok("1Ei"), 1024f64.powi(6));
    }

    #[test]
    fn exponents() {
        assert_eq!(ok("1e3"), 1000.0);
        assert_eq!(ok("1E3"), 1000.0);
        assert_eq!(ok("12e-1"), 1.2000000000000002);
        assert_eq!(ok("5e+2"), 500.0);
        assert_eq!(ok("1.5e2"), 150.0);
    }

    #[test]
    fn malformed_quantities_say_why() {
        for bad in [
            "", " ", "m", "abc", "1.2.3", "12x", "1KiB", "1ki", "1e", "1e+", "1e1.5", ".", "--1",
            "1 Gi", "1e999",
        ] {
            let e = parse(bad).expect_err(bad);
            assert_eq!(e.text, bad);
            assert!(!e.why.is_empty());
        }
    }

    #[test]
    fn whole_units_round_up_or_down_and_say_so() {
        assert_eq!(ceil_units(ok("500m")), (1, true));
        assert_eq!(ceil_units(ok("2")), (2, false));
        assert_eq!(ceil_units(ok("2000m")), (2, false));
        assert_eq!(ceil_units(ok("1100m")), (2, true));
        assert_eq!(ceil_units(0.0), (0, false));
        assert_eq!(floor_units(ok("63500m")), (63, true));
        assert_eq!(floor_units(ok("64")), (64, false));
        // 0.1 + 0.2 style noise is not a rounding.
        assert_eq!(ceil_units(ok("300m") * 10.0), (3, false));
    }
}
