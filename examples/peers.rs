//! Runs one URL list through one canonicalizer, once, for instruction counting
//! (`benches/instructions.sh` and `benches/guard.sh` run it under callgrind).
//!
//! `cargo run --release --example peers -- FILE MODE` where MODE is `none`
//! (read and split only: the harness cost, subtracted by the scripts), a
//! canonurl profile (`whatwg`, `rfc3986`, `safe`, `aggressive`), `ada` or
//! `url`. Lines that are not UTF-8 are left out for every mode (and so are
//! empty lines), so all of them see the same inputs.

use canonurl::{Canonicalizer, Profile};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: peers FILE none|whatwg|rfc3986|safe|aggressive|ada|url");
        std::process::exit(2);
    }
    let data = std::fs::read(&args[1]).unwrap_or_else(|e| {
        eprintln!("peers: {}: {e}", args[1]);
        std::process::exit(2)
    });
    let lines: Vec<&str> = data
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .filter_map(|l| std::str::from_utf8(l).ok())
        .collect();
    let mut out = Vec::new();
    let mut accepted = 0usize;
    match args[2].as_str() {
        "none" => {
            for l in &lines {
                out.clear();
                out.extend_from_slice(l.as_bytes());
                accepted += std::hint::black_box(out.len()) & 1;
            }
        }
        "ada" => {
            for l in &lines {
                if let Ok(u) = ada_url::Url::parse(l, None) {
                    accepted += std::hint::black_box(u.href().len()) & 1;
                }
            }
        }
        "url" => {
            for l in &lines {
                if let Ok(u) = url::Url::parse(l) {
                    accepted += std::hint::black_box(u.as_str().len()) & 1;
                }
            }
        }
        // Every profile by its `Profile` name (whatwg, rfc3986, safe,
        // aggressive), so a new profile is measurable without a new mode.
        mode => {
            let profile: Profile = mode.parse().unwrap_or_else(|e| {
                eprintln!("peers: {e}");
                std::process::exit(2)
            });
            let mut c = Canonicalizer::new(profile);
            for l in &lines {
                out.clear();
                if c.canonicalize_into(l.as_bytes(), &mut out).is_ok() {
                    accepted += std::hint::black_box(out.len()) & 1;
                }
            }
        }
    }
    eprintln!("{} lines, checksum {accepted}", lines.len());
}
