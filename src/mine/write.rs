//! The miner's output: a rules file that `--rules` reads as it is, and the
//! evidence file, one JSON object per candidate (docs/mine.md, "Output").
//!
//! Each rule is preceded by a comment with its id, family and headline
//! evidence. Rules learned but not confirmed on the later part of the log
//! are written commented out (`# unverified`), never active; rejected
//! candidates are only in the evidence file.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};

use super::candidates::Rule;
use super::evidence::{Tally, Verdict};
use super::learn::{Decision, Finding};

/// A quoted string with `"`, `\` and control characters escaped: TOML
/// basic strings and JSON strings both read it.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The comment line above a rule: id, family, headline evidence.
fn headline(f: &Finding) -> String {
    let mut line = format!(
        "# {} {}: {} pairs agree ({} sizes), {} contradict",
        f.id,
        f.rule.family().name(),
        f.learn.agree,
        f.learn.distinct_sizes(),
        f.learn.contradict + f.learn.status_contradict,
    );
    let _ = write!(
        line,
        "; held out: {} confirmed, {} contradicted",
        f.confirm.agree,
        f.confirm.contradict + f.confirm.status_contradict
    );
    if f.redirects > 0 {
        let _ = write!(line, "; {} redirects followed", f.redirects);
    }
    if let Decision::Unverified(why) = &f.decision {
        let _ = write!(line, "; unverified ({why})");
    }
    line
}

/// The line prefix of a rule: nothing when active, `# ` when unverified.
fn lead(f: &Finding) -> &'static str {
    if f.decision == Decision::Accepted {
        ""
    } else {
        "# "
    }
}

/// Writes the rules of `findings` (rejected ones left out) as a rules file.
pub(crate) fn rules_file(findings: &[Finding], out: &mut dyn Write) -> io::Result<()> {
    let written: Vec<&Finding> = findings
        .iter()
        .filter(|f| !matches!(f.decision, Decision::Rejected(_)))
        .collect();
    let mut text = String::from(
        "# Rules learned by `canonurl mine` from the sizes and statuses in access logs.\n\
         # Meant for the dedup key: canonurl --dedup-key --rules THIS-FILE ...\n\
         # Rules commented out as unverified were learned but not confirmed on the\n\
         # later part of the log: check them before you switch them on.\n",
    );
    // Top level: host aliases, then the rules of path-only URLs.
    let aliases: Vec<&&Finding> = written
        .iter()
        .filter(|f| matches!(f.rule, Rule::HostAlias { .. }))
        .collect();
    if !aliases.is_empty() {
        text.push_str("host-aliases = [\n");
        for f in aliases {
            if let Rule::HostAlias { from, to } = &f.rule {
                let _ = writeln!(text, "  {}", headline(f));
                let _ = writeln!(text, "  {}[{}, {}],", lead(f), quoted(from), quoted(to));
            }
        }
        text.push_str("]\n");
    }
    let mut by_host: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
    for f in written
        .iter()
        .filter(|f| !matches!(f.rule, Rule::HostAlias { .. }))
    {
        by_host.entry(f.host.as_str()).or_default().push(f);
    }
    if let Some(top) = by_host.remove("") {
        section(&top, None, &mut text);
    }
    for (host, list) in by_host {
        let _ = write!(text, "\n[[host]]\nmatch = {}\n", quoted(host));
        section(&list, Some(host), &mut text);
    }
    out.write_all(text.as_bytes())
}

/// One section's keys, then its path sections (TOML keys after a table
/// header would belong to that table).
fn section(list: &[&Finding], host: Option<&str>, text: &mut String) {
    for f in list
        .iter()
        .filter(|f| matches!(f.rule, Rule::LowercasePath))
    {
        let _ = writeln!(text, "{}", headline(f));
        let _ = writeln!(text, "{}rules = [\"+lowercase-path\"]", lead(f));
    }
    let index: Vec<&&Finding> = list
        .iter()
        .filter(|f| matches!(f.rule, Rule::IndexFile { .. }))
        .collect();
    if !index.is_empty() {
        let active = index.iter().any(|f| f.decision == Decision::Accepted);
        let _ = writeln!(
            text,
            "{}extra-index-files = [",
            if active { "" } else { "# " }
        );
        for f in index {
            if let Rule::IndexFile { name } = &f.rule {
                let _ = writeln!(text, "  {}", headline(f));
                let _ = writeln!(text, "  {}{},", lead(f), quoted(name));
            }
        }
        let _ = writeln!(text, "{}]", if active { "" } else { "# " });
    }
    let rewrites: Vec<&&Finding> = list
        .iter()
        .filter(|f| matches!(f.rule, Rule::Rewrite { .. }))
        .collect();
    if !rewrites.is_empty() {
        let active = rewrites.iter().any(|f| f.decision == Decision::Accepted);
        let _ = writeln!(text, "{}rewrite = [", if active { "" } else { "# " });
        for f in rewrites {
            if let Rule::Rewrite { regex, replace, .. } = &f.rule {
                let _ = writeln!(text, "  {}", headline(f));
                let _ = writeln!(
                    text,
                    "  {}{{ regex = {}, replace = {}, id = {} }},",
                    lead(f),
                    quoted(regex.as_str()),
                    quoted(replace),
                    quoted(&f.id)
                );
            }
        }
        let _ = writeln!(text, "{}]", if active { "" } else { "# " });
    }
    // Parameter rules, one path section per prefix.
    let mut prefixes: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
    for f in list {
        match &f.rule {
            Rule::DropParam { prefix, .. } | Rule::DefaultParam { prefix, .. } => {
                prefixes.entry(prefix.as_str()).or_default().push(f)
            }
            _ => {}
        }
    }
    let table = if host.is_some() {
        "[[host.path]]"
    } else {
        "[[path]]"
    };
    for (prefix, params) in prefixes {
        let active = params.iter().any(|f| f.decision == Decision::Accepted);
        let off = if active { "" } else { "# " };
        text.push('\n');
        let _ = writeln!(text, "{off}{table}\n{off}prefix = {}", quoted(prefix));
        // Each key once, its rules one a line, so that switching an
        // unverified rule on (taking away its `# `) adds to the key rather
        // than writing it a second time (which `--rules` refuses): the
        // parameters as the lines of one array, the defaults as dotted keys
        // of one table.
        let drops: Vec<&&Finding> = params
            .iter()
            .filter(|f| matches!(f.rule, Rule::DropParam { .. }))
            .collect();
        if !drops.is_empty() {
            let any = drops.iter().any(|f| f.decision == Decision::Accepted);
            let key_off = if any { "" } else { "# " };
            let _ = writeln!(text, "{key_off}drop-params = [");
            for f in drops {
                if let Rule::DropParam { name, .. } = &f.rule {
                    let _ = writeln!(text, "  {}", headline(f));
                    let _ = writeln!(text, "  {}{},", lead(f), quoted(name));
                }
            }
            let _ = writeln!(text, "{key_off}]");
        }
        for f in &params {
            if let Rule::DefaultParam { name, value, .. } = &f.rule {
                let _ = writeln!(text, "{}", headline(f));
                let _ = writeln!(
                    text,
                    "{}defaults.{} = {}",
                    lead(f),
                    quoted(name),
                    quoted(value)
                );
            }
        }
    }
}

fn json_tally(t: &Tally) -> String {
    let examples: Vec<String> = t
        .examples
        .iter()
        .map(|e| {
            let size = |s: &Option<u64>| s.map_or("null".to_owned(), |n| n.to_string());
            format!(
                "{{\"from\":{},\"to\":{},\"verdict\":{},\"size_from\":{},\"size_to\":{}}}",
                quoted(&e.from),
                quoted(&e.to),
                quoted(match e.verdict {
                    Verdict::Agree => "agree",
                    Verdict::Contradict => "contradict",
                    Verdict::StatusContradict => "status-contradict",
                    Verdict::Untestable => "untestable",
                }),
                size(&e.size_from),
                size(&e.size_to)
            )
        })
        .collect();
    format!(
        "{{\"agree\":{},\"contradict\":{},\"status_contradict\":{},\"untestable\":{},\"windows_agree\":{},\"windows_contradict\":{},\"distinct_sizes\":{},\"agreement_bound\":{:.4},\"examples\":[{}]}}",
        t.agree,
        t.contradict,
        t.status_contradict,
        t.untestable,
        t.windows_agree,
        t.windows_contradict,
        t.distinct_sizes(),
        t.agreement_bound(),
        examples.join(",")
    )
}

/// Writes one JSON object per finding, rejected ones included.
pub(crate) fn evidence_file(findings: &[Finding], out: &mut dyn Write) -> io::Result<()> {
    for f in findings {
        let (decision, reason) = match &f.decision {
            Decision::Accepted => ("accepted", None),
            Decision::Unverified(why) => ("unverified", Some(why)),
            Decision::Rejected(why) => ("rejected", Some(why)),
        };
        let line = format!(
            "{{\"id\":{},\"family\":{},\"host\":{},\"rule\":{},\"decision\":{},\"reason\":{},\"proposed_by_pairs\":{},\"redirects\":{},\"support\":{},\"learn\":{},\"held_out\":{}}}\n",
            quoted(&f.id),
            quoted(f.rule.family().name()),
            quoted(&f.host),
            quoted(&f.rule.describe()),
            quoted(decision),
            reason.map_or("null".to_owned(), |r| quoted(r)),
            f.proposals,
            f.redirects,
            f.learn.agree,
            json_tally(&f.learn),
            json_tally(&f.confirm),
        );
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(rule: Rule, decision: Decision) -> Finding {
        Finding {
            id: "m-param-1".into(),
            host: "h.example".into(),
            rule,
            decision,
            proposals: 1,
            redirects: 0,
            learn: Tally::default(),
            confirm: Tally::default(),
        }
    }

    /// An active and an unverified rule of each parameter key on one
    /// prefix: the file reads with `--rules`, and again with the
    /// unverified rules switched on (their `# ` taken away), which then
    /// drops both parameters and sets both defaults.
    #[test]
    fn switching_unverified_parameter_rules_on_keeps_one_key() {
        use crate::canon::rules::file;
        use crate::{Canonicalizer, Profile};
        let prefix = || "/p/".to_owned();
        let unverified =
            || Decision::Unverified("held out: 1 pairs confirm < --min-confirm 3".into());
        let findings = [
            param(
                Rule::DropParam {
                    prefix: prefix(),
                    name: "ref".into(),
                },
                Decision::Accepted,
            ),
            param(
                Rule::DropParam {
                    prefix: prefix(),
                    name: "utm".into(),
                },
                unverified(),
            ),
            param(
                Rule::DefaultParam {
                    prefix: prefix(),
                    name: "page".into(),
                    value: "1".into(),
                },
                Decision::Accepted,
            ),
            param(
                Rule::DefaultParam {
                    prefix: prefix(),
                    name: "sort".into(),
                    value: "new".into(),
                },
                unverified(),
            ),
        ];
        let mut out = Vec::new();
        rules_file(&findings, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        // Switched on as the file's header invites: `# ` taken away from
        // every comment after the header but the headlines (`# m-...`).
        let mut preamble = true;
        let mut on = String::new();
        for line in text.lines() {
            let body = line.trim_start();
            preamble &= body.starts_with('#');
            match body.strip_prefix("# ") {
                Some(rule) if !preamble && !body.starts_with("# m-") => {
                    on.push_str(&line[..line.len() - body.len()]);
                    on.push_str(rule);
                }
                _ => on.push_str(line),
            }
            on.push('\n');
        }
        let mask = Profile::Aggressive.rule_mask();
        let run = |rules: &str, url: &[u8]| {
            let set =
                file::build(mask, Some(rules), &[]).unwrap_or_else(|e| panic!("{e}\n{rules}"));
            let mut c =
                Canonicalizer::new(Profile::Aggressive).with_rules(std::sync::Arc::new(set));
            let mut out = Vec::new();
            c.canonicalize_into(url, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        let url = b"http://h.example/p/x.html?page=1&ref=a&sort=new&utm=b&z=1";
        assert_eq!(
            run(&text, url),
            "http://h.example/p/x.html?sort=new&utm=b&z=1",
            "{text}"
        );
        assert_eq!(run(&on, url), "http://h.example/p/x.html?z=1", "{on}");
    }

    #[test]
    fn strings_are_escaped() {
        assert_eq!(quoted(r#"^/a\?x="y"$"#), r#""^/a\\?x=\"y\"$""#);
        assert_eq!(quoted("a\"\\\n"), r#""a\"\\\u000a""#);
        assert_eq!(quoted("\u{7f}"), r#""\u007f""#);
    }
}
