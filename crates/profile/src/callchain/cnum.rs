//! C's number parsing as perf's option code meets it (`strtod`, `strtoul`)
//! and gcc's double-to-unsigned conversion on x86-64: perf's `-g` values
//! and thresholds go through these, so the edge cases (a valid prefix,
//! hex floats, out-of-range values) come out as perf's do. Written here
//! because Rust's parsers reject what C accepts.

/// C's `strtod` on a whole token, accepting a valid prefix as perf does
/// (`0.5abc` is 0.5); `None` when no number starts the token.
pub(super) fn c_strtod(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    let start = i;
    let neg = i < b.len() && b[i] == b'-';
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let rest = &s[i..];
    let lower = rest.to_ascii_lowercase();
    let sign = if neg { -1.0 } else { 1.0 };
    if lower.starts_with("inf") {
        return Some(sign * f64::INFINITY);
    }
    if lower.starts_with("nan") {
        return Some(f64::NAN);
    }
    if lower.starts_with("0x") {
        if let Some(v) = hex_float(&rest[2..]) {
            return Some(sign * v);
        }
        // "0x" without hex digits is the number 0 followed by junk.
        return Some(sign * 0.0);
    }
    let digits = |mut j: usize| {
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let int_end = digits(i);
    let mut end = int_end;
    let mut any = int_end > i;
    if end < b.len() && b[end] == b'.' {
        let frac_end = digits(end + 1);
        any |= frac_end > end + 1;
        end = frac_end;
    }
    if !any {
        return None;
    }
    if end < b.len() && (b[end] == b'e' || b[end] == b'E') {
        let mut j = end + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let exp_end = digits(j);
        if exp_end > j {
            end = exp_end;
        }
    }
    // Rust's parser rejects a trailing '.' that C accepts ("5.").
    let text = s[start..end].trim_end_matches('.');
    let text = if text.ends_with(['+', '-']) || text.is_empty() {
        "0"
    } else {
        text
    };
    text.parse::<f64>().ok()
}

/// The value of a hexadecimal float's digits after "0x" (`1.8p3`).
fn hex_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut v = 0.0f64;
    let mut any = false;
    let mut scale = 0i32;
    while i < b.len() && b[i].is_ascii_hexdigit() {
        v = v * 16.0 + f64::from((b[i] as char).to_digit(16)?);
        any = true;
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_hexdigit() {
            v = v * 16.0 + f64::from((b[i] as char).to_digit(16)?);
            scale = scale.saturating_sub(4);
            any = true;
            i += 1;
        }
    }
    if !any {
        return None;
    }
    if i < b.len() && (b[i] == b'p' || b[i] == b'P') {
        let mut j = i + 1;
        let neg = j < b.len() && b[j] == b'-';
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let e0 = j;
        let mut e: i32 = 0;
        while j < b.len() && b[j].is_ascii_digit() {
            e = e.saturating_mul(10).saturating_add(i32::from(b[j] - b'0'));
            j += 1;
        }
        if j > e0 {
            scale = scale.saturating_add(if neg { -e } else { e });
        }
    }
    Some(v * 2f64.powi(scale))
}

/// C's `strtoul(s, &end, 0)` on a 64-bit target: leading space, a sign,
/// base from the prefix (0x hex, 0 octal), saturating on overflow, a minus
/// negating modulo 2^64. `None` when no digits start the token.
pub(super) fn c_strtoul(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    let neg = i < b.len() && b[i] == b'-';
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let mut base = 10;
    if i + 1 < b.len() && b[i] == b'0' && (b[i + 1] | 0x20) == b'x' {
        if i + 2 < b.len() && b[i + 2].is_ascii_hexdigit() {
            base = 16;
            i += 2;
        } else {
            // "0x" alone: the "0" is the number.
            return Some(0);
        }
    } else if i < b.len() && b[i] == b'0' {
        base = 8;
    }
    let start = i;
    let mut v: u64 = 0;
    let mut overflow = false;
    while i < b.len() {
        let Some(d) = (b[i] as char).to_digit(base) else {
            break;
        };
        match v
            .checked_mul(u64::from(base))
            .and_then(|x| x.checked_add(u64::from(d)))
        {
            Some(x) => v = x,
            None => overflow = true,
        }
        i += 1;
    }
    if i == start {
        return None;
    }
    if overflow {
        return Some(u64::MAX);
    }
    Some(if neg { v.wrapping_neg() } else { v })
}

/// A double converted to `u64` the way gcc compiles it on x86-64
/// (`cvttsd2si`, with the 2^63 split): perf's thresholds go through this,
/// and out-of-range values (negative, NaN, infinite) land where x86 puts
/// them rather than where Rust's saturating `as` would.
pub(super) fn c_double_to_u64(x: f64) -> u64 {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    // cvttsd2si: truncation, or 0x8000_0000_0000_0000 when out of range.
    let cvt = |y: f64| -> u64 {
        if y.is_nan() || !(-TWO63..TWO63).contains(&y) {
            1 << 63
        } else {
            (y as i64) as u64
        }
    };
    // comisd: NaN compares "below", so it takes the small path.
    if x >= TWO63 {
        cvt(x - TWO63) ^ (1 << 63)
    } else {
        cvt(x)
    }
}
