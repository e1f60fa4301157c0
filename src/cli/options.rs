//! From flags to a run: the pipeline's `Options` from the parsed command
//! line (profiles, rules files, fields, JSON paths, `--base`), and the
//! rules table of `--list-rules`.

use super::args::{Cli, FormatChoice};
use canonurl::canon::rules::{self, Edit, Rule};
use canonurl::log::{CsvColumns, Field, JsonPaths, JsonPreset, LogFormat};
use canonurl::pipeline::{Mode, Options, OutputFormat};
use canonurl::{Base, Profile};
use std::ffi::OsString;
use std::sync::Arc;

pub(crate) fn options(cli: &Cli) -> Result<Options, String> {
    let base = match &cli.base {
        Some(b) => Some(base(b)?),
        None => None,
    };
    let mode = if cli.pipe {
        Mode::Pipe
    } else if cli.unique {
        Mode::Unique
    } else if cli.count {
        Mode::Count
    } else {
        Mode::Records
    };
    let field = cli.field;
    let output = cli.format;
    if mode == Mode::Pipe && field == Field::Both && output != OutputFormat::Plain {
        return Err(
            "--pipe --field both writes two tab-separated URLs per line; it needs --format plain"
                .to_string(),
        );
    }
    if cli.header && output != OutputFormat::Tsv {
        return Err("--header writes the column names of --format tsv; it needs --format tsv (JSON Lines names its keys on every row)".to_string());
    }
    if cli.header && mode == Mode::Pipe {
        return Err(
            "--header with --pipe would write one line more than the input has; leave one out"
                .to_string(),
        );
    }
    if cli.max_line_len < 1024 {
        return Err("--max-line-len must be at least 1024".to_string());
    }
    let profile = cli.profile;
    let text = match &cli.rules {
        Some(path) => Some(read_rules_file(path)?),
        None => None,
    };
    let mut edits = Vec::new();
    for r in &cli.rule {
        edits.extend(Edit::parse_list(r).map_err(|e| format!("--rule {r:?}: {e}"))?);
    }
    let build = |p: Profile| {
        rules::file::build_with_unused(p.rule_mask(), text.as_deref(), &edits).map_err(|e| {
            match &cli.rules {
                Some(path) => format!("--rules {}: {e}", path.display()),
                None => format!("--rule: {e}"),
            }
        })
    };
    let (rules, mut unused) = build(profile)?;
    let dedup = if cli.dedup_key || cli.key_profile.is_some() {
        if matches!(mode, Mode::Unique | Mode::Count) {
            return Err(
                "--dedup-key adds a column to each record; with --unique/--count choose the grouping with --profile"
                    .to_string(),
            );
        }
        let p = cli.key_profile.unwrap_or(Profile::Aggressive);
        let (key_rules, key_unused) = build(p)?;
        // A setting that tunes the dedup key is used.
        unused.retain(|u| key_unused.contains(u));
        Some((p, Arc::new(key_rules)))
    } else {
        None
    };
    if cli.explain && matches!(mode, Mode::Unique | Mode::Count) {
        return Err(
            "--explain adds a column to each record; with --unique/--count, --stats counts \
             the distinct URLs each rule merged"
                .to_string(),
        );
    }
    let (with, filter) = record_fields(cli, mode, output)?;
    let json_paths = json_paths(cli);
    let threads = cli
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if threads == 0 {
        return Err("--threads must be at least 1".to_string());
    }
    if mode != Mode::Count && (cli.top.is_some() || cli.min_count.is_some()) {
        let flag = if cli.top.is_some() {
            "--top"
        } else {
            "--min-count"
        };
        return Err(format!("{flag} needs --count"));
    }
    if let Some(dir) = &cli.temp_dir {
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(format!("--temp-dir {}: not a directory", dir.display())),
            Err(e) => return Err(format!("--temp-dir {}: {e}", dir.display())),
        }
    }
    if let (Some(path), false) = (&cli.rules, unused.is_empty()) {
        eprintln!(
            "canonurl: warning: --rules {}: {}",
            path.display(),
            unused_note(profile, &unused)
        );
    }
    let format = match (cli.log_format, &cli.w3c_fields) {
        (FormatChoice::Auto, Some(_)) => Some(LogFormat::W3c),
        (FormatChoice::Auto, None) => None,
        (FormatChoice::Given(f @ (LogFormat::W3c | LogFormat::Cloudfront)), _) => Some(f),
        (FormatChoice::Given(f), Some(_)) => {
            return Err(format!(
                "--w3c-fields gives the layout of W3C logs; it does not apply to -f {f}"
            ))
        }
        (FormatChoice::Given(f), None) => Some(f),
    };
    let w3c_fields = match cli.w3c_fields.as_deref().map(str::trim) {
        Some("") => return Err("--w3c-fields: no field names".to_owned()),
        Some(names) => Some(Arc::from(format!("#Fields: {names}").into_bytes())),
        None => None,
    };
    Ok(Options {
        format,
        w3c_fields,
        json_paths,
        csv_columns: cli.columns.clone().map(Arc::new),
        field,
        profile,
        rules: Some(Arc::new(rules)),
        dedup,
        explain: cli.explain,
        surt: cli.surt,
        rule_merges: cli.stats || cli.stats_json.is_some(),
        base,
        scheme: cli.scheme,
        output,
        mode,
        key: cli.key,
        threads,
        max_line: cli.max_line_len,
        mmap: !cli.no_mmap,
        rejects: cli.rejects.is_some(),
        header: cli.header,
        max_diagnostics: if cli.quiet {
            0
        } else {
            Options::default().max_diagnostics
        },
        memory_limit: cli.memory,
        temp_dir: cli.temp_dir.clone(),
        top: cli.top,
        min_count: cli.min_count,
        with,
        filter,
        ..Options::default()
    })
}

/// `--with`, `--status` and `--method`.
pub(crate) fn record_fields(
    cli: &Cli,
    mode: Mode,
    output: OutputFormat,
) -> Result<
    (
        Vec<canonurl::log::RecordColumn>,
        canonurl::log::RecordFilter,
    ),
    String,
> {
    let mut with = Vec::new();
    for list in &cli.with {
        for c in
            canonurl::log::RecordColumn::parse_list(list).map_err(|e| format!("--with: {e}"))?
        {
            if !with.contains(&c) {
                with.push(c);
            }
        }
    }
    if !with.is_empty() {
        if matches!(mode, Mode::Unique | Mode::Count) {
            return Err(
                "--with adds columns to each record; with --unique/--count a row is a distinct \
                 URL, not a record"
                    .to_string(),
            );
        }
        if output == OutputFormat::Plain {
            return Err("--with adds columns; it needs --format tsv or --format jsonl".to_string());
        }
    }
    let mut filter = canonurl::log::RecordFilter::default();
    for list in &cli.status {
        filter
            .add_statuses(list)
            .map_err(|e| format!("--status: {e}"))?;
    }
    for list in &cli.method {
        filter
            .add_methods(list)
            .map_err(|e| format!("--method: {e}"))?;
    }
    Ok((with, filter))
}

/// `--rules FILE`'s text. Not UTF-8 is an error naming the line and
/// showing the bytes.
pub(crate) fn read_rules_file(path: &std::path::Path) -> Result<String, String> {
    let bytes =
        std::fs::read(path).map_err(|e| format!("--rules {}: cannot read: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        let bad = e.utf8_error().error_len().unwrap_or(bytes.len() - at);
        format!(
            "--rules {}: line {line}: not UTF-8 (bytes {:?}); a rules file is TOML, which is UTF-8",
            path.display(),
            bstr::BStr::new(&bytes[at..at + bad])
        )
    })
}

/// The warning on the settings of a rules file that do nothing in this run:
/// which, on which line, why, and how to switch their rules on.
pub(crate) fn unused_note(profile: Profile, unused: &[rules::file::Unused]) -> String {
    let mut off: Vec<Rule> = unused.iter().map(|u| u.rule).collect();
    off.sort();
    off.dedup();
    let settings: Vec<String> = unused
        .iter()
        .map(|u| format!("line {} '{}' (rule {})", u.line, u.key.name(), u.rule))
        .collect();
    let mask = profile.rule_mask();
    let why = if mask.is_empty() {
        format!(
            " (--profile {} runs no rules, and neither the file nor --rule switches these on)",
            profile.name()
        )
    } else {
        format!(" after --profile {}, the file and --rule", profile.name())
    };
    let on: Vec<String> = off.iter().map(|r| format!("\"+{r}\"")).collect();
    let flags: Vec<String> = off.iter().map(|r| format!("+{r}")).collect();
    // A profile that runs them all, when this one does not.
    let profile_hint = Profile::ALL
        .into_iter()
        .find(|p| off.iter().all(|&r| p.rule_mask().has(r)))
        .filter(|_| off.iter().any(|&r| !mask.has(r)))
        .map_or(String::new(), |p| {
            format!(", or use --profile {}", p.name())
        });
    let (n, verb) = match unused.len() {
        1 => ("1 setting".to_string(), "has"),
        n => (format!("{n} settings"), "have"),
    };
    format!(
        "{n} for rules that are off{why} {verb} no effect: {}. Switch the rules on with \
         rules = [{}] in the file or --rule {}{profile_hint}",
        settings.join(", "),
        on.join(", "),
        flags.join(","),
    )
}

/// `--base`: any absolute URL, as the URL Standard takes a base
/// (`file:///srv/`, `sc:/a`, and `about:blank`, whose opaque path serves
/// fragment-only references; a log's request path against it is rejected
/// per record, see `log::base_prefix`).
pub(crate) fn base(arg: &OsString) -> Result<Base, String> {
    let bytes = arg.as_encoded_bytes();
    let shown = arg.to_string_lossy();
    Base::parse(bytes).map_err(|r| {
        // `example.com`, `example.com/shop`: a host without a scheme.
        let guess = [b"https://".as_slice(), bytes].concat();
        let looks_like_host =
            !bytes.starts_with(b"/") && !bytes.contains(&b':') && Base::parse(&guess).is_ok();
        if looks_like_host {
            format!(
                "invalid --base {shown:?}: a base needs a scheme; did you mean --base https://{shown}?"
            )
        } else {
            format!(
                "invalid --base {shown:?}: {r}; a base is an absolute URL (`scheme:...`, as in \
                 https://example.com)"
            )
        }
    })
}

/// `--list-rules`: every rule, its tier and what it does; then which
/// profile runs which tiers.
pub(crate) fn rules_table() -> String {
    let mut t = format!("{:<18} {:<11} {:<21} EFFECT\n", "RULE", "TIER", "SETTING");
    for r in Rule::ALL {
        let d = r.definition();
        t.push_str(&format!(
            "{:<18} {:<11} {:<21} {}\n",
            d.name,
            d.tier.name(),
            d.setting.unwrap_or("-"),
            d.effect
        ));
    }
    t.push_str(
        "\nEXAMPLES (each rule alone, on top of rfc3986; a rules file where one is needed)\n",
    );
    for r in Rule::ALL {
        let d = r.definition();
        t.push_str(&format!(
            "  {:<18} {} -> {}\n",
            d.name, d.example.0, d.example.1
        ));
        if !d.config.is_empty() {
            t.push_str(&format!("  {:<18} rules file: {}\n", "", d.config));
        }
    }
    t.push_str(
        "\nProfiles: whatwg and rfc3986 run no rule; safe runs the safe tier; aggressive runs\n\
         the safe and aggressive tiers. Opt-in rules run only when switched on\n\
         (--rule +name, or a rules file). A setting is chosen with --rule name=value.\n",
    );
    t
}

/// `--columns`: role=NAME pairs and a preset.
pub(crate) fn parse_columns(spec: &str) -> Result<CsvColumns, String> {
    spec.parse()
}

/// JSON paths from `--json-preset` and the `--json-*` overrides.
pub(crate) fn json_paths(cli: &Cli) -> Option<JsonPaths> {
    let overrides = [
        &cli.json_target,
        &cli.json_request,
        &cli.json_query,
        &cli.json_host,
        &cli.json_scheme,
        &cli.json_referer,
        &cli.json_status,
        &cli.json_bytes,
        &cli.json_method,
        &cli.json_time,
        &cli.json_client,
    ];
    if cli.json_preset.is_none() && overrides.iter().all(|o| o.is_none()) {
        return None;
    }
    let mut paths = cli.json_preset.map(JsonPreset::paths).unwrap_or_default();
    let set = |slot: &mut Option<String>, v: &Option<String>| {
        if let Some(v) = v {
            *slot = Some(v.clone());
        }
    };
    set(&mut paths.target, &cli.json_target);
    set(&mut paths.request_line, &cli.json_request);
    set(&mut paths.query, &cli.json_query);
    set(&mut paths.host, &cli.json_host);
    set(&mut paths.scheme, &cli.json_scheme);
    set(&mut paths.referer, &cli.json_referer);
    set(&mut paths.status, &cli.json_status);
    set(&mut paths.bytes, &cli.json_bytes);
    set(&mut paths.method, &cli.json_method);
    set(&mut paths.time, &cli.json_time);
    set(&mut paths.client, &cli.json_client);
    Some(paths)
}
