//! Rules files: TOML that edits the rules for every host and for chosen
//! hosts.
//!
//! ```toml
//! # For every host (edits on top of the profile's tier and before --rule).
//! rules = ["-www", "trailing-slash=add"]
//! extra-tracking-params = ["ref_src"]
//!
//! [[host]]
//! match = ["example.com", "*.example.com"]
//! rules = ["+lowercase-path"]
//! state-params = ["back"]
//! defaults = { sort = "ascending" }
//! rewrite = [
//!   { regex = '/story\?id=(\d+)', replace = '/story_$1' },
//!   { literal = "/old-shop/", replace = "/shop/" },
//! ]
//! ```
//!
//! Keys (top level and in a `[[host]]` section): `rules` (edits as for
//! `--rule`), `trailing-slash`, `sort-query`, `keep-position`,
//! `index-files`, `tracking-params` and `session-params` (replace the
//! lists), `extra-index-files`, `extra-tracking-params` and
//! `extra-session-params` (add to them), `state-params`, `defaults`,
//! `rewrite`. A host section starts from the top-level settings (after
//! `--rule`) and changes only what it names; its `rewrite` rules run after
//! the top-level ones.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;

use super::glob::Glob;
use super::rewrite::Rewrite;
use super::{Config, Edit, RuleMask, RuleSet, SessionParam};

/// One host pattern or several.
#[derive(Deserialize, Debug)]
#[serde(untagged)]
enum Patterns {
    One(String),
    Many(Vec<String>),
}

/// A rewrite rule as written.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RewriteSpec {
    regex: Option<String>,
    literal: Option<String>,
    replace: String,
}

/// Settings that both levels have.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Settings {
    rules: Option<Vec<String>>,
    trailing_slash: Option<String>,
    sort_query: Option<String>,
    keep_position: Option<Vec<String>>,
    index_files: Option<Vec<String>>,
    extra_index_files: Option<Vec<String>>,
    tracking_params: Option<Vec<String>>,
    extra_tracking_params: Option<Vec<String>>,
    session_params: Option<Vec<String>>,
    extra_session_params: Option<Vec<String>>,
    state_params: Option<Vec<String>>,
    defaults: Option<BTreeMap<String, String>>,
    rewrite: Option<Vec<RewriteSpec>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct HostSection {
    #[serde(rename = "match")]
    patterns: Patterns,
    #[serde(flatten)]
    settings: Settings,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "kebab-case")]
struct FileSpec {
    #[serde(default)]
    host: Vec<HostSection>,
    #[serde(flatten)]
    settings: Settings,
}

/// Builds the rule set of a run: the tier's `mask` and default lists, the
/// file's top-level settings, the command line's `edits`, then each host
/// section. `text` is the rules file, if any.
pub fn build(mask: RuleMask, text: Option<&str>, edits: &[Edit]) -> Result<RuleSet, String> {
    let mut global = Config::for_mask(mask);
    let spec: Option<FileSpec> = match text {
        Some(t) => Some(toml::from_str(t).map_err(|e| e.to_string())?),
        None => None,
    };
    let mut slot = 0;
    if let Some(s) = &spec {
        s.settings
            .apply(&mut global, &mut slot)
            .map_err(|e| format!("top level: {e}"))?;
    }
    for e in edits {
        e.apply(&mut global);
    }
    let mut set = RuleSet::from_global(global.clone());
    for (i, h) in spec.iter().flat_map(|s| s.host.iter()).enumerate() {
        let mut c = global.clone();
        let at = |e: String| format!("host section {} ({:?}): {e}", i + 1, h.patterns);
        h.settings.apply(&mut c, &mut slot).map_err(at)?;
        c.finish();
        let patterns = match &h.patterns {
            Patterns::One(p) => std::slice::from_ref(p),
            Patterns::Many(p) => p.as_slice(),
        };
        if patterns.is_empty() {
            return Err(at("'match' names no host".into()));
        }
        set.add_host(patterns, c).map_err(at)?;
    }
    Ok(set)
}

fn globs(list: &[String]) -> Result<Vec<Glob>, String> {
    list.iter().map(|s| Glob::new(s)).collect()
}

fn sessions(list: &[String]) -> Result<Vec<SessionParam>, String> {
    list.iter().map(|s| SessionParam::parse(s)).collect()
}

fn lower(list: &[String]) -> Vec<Vec<u8>> {
    list.iter()
        .map(|s| s.as_bytes().to_ascii_lowercase())
        .collect()
}

impl Settings {
    fn apply(&self, c: &mut Config, slot: &mut usize) -> Result<(), String> {
        for e in self.rules.iter().flatten() {
            Edit::parse(e)?.apply(c);
        }
        if let Some(v) = &self.trailing_slash {
            Edit::parse(&format!("trailing-slash={v}"))?.apply(c);
        }
        if let Some(v) = &self.sort_query {
            Edit::parse(&format!("sort-query={v}"))?.apply(c);
        }
        if let Some(v) = &self.keep_position {
            c.keep_position = v.iter().map(|s| s.as_bytes().to_vec()).collect();
        }
        if let Some(v) = &self.index_files {
            c.index_files = lower(v);
        }
        if let Some(v) = &self.extra_index_files {
            c.index_files.extend(lower(v));
        }
        if let Some(v) = &self.tracking_params {
            c.tracking = globs(v)?;
        }
        if let Some(v) = &self.extra_tracking_params {
            c.tracking.extend(globs(v)?);
        }
        if let Some(v) = &self.session_params {
            c.session = sessions(v)?;
        }
        if let Some(v) = &self.extra_session_params {
            c.session.extend(sessions(v)?);
        }
        if let Some(v) = &self.state_params {
            c.state = globs(v)?;
        }
        if let Some(v) = &self.defaults {
            c.defaults = v
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
                .collect();
        }
        for r in self.rewrite.iter().flatten() {
            let mut rw = match (&r.regex, &r.literal) {
                (Some(re), None) => Rewrite::regex(re, &r.replace)?,
                (None, Some(lit)) => Rewrite::literal(lit, &r.replace)?,
                _ => return Err("a rewrite needs exactly one of 'regex' and 'literal'".into()),
            };
            rw.slot = *slot;
            *slot += 1;
            c.rewrites.push(Arc::new(rw));
        }
        c.finish();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::rules::{Rule, SortQuery, Tier, TrailingSlash};

    const EXAMPLE: &str = r#"
rules = ["-www", "trailing-slash=add"]
extra-tracking-params = ["ref_src"]

[[host]]
match = ["example.com", "*.example.com"]
rules = ["+lowercase-path"]
state-params = ["back"]
sort-query = "key-value"
defaults = { sort = "ascending" }
rewrite = [
  { regex = '/story\?id=(\d+)', replace = '/story_$1' },
  { literal = "/old-shop/", replace = "/shop/" },
]

[[host]]
match = "iis.test"
index-files = ["Home.aspx"]
"#;

    #[test]
    fn example_file() {
        let set = build(
            RuleMask::up_to(Tier::Aggressive),
            Some(EXAMPLE),
            &[Edit::On(Rule::HttpsAsHttp)],
        )
        .unwrap();
        let g = set.global();
        assert!(!g.enabled.has(Rule::Www) && g.enabled.has(Rule::HttpsAsHttp));
        assert_eq!(g.trailing_slash, TrailingSlash::Add);
        assert!(g.tracking.iter().any(|t| t.matches(b"ref_src")));
        assert!(g.tracking.iter().any(|t| t.matches(b"utm_x")));
        let h = set.for_host(Some(b"shop.example.com"));
        assert!(h.enabled.has(Rule::LowercasePath) && h.enabled.has(Rule::HttpsAsHttp));
        assert_eq!(h.sort, SortQuery::KeyValue);
        assert_eq!(h.rewrites.len(), 2);
        assert_eq!(h.defaults, vec![(b"sort".to_vec(), b"ascending".to_vec())]);
        assert_eq!(set.rewrite_count(), 2);
        let iis = set.for_host(Some(b"iis.test"));
        assert_eq!(iis.index_files, vec![b"home.aspx".to_vec()]);
        assert!(!iis.enabled.has(Rule::LowercasePath));
    }

    #[test]
    fn errors_name_the_place() {
        let e = build(RuleMask::NONE, Some("rules = [\"+nope\"]"), &[]).unwrap_err();
        assert!(
            e.contains("top level") && e.contains("unknown rule 'nope'"),
            "{e}"
        );
        let e = build(RuleMask::NONE, Some("[[host]]\nmatch = 'a'\nfoo = 1"), &[]).unwrap_err();
        assert!(e.contains("foo"), "{e}");
        let e = build(
            RuleMask::NONE,
            Some("[[host]]\nmatch = 'a'\nrewrite = [{ regex = '(', replace = '' }]"),
            &[],
        )
        .unwrap_err();
        assert!(e.contains("host section 1"), "{e}");
        let e = build(RuleMask::NONE, Some("rules = 3"), &[]).unwrap_err();
        assert!(e.contains("rules"), "{e}");
    }
}
