//! `canonurl._canonurl`: the Python extension of canonurl (PyO3).
//!
//! The Python package (`python/canonurl/__init__.py`) re-exports what is
//! defined here and adds the pieces that are easier in Python (the
//! `RejectError` class, pyarrow conversions of chunked arrays). Everything per
//! URL happens in Rust:
//!
//! ```text
//! str/bytes ──> Worker (Canonicalizer + dedup-key Canonicalizer + buffers) ──> str | None
//! list      ──> one Rust loop, one Worker                                  ──> list
//! Arrow     ──> C data interface (no copy) ──> loop without the GIL        ──> Arrow array
//! ```
//!
//! A [`Shared`] configuration (profile, base, rules) keeps a pool of
//! [`Worker`]s, so that one `Canonicalizer` object may be used from many
//! threads (the Arrow calls release the GIL) without locking one another
//! out: a call takes a worker from the pool, or clones the template when
//! the pool is empty, and puts it back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use canonurl::canon::rules::{file, Edit, Rule, RuleSet};
use canonurl::canon::surt::{surt, SurtForm};
use canonurl::{canon, Base, Canonical, Parts, Profile, Reject, ABSENT};
use pyo3::exceptions::{PyRuntimeWarning, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple, PyType};

mod arrow;

/// What a call gives for each URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// The canonical URL in the configured profile.
    Url,
    /// The dedup key: the URL canonicalized with the key profile.
    DedupKey,
    /// The canonical URL in SURT form.
    Surt(SurtForm),
    /// XXH64 seed 42 of the canonical URL (`--key`, Spark's `xxhash64`).
    Fingerprint,
    /// XXH64 seed 42 of the dedup key.
    DedupFingerprint,
}

impl Output {
    fn parse(s: &str) -> PyResult<Output> {
        Ok(match s {
            "url" => Output::Url,
            "dedup_key" => Output::DedupKey,
            "surt" => Output::Surt(SurtForm::Cdx),
            "surt_classic" => Output::Surt(SurtForm::Classic),
            "fingerprint" => Output::Fingerprint,
            "dedup_fingerprint" => Output::DedupFingerprint,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "unknown output {s:?} (expected 'url', 'dedup_key', 'surt', 'surt_classic', \
                     'fingerprint' or 'dedup_fingerprint')"
                )))
            }
        })
    }

    /// The output is a 64-bit integer, not a string.
    fn is_number(self) -> bool {
        matches!(self, Output::Fingerprint | Output::DedupFingerprint)
    }
}

/// What to do with a rejected URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Errors {
    /// Give `None` (a null in Arrow).
    Null,
    /// Raise `RejectError`.
    Raise,
}

impl Errors {
    fn parse(s: &str) -> PyResult<Errors> {
        match s {
            "null" => Ok(Errors::Null),
            "raise" => Ok(Errors::Raise),
            _ => Err(PyValueError::new_err(format!(
                "unknown errors={s:?} (expected 'null' or 'raise')"
            ))),
        }
    }
}

/// One canonicalizer per profile (the configured one and the dedup key's)
/// with the buffers a call writes into. Not shared between threads: a call
/// owns it while it runs.
#[derive(Clone, Debug)]
pub struct Worker {
    canon: canonurl::Canonicalizer,
    key: canonurl::Canonicalizer,
    /// Request-target mode: `canonicalize_target` (`canonurl -f plain`).
    target: bool,
    /// The canonical URL of the last call.
    out: Vec<u8>,
    /// The dedup key or SURT form of the last call.
    aux: Vec<u8>,
}

impl Worker {
    /// Canonicalizes `input` into `self.out` with the configured profile.
    #[inline]
    fn canonical(&mut self, input: &[u8]) -> Result<Canonical, Reject> {
        self.out.clear();
        if self.target {
            self.canon.canonicalize_target(input, &mut self.out)
        } else {
            self.canon.canonicalize_into(input, &mut self.out)
        }
    }

    /// The bytes `what` asks for (not for the number outputs: see
    /// [`Worker::number`]).
    #[inline]
    pub fn text(&mut self, input: &[u8], what: Output) -> Result<&[u8], Reject> {
        match what {
            Output::Url | Output::Fingerprint => {
                self.canonical(input)?;
                Ok(&self.out)
            }
            Output::DedupKey | Output::DedupFingerprint => {
                self.aux.clear();
                if self.target {
                    self.key.canonicalize_target(input, &mut self.aux)?;
                } else {
                    self.key.canonicalize_into(input, &mut self.aux)?;
                }
                Ok(&self.aux)
            }
            Output::Surt(form) => {
                let c = self.canonical(input)?;
                self.aux.clear();
                surt(&self.out, &c.parts, form, &mut self.aux);
                Ok(&self.aux)
            }
        }
    }

    /// The fingerprint `what` asks for: XXH64 seed 42 of the URL or the
    /// dedup key, as a signed number (`canonurl --key`).
    #[inline]
    pub fn number(&mut self, input: &[u8], what: Output) -> Result<i64, Reject> {
        let text_of = match what {
            Output::DedupFingerprint | Output::DedupKey => Output::DedupKey,
            _ => Output::Url,
        };
        self.text(input, text_of).map(canon::key)
    }

    /// `--explain`'s labels of the rules that changed the last URL: a rule's
    /// name, and for `rewrite` each fired rewrite's id (`rewrite:story-id`),
    /// a plain `rewrite` for one without an id.
    fn labels(&self, c: &Canonical) -> Vec<String> {
        let mut labels = Vec::new();
        for r in c.fired.iter() {
            let ids: Vec<Option<&str>> = match (r, self.canon.rules()) {
                (Rule::Rewrite, Some(set)) => self
                    .canon
                    .fired_rewrites()
                    .iter()
                    .map(|&slot| set.rewrite_id(slot as usize))
                    .collect(),
                _ => Vec::new(),
            };
            if ids.is_empty() || ids.contains(&None) {
                labels.push(r.name().to_owned());
            }
            for id in ids.into_iter().flatten() {
                labels.push(format!("{}:{id}", r.name()));
            }
        }
        labels
    }
}

/// A configuration and its pool of workers.
#[derive(Debug)]
pub struct Shared {
    template: Worker,
    /// The worker of calls that find it free (one uncontended lock).
    first: Mutex<Worker>,
    /// More workers, for calls made while `first` is busy (other threads,
    /// or a generator that calls back into the same object).
    pool: Mutex<Vec<Worker>>,
    profile: Profile,
    key_profile: Profile,
    base: Option<String>,
}

fn unpoison<'a, T>(
    r: Result<MutexGuard<'a, T>, PoisonError<MutexGuard<'a, T>>>,
) -> MutexGuard<'a, T> {
    r.unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Runs `f` with a worker of its own.
    #[inline]
    pub fn with_worker<R>(&self, f: impl FnOnce(&mut Worker) -> R) -> R {
        if let Ok(mut w) = self.first.try_lock() {
            return f(&mut w);
        }
        let mut w = unpoison(self.pool.lock())
            .pop()
            .unwrap_or_else(|| self.template.clone());
        let r = f(&mut w);
        unpoison(self.pool.lock()).push(w);
        r
    }
}

/// What configures a canonicalizer, as given from Python.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
struct Settings {
    profile: String,
    base: Option<String>,
    rules: Vec<String>,
    rules_file: Option<String>,
    rules_toml: Option<String>,
    key_profile: String,
    target: bool,
}

fn parse_profile(name: &str, what: &str) -> PyResult<Profile> {
    name.parse::<Profile>()
        .map_err(|e| PyValueError::new_err(format!("{what}: {e}")))
}

impl Settings {
    /// Parses the base and builds the rule sets, as the command does for
    /// `--profile`, `--base`, `--rules FILE`, `--rule` and `--key-profile`.
    /// Warns (Python's `RuntimeWarning`) about rules-file settings that tune
    /// a rule that is off, as the command does.
    fn build(&self, py: Python<'_>) -> PyResult<Shared> {
        let profile = parse_profile(&self.profile, "profile")?;
        let key_profile = parse_profile(&self.key_profile, "key_profile")?;
        let base = match &self.base {
            None => None,
            Some(b) => Some(
                Base::parse(b.as_bytes())
                    .map_err(|r| PyValueError::new_err(format!("invalid base URL {b:?}: {r}")))?,
            ),
        };
        let mut edits = Vec::new();
        for r in &self.rules {
            edits.extend(
                Edit::parse_list(r)
                    .map_err(|e| PyValueError::new_err(format!("rules {r:?}: {e}")))?,
            );
        }
        let (text, name) = match (&self.rules_file, &self.rules_toml) {
            (Some(_), Some(_)) => {
                return Err(PyValueError::new_err(
                    "give rules_file or rules_toml, not both",
                ))
            }
            (Some(path), None) => (
                Some(std::fs::read_to_string(path).map_err(|e| {
                    pyo3::exceptions::PyOSError::new_err(format!("rules_file {path}: {e}"))
                })?),
                format!("rules_file {path}"),
            ),
            (None, Some(toml)) => (Some(toml.clone()), "rules_toml".to_owned()),
            (None, None) => (None, "rules".to_owned()),
        };
        let build = |p: Profile| {
            file::build_with_unused(p.rule_mask(), text.as_deref(), &edits)
                .map_err(|e| PyValueError::new_err(format!("{name}: {e}")))
        };
        let (rules, mut unused) = build(profile)?;
        let (key_rules, key_unused) = build(key_profile)?;
        // A setting that tunes the dedup key is used (as with --dedup-key).
        unused.retain(|u| key_unused.contains(u));
        if text.is_some() {
            for u in &unused {
                PyErr::warn(
                    py,
                    &py.get_type::<PyRuntimeWarning>(),
                    &std::ffi::CString::new(format!(
                        "{name}: line {}: '{}' tunes rule '{}', which is off here \
                         (switch it on with rules = [\"+{}\"], or use a profile that has it)",
                        u.line,
                        u.key.name(),
                        u.rule.name(),
                        u.rule.name()
                    ))
                    .unwrap_or_default(),
                    1,
                )?;
            }
        }
        let make = |p: Profile, set: RuleSet| {
            let mut c = canonurl::Canonicalizer::new(p);
            c.set_base(base.clone());
            c.set_rules(Some(Arc::new(set)));
            c
        };
        let template = Worker {
            canon: make(profile, rules),
            key: make(key_profile, key_rules),
            target: self.target,
            out: Vec::new(),
            aux: Vec::new(),
        };
        Ok(Shared {
            first: Mutex::new(template.clone()),
            pool: Mutex::new(Vec::new()),
            template,
            profile,
            key_profile,
            base: base.map(|b| String::from_utf8_lossy(b.as_bytes()).into_owned()),
        })
    }
}

/// `rules` as given: `None`, one string of comma-separated edits, or a
/// sequence of them.
fn rules_arg(rules: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(rules) = rules else {
        return Ok(Vec::new());
    };
    if rules.is_none() {
        return Ok(Vec::new());
    }
    if let Ok(s) = rules.cast::<PyString>() {
        return Ok(vec![s.to_str()?.to_owned()]);
    }
    let mut out = Vec::new();
    for item in rules.try_iter().map_err(|_| {
        PyTypeError::new_err(
            "rules must be a string of edits ('-www,+lowercase-path') or a list of them",
        )
    })? {
        out.push(item?.extract::<String>().map_err(|_| {
            PyTypeError::new_err("rules must be a string of edits or a list of strings")
        })?);
    }
    Ok(out)
}

/// `rules_file` as given: a `str` or an `os.PathLike`.
fn path_arg(path: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    match path {
        None => Ok(None),
        Some(p) if p.is_none() => Ok(None),
        Some(p) => {
            let fspath = p.py().import("os")?.call_method1("fspath", (p,))?;
            Ok(Some(fspath.extract::<String>()?))
        }
    }
}

/// The bytes of a `str` or `bytes` argument. A `str` with lone surrogates
/// (a bytes value decoded with `errors="surrogateescape"`, as `os.fsdecode`
/// does) gives back those bytes.
#[inline]
fn with_input<R>(obj: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    if let Ok(s) = obj.cast::<PyString>() {
        return match s.to_str() {
            Ok(s) => Ok(f(s.as_bytes())),
            Err(_) => {
                let b = s.call_method1("encode", ("utf-8", "surrogateescape"))?;
                let b = b.cast::<PyBytes>()?;
                Ok(f(b.as_bytes()))
            }
        };
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(f(b.as_bytes()));
    }
    Err(PyTypeError::new_err(format!(
        "a URL must be str or bytes, not {}",
        obj.get_type().name()?
    )))
}

/// Canonical output is ASCII (every byte above 0x7F is percent-encoded and
/// hosts are written in ASCII); checked anyway, with simdutf8, before it
/// becomes a Python `str`.
#[inline]
fn py_str<'py>(py: Python<'py>, bytes: &[u8]) -> Bound<'py, PyString> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(s) => PyString::new(py, s),
        Err(_) => PyString::new(py, &String::from_utf8_lossy(bytes)),
    }
}

static REJECT_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Registers the `RejectError` class the package defines in Python.
#[pyfunction]
fn _set_reject_error(py: Python<'_>, cls: Bound<'_, PyType>) -> PyResult<()> {
    REJECT_ERROR
        .set(py, cls.unbind())
        .map_err(|_| PyValueError::new_err("RejectError is set already"))
}

/// `RejectError(message, reason, offset)`.
fn reject_err(py: Python<'_>, r: Reject) -> PyErr {
    let msg = r.to_string();
    match REJECT_ERROR.get(py) {
        Some(cls) => PyErr::from_type(cls.bind(py).clone(), (msg, r.reason.name(), r.offset)),
        None => PyValueError::new_err(msg),
    }
}

/// A profile, an optional base URL and dedup rules, parsed once.
///
/// profile: "whatwg", "rfc3986" (default), "safe" or "aggressive".
/// base: a base URL that relative references resolve against (--base).
/// rules: edits of the dedup rules as for `canonurl --rule`: one string
///     ("-www,+lowercase-path,trailing-slash=keep") or a list of them.
/// rules_file: a TOML rules file (`canonurl --rules FILE`), read once.
/// rules_toml: the same, as text.
/// key_profile: the profile of dedup_key/dedup_fingerprint (--key-profile),
///     with the same rules.
/// target: request-target mode, as `canonurl -f plain` reads a line: an
///     origin-form target (/a/b?c) without a base is written path and query
///     only instead of being rejected.
///
/// A bad profile, base, rule edit or rules file raises ValueError; a setting
/// of the rules file that tunes a rule that is off gives a RuntimeWarning.
/// One object may be used from many threads at once.
#[pyclass(frozen, module = "canonurl", name = "Canonicalizer")]
pub struct PyCanonicalizer {
    shared: Arc<Shared>,
}

/// Renders a result for Python: a `str`, an `int`, or `None`/an exception
/// for a rejected input.
#[inline]
///
/// `obj` is the input object, `input` its bytes: a `str` that is already
/// canonical is returned itself, not copied into a new `str` (most URLs in
/// logs and lists are canonical already).
fn one<'py>(
    py: Python<'py>,
    w: &mut Worker,
    obj: &Bound<'py, PyAny>,
    input: &[u8],
    what: Output,
    errors: Errors,
) -> PyResult<Bound<'py, PyAny>> {
    if what == Output::Url {
        return match w.canonical(input) {
            Ok(c) if c.unchanged && obj.is_exact_instance_of::<PyString>() => Ok(obj.clone()),
            Ok(_) => Ok(py_str(py, &w.out).into_any()),
            Err(_) if errors == Errors::Null => Ok(py.None().into_bound(py)),
            Err(reject) => Err(reject_err(py, reject)),
        };
    }
    let r = if what.is_number() {
        w.number(input, what)
            .map(|n| n.into_pyobject(py).map(Bound::into_any))
    } else {
        w.text(input, what).map(|t| Ok(py_str(py, t).into_any()))
    };
    match r {
        Ok(v) => v.map_err(Into::into),
        Err(_) if errors == Errors::Null => Ok(py.None().into_bound(py)),
        Err(reject) => Err(reject_err(py, reject)),
    }
}

impl PyCanonicalizer {
    fn call<'py>(
        &self,
        url: &Bound<'py, PyAny>,
        what: Output,
        errors: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let errors = Errors::parse(errors)?;
        let py = url.py();
        with_input(url, |input| {
            self.shared
                .with_worker(|w| one(py, w, url, input, what, errors))
        })?
    }

    fn many<'py>(
        &self,
        urls: &Bound<'py, PyAny>,
        what: Output,
        errors: Errors,
    ) -> PyResult<Bound<'py, PyList>> {
        let py = urls.py();
        let mut out: Vec<Bound<'py, PyAny>> = Vec::new();
        self.shared.with_worker(|w| -> PyResult<()> {
            if let Ok(list) = urls.cast::<PyList>() {
                out.reserve(list.len());
                for item in list.iter() {
                    out.push(with_input(&item, |b| one(py, w, &item, b, what, errors))??);
                }
            } else if let Ok(tuple) = urls.cast::<PyTuple>() {
                out.reserve(tuple.len());
                for item in tuple.iter() {
                    out.push(with_input(&item, |b| one(py, w, &item, b, what, errors))??);
                }
            } else {
                for item in urls.try_iter()? {
                    let item = item?;
                    out.push(with_input(&item, |b| one(py, w, &item, b, what, errors))??);
                }
            }
            Ok(())
        })?;
        PyList::new(py, out)
    }
}

#[pymethods]
impl PyCanonicalizer {
    #[new]
    #[pyo3(signature = (profile="rfc3986", base=None, rules=None, *, rules_file=None, rules_toml=None, key_profile="aggressive", target=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        profile: &str,
        base: Option<String>,
        rules: Option<&Bound<'_, PyAny>>,
        rules_file: Option<&Bound<'_, PyAny>>,
        rules_toml: Option<String>,
        key_profile: &str,
        target: bool,
    ) -> PyResult<Self> {
        let settings = Settings {
            profile: profile.to_owned(),
            base,
            rules: rules_arg(rules)?,
            rules_file: path_arg(rules_file)?,
            rules_toml,
            key_profile: key_profile.to_owned(),
            target,
        };
        Ok(PyCanonicalizer {
            shared: Arc::new(settings.build(py)?),
        })
    }

    /// The profile's name.
    #[getter]
    fn profile(&self) -> &'static str {
        self.shared.profile.name()
    }

    /// The dedup key's profile.
    #[getter]
    fn key_profile(&self) -> &'static str {
        self.shared.key_profile.name()
    }

    /// The base URL (its WHATWG href), if any.
    #[getter]
    fn base(&self) -> Option<String> {
        self.shared.base.clone()
    }

    /// Request-target mode.
    #[getter]
    fn target(&self) -> bool {
        self.shared.template.target
    }

    /// The dedup rules that are on (for some host), by name.
    #[getter]
    fn rules(&self) -> Vec<&'static str> {
        match self.shared.template.canon.rules() {
            Some(set) => set.any_enabled().iter().map(Rule::name).collect(),
            None => Vec::new(),
        }
    }

    /// The canonical URL; None when rejected (errors="raise": RejectError).
    #[pyo3(signature = (url, *, errors="null"))]
    fn canonicalize<'py>(
        &self,
        url: &Bound<'py, PyAny>,
        errors: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.call(url, Output::Url, errors)
    }

    /// The URL canonicalized with key_profile and the same rules (--dedup-key).
    #[pyo3(signature = (url, *, errors="null"))]
    fn dedup_key<'py>(&self, url: &Bound<'py, PyAny>, errors: &str) -> PyResult<Bound<'py, PyAny>> {
        self.call(url, Output::DedupKey, errors)
    }

    /// XXH64 seed 42 of the canonical URL as a signed int: `canonurl --key`,
    /// Spark SQL's xxhash64(url). None when rejected.
    #[pyo3(signature = (url, *, errors="null"))]
    fn fingerprint<'py>(
        &self,
        url: &Bound<'py, PyAny>,
        errors: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.call(url, Output::Fingerprint, errors)
    }

    /// XXH64 seed 42 of the dedup key (--dedup-key's last column).
    #[pyo3(signature = (url, *, errors="null"))]
    fn dedup_fingerprint<'py>(
        &self,
        url: &Bound<'py, PyAny>,
        errors: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.call(url, Output::DedupFingerprint, errors)
    }

    /// The canonical URL in SURT form (--surt): form "cdx" gives
    /// "org,archive,www)/goo/?a=1", "classic" "http://(org,archive,www,)/goo/?a=1".
    #[pyo3(signature = (url, form="cdx", *, errors="null"))]
    fn surt<'py>(
        &self,
        url: &Bound<'py, PyAny>,
        form: &str,
        errors: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let form = match form {
            "cdx" => SurtForm::Cdx,
            "classic" => SurtForm::Classic,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "unknown SURT form {form:?} (expected 'cdx' or 'classic')"
                )))
            }
        };
        self.call(url, Output::Surt(form), errors)
    }

    /// The canonical URL with its components; raises `RejectError`.
    fn canonical(&self, url: &Bound<'_, PyAny>) -> PyResult<PyCanonical> {
        let py = url.py();
        with_input(url, |input| {
            self.shared.with_worker(|w| match w.canonical(input) {
                Ok(c) => Ok(PyCanonical {
                    url: String::from_utf8_lossy(&w.out).into_owned(),
                    parts: c.parts,
                    unchanged: c.unchanged,
                    rules: w.labels(&c),
                }),
                Err(r) => Err(reject_err(py, r)),
            })
        })?
    }

    /// The rules that changed the URL (`--explain`); raises `RejectError`.
    fn explain(&self, url: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        let py = url.py();
        with_input(url, |input| {
            self.shared.with_worker(|w| match w.canonical(input) {
                Ok(c) => Ok(w.labels(&c)),
                Err(r) => Err(reject_err(py, r)),
            })
        })?
    }

    /// One result per URL (str or bytes), in one call: a list or tuple is read
    /// without an iterator. output: "url", "dedup_key", "surt", "surt_classic",
    /// "fingerprint" or "dedup_fingerprint" (ints). Rejects give None
    /// (errors="raise": RejectError).
    #[pyo3(signature = (urls, *, output="url", errors="null"))]
    fn canonicalize_many<'py>(
        &self,
        urls: &Bound<'py, PyAny>,
        output: &str,
        errors: &str,
    ) -> PyResult<Bound<'py, PyList>> {
        self.many(urls, Output::parse(output)?, Errors::parse(errors)?)
    }

    /// One Arrow array in (anything with `__arrow_c_array__`), one out, as
    /// an object with `__arrow_c_array__`. The package's wrapper turns it
    /// into a `pyarrow.Array` and handles chunked arrays.
    #[pyo3(signature = (array, *, output="url"))]
    fn _canonicalize_arrow(
        &self,
        array: &Bound<'_, PyAny>,
        output: &str,
    ) -> PyResult<arrow::ArrowArray> {
        arrow::canonicalize(&self.shared, array, Output::parse(output)?)
    }

    fn __repr__(&self) -> String {
        let s = &self.shared;
        let mut r = format!("Canonicalizer(profile={:?}", s.profile.name());
        if let Some(b) = &s.base {
            r.push_str(&format!(", base={b:?}"));
        }
        let rules = self.rules();
        if !rules.is_empty() {
            r.push_str(&format!(", rules on: {}", rules.join(",")));
        }
        if s.template.target {
            r.push_str(", target=True");
        }
        r.push(')');
        r
    }
}

/// One canonical URL and where its components lie in it (Canonicalizer.canonical).
///
/// Canonical URLs are ASCII, so byte offsets are string indices: span(name)
/// gives (start, end) of a component, offsets the library's raw Parts.
/// str(c) is the URL, and a Canonical equals its URL as a str.
#[pyclass(frozen, module = "canonurl", name = "Canonical")]
pub struct PyCanonical {
    url: String,
    parts: Parts,
    unchanged: bool,
    rules: Vec<String>,
}

fn opt(v: u32) -> Option<u32> {
    (v != ABSENT).then_some(v)
}

impl PyCanonical {
    fn span_of(&self, name: &str) -> PyResult<Option<(u32, u32)>> {
        let p = &self.parts;
        Ok(match name {
            "scheme" => opt(p.scheme_end).map(|e| (0, e)),
            "username" => opt(p.username_start).map(|s| (s, p.username_end)),
            "password" => opt(p.password_start).map(|s| (s, p.password_end)),
            "host" => opt(p.host_start).map(|s| (s, p.host_end)),
            "port" => opt(p.port).map(|_| (p.host_end + 1, p.path_start)),
            "path" => Some((p.path_start, p.path_end())),
            "query" => opt(p.query_start).map(|s| (s + 1, p.query_end())),
            "fragment" => opt(p.fragment_start).map(|s| (s + 1, p.len)),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "unknown component {name:?} (expected scheme, username, password, host, \
                     port, path, query or fragment)"
                )))
            }
        })
    }

    fn part(&self, name: &str) -> Option<String> {
        self.span_of(name)
            .ok()
            .flatten()
            .map(|(s, e)| self.url[s as usize..e as usize].to_owned())
    }
}

#[pymethods]
impl PyCanonical {
    /// The canonical URL.
    #[getter]
    fn url(&self) -> &str {
        &self.url
    }
    /// The output is the input, byte for byte.
    #[getter]
    fn unchanged(&self) -> bool {
        self.unchanged
    }
    /// The dedup rules that changed the URL (as `explain`).
    #[getter]
    fn rules(&self) -> Vec<String> {
        self.rules.clone()
    }
    #[getter]
    fn scheme(&self) -> Option<String> {
        self.part("scheme")
    }
    #[getter]
    fn username(&self) -> Option<String> {
        self.part("username")
    }
    #[getter]
    fn password(&self) -> Option<String> {
        self.part("password")
    }
    #[getter]
    fn host(&self) -> Option<String> {
        self.part("host")
    }
    #[getter]
    fn port(&self) -> Option<u16> {
        self.parts.port()
    }
    #[getter]
    fn path(&self) -> String {
        self.part("path").unwrap_or_default()
    }
    #[getter]
    fn query(&self) -> Option<String> {
        self.part("query")
    }
    #[getter]
    fn fragment(&self) -> Option<String> {
        self.part("fragment")
    }
    /// `(start, end)` of a component in `url`, `None` when it is absent.
    fn span(&self, name: &str) -> PyResult<Option<(u32, u32)>> {
        self.span_of(name)
    }
    /// The raw offsets, as the library's `Parts` has them (`None`: absent).
    #[getter]
    fn offsets(&self) -> HashMap<&'static str, Option<u32>> {
        let p = &self.parts;
        HashMap::from([
            ("scheme_end", opt(p.scheme_end)),
            ("username_start", opt(p.username_start)),
            ("username_end", opt(p.username_end)),
            ("password_start", opt(p.password_start)),
            ("password_end", opt(p.password_end)),
            ("host_start", opt(p.host_start)),
            ("host_end", opt(p.host_end)),
            ("path_start", Some(p.path_start)),
            ("query_start", opt(p.query_start)),
            ("fragment_start", opt(p.fragment_start)),
            ("len", Some(p.len)),
        ])
    }
    #[getter]
    fn special(&self) -> bool {
        self.parts.special
    }
    #[getter]
    fn opaque_path(&self) -> bool {
        self.parts.opaque_path
    }
    fn __str__(&self) -> &str {
        &self.url
    }
    fn __repr__(&self) -> String {
        format!("Canonical({:?})", self.url)
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        if let Ok(o) = other.cast::<PyCanonical>() {
            return o.get().url == self.url;
        }
        other.extract::<&str>().is_ok_and(|s| s == self.url)
    }
    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        PyString::new(py, &self.url).hash()
    }
}

/// The canonicalizers of the module-level functions without base or rules,
/// by profile and target mode.
static DEFAULTS: [OnceLock<Arc<Shared>>; 8] = [const { OnceLock::new() }; 8];

/// The module-level canonicalizer of `profile` without base or rules.
fn default_shared(py: Python<'_>, profile: &str, target: bool) -> PyResult<Arc<Shared>> {
    if let Some(i) = Profile::ALL.iter().position(|p| p.name() == profile) {
        if let Some(s) = DEFAULTS[i * 2 + usize::from(target)].get() {
            return Ok(s.clone());
        }
    }
    cached(py, module_settings(profile, None, None, None, target)?)
}

/// The canonicalizers of the module-level functions, by settings: the
/// default ones (no base, no rules) in a table, the others in a small map.
fn cached(py: Python<'_>, settings: Settings) -> PyResult<Arc<Shared>> {
    static OTHERS: Mutex<Option<HashMap<Settings, Arc<Shared>>>> = Mutex::new(None);
    let plain = settings.base.is_none()
        && settings.rules.is_empty()
        && settings.rules_file.is_none()
        && settings.rules_toml.is_none()
        && settings.key_profile == "aggressive";
    if plain {
        let i = Profile::ALL
            .iter()
            .position(|p| p.name() == settings.profile);
        if let Some(i) = i {
            let slot = &DEFAULTS[i * 2 + usize::from(settings.target)];
            if let Some(s) = slot.get() {
                return Ok(s.clone());
            }
            let s = Arc::new(settings.build(py)?);
            return Ok(slot.get_or_init(|| s).clone());
        }
    }
    if let Some(s) = unpoison(OTHERS.lock())
        .as_ref()
        .and_then(|m| m.get(&settings))
    {
        return Ok(s.clone());
    }
    let s = Arc::new(settings.build(py)?);
    let mut map = unpoison(OTHERS.lock());
    let map = map.get_or_insert_with(HashMap::new);
    if map.len() >= 64 {
        map.clear();
    }
    map.insert(settings, s.clone());
    Ok(s)
}

#[allow(clippy::too_many_arguments)]
fn module_settings(
    profile: &str,
    base: Option<String>,
    rules: Option<&Bound<'_, PyAny>>,
    rules_file: Option<&Bound<'_, PyAny>>,
    target: bool,
) -> PyResult<Settings> {
    Ok(Settings {
        profile: profile.to_owned(),
        base,
        rules: rules_arg(rules)?,
        rules_file: path_arg(rules_file)?,
        rules_toml: None,
        key_profile: "aggressive".to_owned(),
        target,
    })
}

/// The canonical form of one URL (str or bytes) as a str; None when it is
/// rejected, or with errors="raise" a RejectError saying why and where.
/// The settings are those of Canonicalizer; the canonicalizer of each
/// setting is kept, so repeated calls parse base and rules once.
#[pyfunction]
#[pyo3(signature = (url, profile="rfc3986", base=None, rules=None, *, rules_file=None, target=false, errors="null"))]
#[allow(clippy::too_many_arguments)]
fn canonicalize<'py>(
    url: &Bound<'py, PyAny>,
    profile: &str,
    base: Option<String>,
    rules: Option<&Bound<'_, PyAny>>,
    rules_file: Option<&Bound<'_, PyAny>>,
    target: bool,
    errors: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let py = url.py();
    let shared = if base.is_none() && rules.is_none_or(|r| r.is_none()) && rules_file.is_none() {
        // The common call: no allocation to find the canonicalizer.
        default_shared(py, profile, target)?
    } else {
        cached(
            py,
            module_settings(profile, base, rules, rules_file, target)?,
        )?
    };
    PyCanonicalizer { shared }.call(url, Output::Url, errors)
}

/// One result per URL, in one call (see Canonicalizer.canonicalize_many).
#[pyfunction]
#[pyo3(signature = (urls, profile="rfc3986", base=None, rules=None, *, rules_file=None, target=false, output="url", errors="null"))]
#[allow(clippy::too_many_arguments)]
fn canonicalize_many<'py>(
    urls: &Bound<'py, PyAny>,
    profile: &str,
    base: Option<String>,
    rules: Option<&Bound<'_, PyAny>>,
    rules_file: Option<&Bound<'_, PyAny>>,
    target: bool,
    output: &str,
    errors: &str,
) -> PyResult<Bound<'py, PyList>> {
    let py = urls.py();
    let shared = cached(
        py,
        module_settings(profile, base, rules, rules_file, target)?,
    )?;
    PyCanonicalizer { shared }.many(urls, Output::parse(output)?, Errors::parse(errors)?)
}

/// The module-level Arrow call: a cached canonicalizer's `_canonicalize_arrow`.
#[pyfunction]
#[pyo3(signature = (array, profile="rfc3986", base=None, rules=None, *, rules_file=None, target=false, output="url"))]
#[allow(clippy::too_many_arguments)]
fn _canonicalize_arrow(
    array: &Bound<'_, PyAny>,
    profile: &str,
    base: Option<String>,
    rules: Option<&Bound<'_, PyAny>>,
    rules_file: Option<&Bound<'_, PyAny>>,
    target: bool,
    output: &str,
) -> PyResult<arrow::ArrowArray> {
    let py = array.py();
    let shared = cached(
        py,
        module_settings(profile, base, rules, rules_file, target)?,
    )?;
    arrow::canonicalize(&shared, array, Output::parse(output)?)
}

/// XXH64 with seed 42 of the bytes (a `str`'s UTF-8), as a signed 64-bit
/// number: `canonurl --key`'s fingerprint and Spark SQL's `xxhash64`.
#[pyfunction]
fn xxhash64(data: &Bound<'_, PyAny>) -> PyResult<i64> {
    with_input(data, canon::key)
}

/// The dedup rules: `(name, tier, what it does)`, in `--list-rules` order.
#[pyfunction]
fn list_rules() -> Vec<(&'static str, &'static str, &'static str)> {
    Rule::ALL
        .iter()
        .map(|r| (r.name(), r.tier().name(), r.effect()))
        .collect()
}

#[pymodule]
fn _canonurl(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCanonicalizer>()?;
    m.add_class::<PyCanonical>()?;
    m.add_class::<arrow::ArrowArray>()?;
    m.add_function(wrap_pyfunction!(canonicalize, m)?)?;
    m.add_function(wrap_pyfunction!(canonicalize_many, m)?)?;
    m.add_function(wrap_pyfunction!(_canonicalize_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(xxhash64, m)?)?;
    m.add_function(wrap_pyfunction!(list_rules, m)?)?;
    m.add_function(wrap_pyfunction!(_set_reject_error, m)?)?;
    m.add_function(wrap_pyfunction!(arrow::_import_address, m)?)?;
    m.add(
        "PROFILES",
        Profile::ALL.iter().map(|p| p.name()).collect::<Vec<_>>(),
    )?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
