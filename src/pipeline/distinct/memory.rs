//! The `--memory` limit of the distinct table: its default, and how a size
//! is written on the command line.

/// Default `--memory` where the machine's memory cannot be read: 1 GiB.
const FALLBACK_MEMORY: u64 = 1 << 30;

/// The default `--memory`: a quarter of the machine's memory (`MemTotal` in
/// `/proc/meminfo`), at least 64 MiB; 1 GiB where it cannot be read.
///
/// ```
/// use canonurl::pipeline::{default_memory_limit, Options};
///
/// assert!(default_memory_limit() >= 64 << 20);
/// // What a run takes when `memory_limit` is not set.
/// assert_eq!(Options::default().memory_limit, None);
/// ```
pub fn default_memory_limit() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some((kib * 1024 / 4).max(64 << 20))
        })
        .unwrap_or(FALLBACK_MEMORY)
}

/// Parses a size: a number (decimals allowed) and an optional unit, as GNU
/// `sort -S`: `K`, `M`, `G`, `T` and `KiB`, `MiB`, `GiB`, `TiB` are binary
/// (1024), `KB`, `MB`, `GB`, `TB` decimal (1000), `B` or nothing bytes. Units
/// are case-insensitive. `512M`, `2G`, `1.5GiB`, `100000` are sizes; `0`,
/// `-1`, `2X` are not.
///
/// ```
/// use canonurl::pipeline::parse_size;
/// assert_eq!(parse_size("512M"), Ok(512 << 20));
/// assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
/// assert_eq!(parse_size("2GB"), Ok(2_000_000_000));
/// assert!(parse_size("0").is_err());
/// ```
pub fn parse_size(s: &str) -> Result<u64, String> {
    let bad =
        || format!("{s:?} is not a size (bytes, or a number with K, M, G, T, KiB..TiB, KB..TB)");
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let scale: u64 = match unit.as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => return Err(bad()),
    };
    if num.is_empty() || num.starts_with('.') && num.len() == 1 {
        return Err(bad());
    }
    let bytes = if let Some((int, frac)) = num.split_once('.') {
        let v: f64 = format!("{}.{frac}", if int.is_empty() { "0" } else { int })
            .parse()
            .map_err(|_| bad())?;
        let b = (v * scale as f64).floor();
        if b.is_nan() || b >= u64::MAX as f64 {
            return Err(bad());
        }
        b as u64
    } else {
        num.parse::<u64>()
            .ok()
            .and_then(|n| n.checked_mul(scale))
            .ok_or_else(bad)?
    };
    if bytes == 0 {
        return Err(format!("{s:?}: the size must be more than 0 bytes"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("100000"), Ok(100_000));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("1T"), Ok(1 << 40));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("2MB"), Ok(2_000_000));
        assert_eq!(parse_size("10B"), Ok(10));
        assert_eq!(parse_size("0.5K"), Ok(512));
        for bad in [
            "",
            "0",
            "0K",
            "0.0001",
            "-1",
            "K",
            ".",
            "1.2.3",
            "2X",
            "1 G B",
            "99999999999T",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?}");
        }
    }
}
