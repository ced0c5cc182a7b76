//! perf's `--time` ranges: which sample times a command keeps.
//!
//! The forms are perf 6.1's (`perf report --time`, `perf script --time`):
//!
//! - `START,STOP` in seconds as script prints times (`1234.567890`), either
//!   side may be empty (`1234.5,` is from 1234.5 on, `,1234.5` up to it);
//! - several such ranges separated by spaces (`"1.5,2 3,4"`), in order and
//!   not overlapping;
//! - percent slices of the recording from its first to its last sample
//!   (the SAMPLE_TIME header): `10%/2` is the second tenth, `10%` the first,
//!   `0%-10%` a span, and comma-separated lists of either (`10%/1,10%/3`,
//!   `0%-10%,30%-40%`).
//!
//! Slices are computed as perf computes them (the start rounded, the end one
//! nanosecond short of the next slice's start unless it is the last sample's
//! time), so both tools keep the same samples. Samples without a time are
//! always kept, as perf keeps them. One difference, deliberate: an open end
//! in the last of several ranges (`"1,2 3,"`) reaches to the end of the
//! recording, where perf 6.1 keeps no sample at all.

use crate::Error;

/// Time ranges, in nanoseconds, both ends included, in ascending order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeRanges {
    ranges: Vec<(u64, u64)>,
}

impl TimeRanges {
    /// Parses perf's `--time` forms. `bounds` gives the recording's first
    /// and last sample times, which percent forms need (None: the recording
    /// does not say, and a percent form is an error saying so).
    pub fn parse(s: &str, bounds: Option<(u64, u64)>) -> Result<Self, Error> {
        let bad = |why: &str| Error::TimeRange(format!("--time {s}: {why}"));
        let s_trim = s.trim();
        let ranges = if s_trim.contains('%') {
            let (first, last) = bounds.ok_or_else(|| {
                bad(
                    "percent slices count from the recording's first to its last sample, \
                     and it does not record them (no SAMPLE_TIME header: a pipe-mode \
                     recording, or perf record --buildid-all without --timestamp-boundary); \
                     give times in seconds instead, as `sear script` prints them",
                )
            })?;
            percent_ranges(s_trim, first, last).map_err(|w| bad(&w))?
        } else {
            let mut ranges = Vec::new();
            for piece in s_trim.split_ascii_whitespace() {
                ranges.push(seconds_range(piece).map_err(|w| bad(&w))?);
            }
            if ranges.is_empty() {
                return Err(bad("expected START,STOP (either may be empty)"));
            }
            if ranges.windows(2).any(|w| w[0].1 >= w[1].0) {
                return Err(bad(
                    "ranges must come in order and not overlap (each range's STOP before the next START)",
                ));
            }
            ranges
        };
        Ok(TimeRanges { ranges })
    }

    /// Whether a sample at `t` is kept (a sample without a time, 0, is).
    pub fn keeps(&self, t: u64) -> bool {
        t == 0 || self.covers(t)
    }

    /// Whether a sample at `t` is kept when the ranges count from `origin`
    /// (script's `--reltime`: from the first sample).
    pub fn keeps_from(&self, t: u64, origin: u64) -> bool {
        t == 0 || self.covers(t.saturating_sub(origin))
    }

    fn covers(&self, t: u64) -> bool {
        match self.ranges.as_slice() {
            [] => true,
            [(lo, hi)] => t >= *lo && t <= *hi,
            many => many.iter().any(|&(lo, hi)| t >= lo && t <= hi),
        }
    }
}

/// `START,STOP` in seconds: nanoseconds, an empty START 0, an empty STOP
/// open.
fn seconds_range(piece: &str) -> Result<(u64, u64), String> {
    let (a, b) = piece
        .split_once(',')
        .ok_or_else(|| format!("`{piece}`: expected START,STOP (either may be empty)"))?;
    let start = if a.is_empty() { 0 } else { seconds(a)? };
    let stop = if b.is_empty() { u64::MAX } else { seconds(b)? };
    if start > stop {
        return Err(format!("`{piece}`: the start is after the stop"));
    }
    Ok((start, stop))
}

/// `SECONDS[.FRACTION]` (at most nine fraction digits) in nanoseconds.
fn seconds(x: &str) -> Result<u64, String> {
    let bad = || format!("`{x}` is not a time in seconds like 1234.567890");
    let (whole, frac) = x.split_once('.').unwrap_or((x, ""));
    if whole.is_empty() && frac.is_empty()
        || frac.len() > 9
        || !whole.bytes().all(|c| c.is_ascii_digit())
        || !frac.bytes().all(|c| c.is_ascii_digit())
    {
        return Err(bad());
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad())?
    };
    let frac: u64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<9}").parse().map_err(|_| bad())?
    };
    whole
        .checked_mul(1_000_000_000)
        .and_then(|w| w.checked_add(frac))
        .ok_or_else(bad)
}

/// perf's percent forms over the span from `first` to `last`.
fn percent_ranges(s: &str, first: u64, last: u64) -> Result<Vec<(u64, u64)>, String> {
    let slice = |lo: f64, hi: f64| -> Result<(u64, u64), String> {
        if !(0.0..=1.0).contains(&lo) || !(0.0..=1.0).contains(&hi) {
            return Err("percentages must lie between 0% and 100%".into());
        }
        let total = last.saturating_sub(first) as f64;
        let start = first + (lo * total).round() as u64;
        let mut end = first + (hi * total).round() as u64;
        // (As perf: each slice ends a nanosecond before the next begins.)
        if end > start && end != last {
            end -= 1;
        }
        Ok((start, end))
    };
    let pieces: Vec<&str> = s.split(',').collect();
    let mut out = Vec::with_capacity(pieces.len());
    if s.contains('/') {
        // `10%/2`: the second 10% slice.
        for p in pieces {
            let (pc, n) = p
                .split_once('/')
                .ok_or_else(|| format!("`{p}`: expected PERCENT%/N, like 10%/2"))?;
            let pc = percent(pc)?;
            let n: i64 = n
                .trim()
                .parse()
                .map_err(|_| format!("`{p}`: `{n}` is not a slice number"))?;
            if pc <= 0.0 {
                return Err(format!("`{p}`: the slice must be more than 0%"));
            }
            out.push(slice(pc * (n - 1) as f64, pc * n as f64)?);
        }
    } else if s.contains('-') {
        // `0%-10%`: a span.
        for p in pieces {
            let (a, b) = p
                .split_once('-')
                .ok_or_else(|| format!("`{p}`: expected START%-STOP%, like 0%-10%"))?;
            out.push(slice(percent(a)?, percent(b)?)?);
        }
    } else {
        // `10%`: the first 10% slice.
        let [p] = pieces.as_slice() else {
            return Err("expected one PERCENT%, slices PERCENT%/N or spans START%-STOP%".into());
        };
        let pc = percent(p)?;
        if pc <= 0.0 {
            return Err(format!("`{p}`: the slice must be more than 0%"));
        }
        out.push(slice(0.0, pc)?);
    }
    Ok(out)
}

/// `12.5%` as 0.125.
fn percent(x: &str) -> Result<f64, String> {
    let x = x.trim();
    let n = x
        .strip_suffix('%')
        .ok_or_else(|| format!("`{x}`: a percentage ends with %"))?;
    let v: f64 = n
        .parse()
        .map_err(|_| format!("`{x}` is not a percentage"))?;
    if !v.is_finite() {
        return Err(format!("`{x}` is not a percentage"));
    }
    Ok(v / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<(u64, u64)> {
        TimeRanges::parse(s, Some((1_000, 2_000))).unwrap().ranges
    }

    #[test]
    fn seconds_forms() {
        assert_eq!(p("1.5,2"), [(1_500_000_000, 2_000_000_000)]);
        assert_eq!(p(",3.000000001"), [(0, 3_000_000_001)]);
        assert_eq!(p("4,"), [(4_000_000_000, u64::MAX)]);
        assert_eq!(p(","), [(0, u64::MAX)]);
        assert_eq!(
            p("1,2 3,4"),
            [
                (1_000_000_000, 2_000_000_000),
                (3_000_000_000, 4_000_000_000)
            ]
        );
        for bad in [
            "4",
            "x,1",
            "2,1",
            "1.0000000001,",
            "",
            "3,4 1,2",
            "1,3 2,4",
            "-1,2",
            "1.2.3,",
        ] {
            assert!(TimeRanges::parse(bad, None).is_err(), "{bad}");
        }
    }

    #[test]
    fn percent_forms_as_perf() {
        // first 1000, last 2000: a span of 1000 ns.
        assert_eq!(p("10%/2"), [(1_100, 1_199)]);
        assert_eq!(p("10%"), [(1_000, 1_099)]);
        assert_eq!(p("0%-10%"), [(1_000, 1_099)]);
        assert_eq!(p("10%/1,10%/3"), [(1_000, 1_099), (1_200, 1_299)]);
        assert_eq!(p("0%-10%,30%-40%"), [(1_000, 1_099), (1_300, 1_399)]);
        // The last slice ends on the last sample.
        assert_eq!(p("50%/2"), [(1_500, 2_000)]);
        assert_eq!(p("90%-100%"), [(1_900, 2_000)]);
        for bad in [
            "0%/1", "10%/0", "10%/11", "x%/2", "10/2", "110%", "5%-120%", "10%,20%",
        ] {
            assert!(
                TimeRanges::parse(bad, Some((1_000, 2_000))).is_err(),
                "{bad}"
            );
        }
        assert!(TimeRanges::parse("10%", None).is_err());
    }

    #[test]
    fn keeps() {
        let one = TimeRanges::parse("1,2", None).unwrap();
        assert!(one.keeps(0));
        assert!(one.keeps(1_000_000_000) && one.keeps(2_000_000_000));
        assert!(!one.keeps(999_999_999) && !one.keeps(2_000_000_001));
        let two = TimeRanges::parse("1,2 3,", None).unwrap();
        assert!(!two.keeps(2_500_000_000) && two.keeps(9_000_000_000));
        let rel = TimeRanges::parse("1,2", None).unwrap();
        assert!(rel.keeps_from(1_000_000_005, 5) && !rel.keeps_from(1_000_000_004, 5));
        assert!(rel.keeps_from(0, 5));
    }
}
