//! perf record's option values as perf parses them: `-m` (pages or a
//! size), `--call-graph` (fp, dwarf[,SIZE]) and `-F` (a rate or `max`).

use crate::error::{Error, Result};
use crate::{CallGraph, Freq, DEFAULT_DWARF_STACK};

fn bad(option: &'static str, value: &str, detail: impl Into<String>) -> Error {
    Error::BadOption {
        option,
        value: value.to_owned(),
        detail: detail.into(),
    }
}

/// A number and its size unit (B, K, M or G, any case) if it ends with a
/// letter; `unknown` says what to use when the letter is none of those.
fn split_unit<'a>(
    option: &'static str,
    s: &'a str,
    unknown: &str,
) -> Result<(&'a str, Option<u64>)> {
    let t = s.trim();
    match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m: u64 = match c.to_ascii_uppercase() {
                'B' => 1,
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                _ => return Err(bad(option, s, format!("unknown unit '{c}' ({unknown})"))),
            };
            Ok((t[..i].trim(), Some(m)))
        }
        _ => Ok((t, None)),
    }
}

/// A size as perf's `--max-size` takes it: bytes, or a number with B, K,
/// M or G.
pub fn parse_size(option: &'static str, s: &str) -> Result<u64> {
    let (num, mult) = split_unit(option, s, "use B, K, M or G")?;
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult.unwrap_or(1)))
        .filter(|&n| n > 0)
        .ok_or_else(|| bad(option, s, "expected a size like 100K or 2M"))
}

/// `-m`: pages, or a size with K/M/G, as a power-of-two number of pages.
pub fn parse_mmap_pages(s: &str) -> Result<usize> {
    let (num, mult) = split_unit("-m", s, "use a page count, or K, M, G")?;
    let n: u64 = num
        .parse()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| bad("-m", s, "expected a number of pages or a size like 1M"))?;
    let page = 4096u64;
    let pages = match mult {
        None => {
            if !n.is_power_of_two() {
                return Err(bad(
                    "-m",
                    s,
                    "the number of pages must be a power of two (e.g. 64, 128, 256)",
                ));
            }
            n
        }
        Some(m) => n
            .checked_mul(m)
            .map(|b| b.div_ceil(page).max(1).next_power_of_two())
            .ok_or_else(|| bad("-m", s, "too large"))?,
    };
    if pages > 1 << 20 {
        return Err(bad(
            "-m",
            s,
            format!("at most {} pages (4 GiB) per ring buffer", 1 << 20),
        ));
    }
    Ok(pages as usize)
}

impl CallGraph {
    /// `--call-graph MODE[,SIZE]`.
    pub fn parse(cg: &str) -> Result<CallGraph> {
        let mut parts = cg.split(',');
        match parts.next().unwrap_or("") {
            "fp" => Ok(CallGraph::Fp),
            "dwarf" => {
                let size = match parts.next() {
                    None => DEFAULT_DWARF_STACK,
                    Some(s) => {
                        let what = format!("dwarf,{s}");
                        let n: u32 = s.trim().parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                            bad(
                                "--call-graph",
                                &what,
                                "the stack size must be a number of bytes, e.g. dwarf,16384",
                            )
                        })?;
                        // As perf: a multiple of 8, at most what a record can hold.
                        let n = n.div_ceil(8) * 8;
                        if n > 65528 {
                            return Err(bad(
                                "--call-graph",
                                &what,
                                "at most 65528 bytes of stack per sample",
                            ));
                        }
                        n
                    }
                };
                Ok(CallGraph::Dwarf(size))
            }
            "lbr" => Err(bad(
                "--call-graph",
                "lbr",
                "needs Intel LBR hardware; sear supports fp and dwarf",
            )),
            other => Err(bad(
                "--call-graph",
                other,
                "use fp (frame pointers) or dwarf[,SIZE]",
            )),
        }
    }
}

impl Freq {
    /// `-F N` or `-F max`.
    pub fn parse(f: &str) -> Result<Freq> {
        match f {
            "max" => Ok(Freq::Max),
            _ => f
                .parse()
                .map(Freq::Hz)
                .map_err(|_| bad("-F", f, "expected samples per second (e.g. 999) or `max`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mmap_sizes_as_perf() {
        assert_eq!(parse_mmap_pages("128").unwrap(), 128);
        assert_eq!(parse_mmap_pages("1M").unwrap(), 256);
        assert_eq!(parse_mmap_pages("5k").unwrap(), 2);
        assert_eq!(parse_mmap_pages("100K").unwrap(), 32);
        for bad in ["0", "3", "100", "x", "1Q", "8X", "", "99999999999G"] {
            assert!(parse_mmap_pages(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn call_graph_modes() {
        assert_eq!(CallGraph::parse("fp").unwrap(), CallGraph::Fp);
        assert_eq!(
            CallGraph::parse("dwarf").unwrap(),
            CallGraph::Dwarf(DEFAULT_DWARF_STACK)
        );
        assert_eq!(
            CallGraph::parse("dwarf,100").unwrap(),
            CallGraph::Dwarf(104)
        );
        assert!(CallGraph::parse("dwarf,70000").is_err());
        assert!(CallGraph::parse("lbr").is_err());
        assert_eq!(Freq::parse("max").unwrap(), Freq::Max);
        assert!(Freq::parse("x").is_err());
    }
}
