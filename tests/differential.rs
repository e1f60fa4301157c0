//! Differential tests of the `whatwg` profile (no base) against two URL
//! Standard implementations, `url` (rust-url) and `ada-url`, over the lines
//! of the url-dataset files; and the WPT inputs that need no base against
//! their recorded expected hrefs.
//!
//! When `url` and `ada` agree, canonurl must give the same href, or reject
//! exactly when they both reject. When they disagree, ada is followed (it
//! tracks the WPT more closely) and the disagreement is reported. Lines that
//! are not UTF-8 cannot be given to either: for those canonurl only must not
//! panic.

use crate::common;

use canonurl::{Canonicalizer, Profile};
use common::{read_lines, shared_data_or_skip, show};

/// Outcome of one parser: the href, or `None` for failure.
type Href = Option<Vec<u8>>;

fn show_href(h: &Href) -> String {
    match h {
        Some(h) => show(h),
        None => "failure".to_string(),
    }
}

fn run_dataset(file: &str) {
    let test = format!("differential {file}");
    let Some(data) = shared_data_or_skip(&test) else {
        return;
    };
    let lines = read_lines(&data.join("url-dataset").join(file));
    assert!(!lines.is_empty(), "{file} is empty");
    let mut c = Canonicalizer::new(Profile::Whatwg);
    let mut out = Vec::new();
    let mut non_utf8 = 0;
    let mut accepted = 0;
    let mut disagreements = Vec::new();
    let mut mismatches = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        out.clear();
        let result = c.canonicalize_into(line, &mut out);
        let Ok(s) = std::str::from_utf8(line) else {
            // Neither reference parser takes bytes: only "no panic" is checked.
            non_utf8 += 1;
            continue;
        };
        let got: Href = result.is_ok().then(|| out.clone());
        accepted += usize::from(got.is_some());
        let by_url: Href = url::Url::parse(s)
            .ok()
            .map(|u| String::from(u).into_bytes());
        let by_ada: Href = ada_url::Url::parse(s, None)
            .ok()
            .map(|u| u.href().as_bytes().to_vec());
        if by_url != by_ada {
            disagreements.push(format!(
                "line {}: {}: url {}, ada {}",
                n + 1,
                show(line),
                show_href(&by_url),
                show_href(&by_ada)
            ));
        }
        if got != by_ada {
            mismatches.push(format!(
                "line {}: {}\n      expected {}\n      got      {}",
                n + 1,
                show(line),
                show_href(&by_ada),
                show_href(&got)
            ));
        }
    }
    println!(
        "{file}: {} lines, {} agree with the reference / {} compared, {accepted} accepted by canonurl, \
         {non_utf8} not UTF-8 (no-panic check only)",
        lines.len(),
        lines.len() - non_utf8 - mismatches.len(),
        lines.len() - non_utf8
    );
    if !disagreements.is_empty() {
        println!(
            "{file}: url and ada disagree on {} line(s); following ada. First few:",
            disagreements.len()
        );
        for d in disagreements.iter().take(5) {
            println!("  {d}");
        }
    }
    for m in mismatches.iter().take(20) {
        println!("  {m}");
    }
    assert!(
        mismatches.is_empty(),
        "{file}: {} line(s) differ from the reference",
        mismatches.len()
    );
}

#[test]
fn kasztp() {
    run_dataset("kasztp.txt");
}

#[test]
fn node_files() {
    run_dataset("node_files.txt");
}

#[test]
fn userbait() {
    run_dataset("userbait.txt");
}

#[test]
fn isaacs_files() {
    run_dataset("isaacs_files.txt");
}

#[test]
fn wpt_urltestdata_nobase() {
    run_dataset("wpt_urltestdata_nobase.txt");
}

/// The WPT inputs without a base against the hrefs recorded with them (an
/// empty expected line means the URL Standard fails on the input).
#[test]
fn wpt_urltestdata_nobase_expected() {
    let Some(data) = shared_data_or_skip("wpt_urltestdata_nobase_expected") else {
        return;
    };
    let dir = data.join("url-dataset");
    let inputs = read_lines(&dir.join("wpt_urltestdata_nobase.txt"));
    let expected = read_lines(&dir.join("wpt_urltestdata_nobase.expected"));
    assert_eq!(
        inputs.len(),
        expected.len(),
        "input and expected line counts"
    );
    assert!(inputs.len() >= 500, "only {} lines", inputs.len());
    let mut c = Canonicalizer::new(Profile::Whatwg);
    let mut out = Vec::new();
    let mut failures = Vec::new();
    for (n, (input, want)) in inputs.iter().zip(&expected).enumerate() {
        out.clear();
        let want: Href = (!want.is_empty()).then(|| want.clone());
        let got: Href = c
            .canonicalize_into(input, &mut out)
            .ok()
            .map(|_| out.clone());
        if got != want {
            failures.push(format!(
                "line {}: {}\n      expected {}\n      got      {}",
                n + 1,
                show(input),
                show_href(&want),
                show_href(&got)
            ));
        }
    }
    println!(
        "wpt_urltestdata_nobase.expected: {} passed / {} total",
        inputs.len() - failures.len(),
        inputs.len()
    );
    for f in failures.iter().take(20) {
        println!("  {f}");
    }
    assert!(failures.is_empty(), "{} line(s) differ", failures.len());
}
