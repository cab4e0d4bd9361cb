//! The calendar: which dates exist, days since the epoch, and RFC 3339 timestamps as Kubernetes
//! writes them (`2024-05-01T10:00:00Z`, `2024-05-01T10:00:00.5+02:00`) → seconds since the
//! epoch. One rule for every date coplan reads (Kubernetes exports, Azure traces).

/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's civil-days algorithm); the
/// date must be one the calendar has ([`is_date`]).
pub fn epoch_days(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Whether the calendar has this date: a month 1–12 and a day the month has (29 February in
/// leap years only): `2026-02-30` is no day, in a Kubernetes timestamp or a trace row.
pub fn is_date(year: i64, month: i64, day: i64) -> bool {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return false,
    };
    (1..=month_days).contains(&day)
}

fn digits(s: &str, n: usize) -> Option<i64> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Seconds since the epoch of an RFC 3339 date-time, or `None` when it is not one.
pub fn rfc3339_seconds(text: &str) -> Option<f64> {
    let s = text.trim();
    let (date, rest) = s.split_at_checked(10)?;
    let sep = rest.chars().next()?;
    if !matches!(sep, 'T' | 't' | ' ') {
        return None;
    }
    let rest = &rest[1..];
    let mut d = date.split('-');
    let (y, m, day) = (
        digits(d.next()?, 4)?,
        digits(d.next()?, 2)?,
        digits(d.next()?, 2)?,
    );
    let (clock, offset_s) = if let Some(c) = rest.strip_suffix(['Z', 'z']) {
        (c, 0)
    } else {
        let at = rest.rfind(['+', '-'])?;
        let (c, off) = rest.split_at(at);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let (oh, om) = off[1..].split_once(':')?;
        let (oh, om) = (digits(oh, 2)?, digits(om, 2)?);
        // RFC 3339's offsets are within ±23:59.
        if oh > 23 || om > 59 {
            return None;
        }
        (c, sign * (oh * 3600 + om * 60))
    };
    let mut t = clock.split(':');
    let (h, min) = (digits(t.next()?, 2)?, digits(t.next()?, 2)?);
    let sec_text = t.next()?;
    if t.next().is_some() {
        return None;
    }
    let (whole, fraction) = sec_text.split_once('.').unwrap_or((sec_text, ""));
    let sec = digits(whole, 2)?;
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let fraction: f64 = if fraction.is_empty() {
        0.0
    } else {
        format!("0.{fraction}").parse().ok()?
    };
    if !(1..=12).contains(&m) || h > 23 || min > 59 || sec > 60 {
        return None;
    }
    if !is_date(y, m, day) {
        return None;
    }
    let seconds = epoch_days(y, m, day) * 86_400 + h * 3600 + min * 60 + sec - offset_s;
    Some(seconds as f64 + fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubernetes_timestamps() {
        assert_eq!(rfc3339_seconds("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(
            rfc3339_seconds("2024-05-01T10:00:00Z"),
            Some(1_714_557_600.0)
        );
        assert_eq!(
            rfc3339_seconds("2024-05-01T12:00:00+02:00"),
            Some(1_714_557_600.0)
        );
        assert_eq!(
            rfc3339_seconds("2024-05-01T10:00:00.5Z"),
            Some(1_714_557_600.5)
        );
        assert_eq!(rfc3339_seconds("2000-03-01T00:00:00Z"), Some(951_868_800.0));
        assert!(rfc3339_seconds("2024-02-29T00:00:00Z").is_some());
        assert!(rfc3339_seconds("0001-01-01T00:00:00Z").is_some());
        assert!(rfc3339_seconds("9999-12-31T23:59:60.999Z").is_some());
        for bad in [
            "",
            "2024-05-01",
            "2024-13-01T00:00:00Z",
            "2024-05-01T10:00Z",
            "yesterday",
            "2023-02-29T00:00:00Z",
            "2024-04-31T00:00:00Z",
            "2024-05-01T10:00:00+24:00",
            "2024-05-01T10:00:00+05:60",
        ] {
            assert_eq!(rfc3339_seconds(bad), None, "{bad}");
        }
    }
}
