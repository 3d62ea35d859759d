//! Checkers: how a run's output is compared with the gold results.
//!
//! A declarative check reads each metric from the run's stdout, stderr or a file (with a
//! regular expression, a JSON path or a CSV cell) and compares it exactly, within a
//! tolerance, or within a range; a series does the same for each entry a path pattern
//! finds (one layer's results per folder, say); all must hold. An external check is a
//! command whose exit status decides and whose JSON output gives the metrics. The rules
//! for reading follow the official RExBench evaluators (see `read`).

mod path;
mod read;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use path::EntryOrder;

use crate::confined::{self, Folder};
pub use read::{Occurrence, python_float};

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    #[serde(default)]
    pub metrics: Vec<MetricSpec>,
    #[serde(default)]
    pub series: Vec<SeriesSpec>,
    #[serde(default)]
    pub external: Option<ExternalSpec>,
}

/// One number to read and compare.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricSpec {
    pub name: String,
    /// `stdout` (default) or `stderr`; ignored when `file` is given.
    #[serde(default)]
    pub from: Stream,
    /// A file to read: a path pattern relative to the run's working copy (`path`).
    #[serde(default)]
    pub file: Option<String>,
    /// A regular expression whose first capture group is the number.
    #[serde(default)]
    pub regex: Option<String>,
    /// With `regex`: which match counts (default `last`); `once` requires exactly one.
    #[serde(default)]
    pub occurrence: Occurrence,
    /// A path into a JSON document: `results.acc`, `layers[3].test_acc`.
    #[serde(default)]
    pub json: Option<String>,
    /// A CSV column, by header name.
    #[serde(default)]
    pub csv_column: Option<String>,
    /// With `csv_column`: the data row, counted from 0, or -1 (default) for the last.
    #[serde(default = "last_row")]
    pub csv_row: i64,
    /// Pass if the value equals this exactly.
    #[serde(default)]
    pub equals: Option<f64>,
    /// Pass if `expected - tolerance <= value <= expected + tolerance`.
    #[serde(default)]
    pub expected: Option<f64>,
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// Pass if the value lies in [min, max].
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
}

/// One metric per entry that a path pattern finds: the k-th entry (in `order`) is held
/// to the k-th expected value, and is named `name` with `{n}` = k.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeriesSpec {
    /// The metrics' names, with `{n}` for the entry's place, from 1.
    pub name: String,
    /// A path pattern whose last segment enumerates entries (`out/*/layer*`).
    pub each: String,
    #[serde(default)]
    pub order: EntryOrder,
    /// The file to read inside each entry.
    pub file: String,
    /// How many entries there may be: `exact` (default: one per expected value) or
    /// `at_most` (only the entries found are checked, as RExBench's othello evaluator
    /// does; none at all passes).
    #[serde(default)]
    pub count: SeriesCount,
    // How each entry's number is read and what it must be: as for a metric. The fields
    // are repeated rather than shared because serde's `flatten` cannot be combined with
    // `deny_unknown_fields`, and a misspelt field in a card must be an error.
    #[serde(default)]
    pub regex: Option<String>,
    #[serde(default)]
    pub occurrence: Occurrence,
    #[serde(default)]
    pub json: Option<String>,
    #[serde(default)]
    pub csv_column: Option<String>,
    #[serde(default = "last_row")]
    pub csv_row: i64,
    /// Pass if the k-th value equals the k-th of these exactly.
    #[serde(default)]
    pub equals: Option<Vec<f64>>,
    /// Pass if the k-th value lies within `tolerance` of the k-th of these.
    #[serde(default)]
    pub expected: Option<Vec<f64>>,
    #[serde(default)]
    pub tolerance: Option<f64>,
}

fn last_row() -> i64 {
    -1
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    #[default]
    Stdout,
    Stderr,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeriesCount {
    #[default]
    Exact,
    AtMost,
}

/// A command that judges the run: exit status 0 passes; its stdout may be a JSON object
/// of metric name → number (or `{"metrics": {…}}`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalSpec {
    pub command: Vec<String>,
}

/// What a check found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckReport {
    pub passed: bool,
    /// Every metric read, passing or not.
    pub metrics: BTreeMap<String, f64>,
    /// One line per metric: what was read and what was expected.
    pub log: String,
}

/// The places a check may read.
#[derive(Debug, Clone, Copy)]
pub struct RunOutput<'a> {
    /// The task's folder: `{task}` in an external command.
    pub task_dir: &'a Path,
    /// The task's private gold folder, where the check came from there: `{gold}`.
    pub gold_dir: Option<&'a Path>,
    pub workdir: &'a Path,
    pub stdout: &'a Path,
    pub stderr: &'a Path,
}

/// What a value must be: one definition with the bundle crate, which re-judges a
/// success from its signed metrics by it (spec §5a).
pub use bundle::Expectation;

/// How a metric's number is taken out of its text.
#[derive(Debug, Clone, Copy)]
enum Extract<'a> {
    Regex(&'a str, Occurrence),
    Json(&'a str),
    Csv(&'a str, i64),
}

impl Extract<'_> {
    fn from_fields<'a>(
        regex: &'a Option<String>,
        occurrence: Occurrence,
        json: &'a Option<String>,
        csv_column: &'a Option<String>,
        csv_row: i64,
    ) -> Result<Extract<'a>, String> {
        match (regex, json, csv_column) {
            (Some(r), None, None) => Ok(Extract::Regex(r, occurrence)),
            (None, Some(p), None) => Ok(Extract::Json(p)),
            (None, None, Some(c)) => Ok(Extract::Csv(c, csv_row)),
            _ => Err("give exactly one of regex, json, csv_column".into()),
        }
    }

    /// Refuses a regex that does not compile or captures nothing, and a malformed JSON path.
    fn validate(self) -> Result<(), String> {
        match self {
            Extract::Regex(r, _) => {
                let re = Regex::new(r).map_err(|e| format!("regex: {e}"))?;
                if re.captures_len() < 2 {
                    return Err("the regex needs a capture group around the number".into());
                }
                Ok(())
            }
            Extract::Json(p) => read::validate_json_path(p),
            Extract::Csv(..) => Ok(()),
        }
    }

    fn reads_file_only(self) -> bool {
        !matches!(self, Extract::Regex(..))
    }

    /// Reads the number from a file's bytes; `shown` names it in messages.
    fn read(self, bytes: Vec<u8>, shown: &str) -> Result<f64, String> {
        let text = read::python_text(bytes).map_err(|e| format!("{shown} {e}"))?;
        match self {
            Extract::Regex(pattern, occurrence) => read::regex(&text, pattern, occurrence),
            Extract::Json(p) => read::json(&text, p),
            Extract::Csv(column, row) => read::csv(&text, column, row),
        }
        .map_err(|e| format!("{shown}: {e}"))
    }
}

/// Where a check reads result files in a working copy: each metric's file, and each
/// series' file inside each of its entries. Plain data, so that a Slurm job can take
/// it to the compute node.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultFiles {
    pub files: Vec<String>,
    /// (the entries' pattern, their order, the file inside each)
    pub series: Vec<(String, EntryOrder, String)>,
}

impl ResultFiles {
    /// Each result file under `dir` as it is now, by its path as the check's log shows
    /// it, with the SHA-256 of its content. What cannot be read as the check reads it
    /// (missing, over the read limit, a link that leaves `dir`) is left out.
    pub fn snapshot(&self, dir: &Path) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let Ok(root) = Folder::open_relative(dir, "working copy") else { return out };
        let mut paths: Vec<std::path::PathBuf> =
            self.files.iter().filter_map(|p| path::resolve(&root, p).ok()).collect();
        for (each, order, file) in &self.series {
            let entries = path::entries(&root, each, *order).unwrap_or_default();
            paths.extend(entries.into_iter().map(|e| e.join(file)));
        }
        for rel in paths {
            if let Ok(bytes) = root.read(&rel) {
                out.insert(path::shown(&root, &rel), bundle::Digest::of(&bytes).to_hex());
            }
        }
        out
    }
}

impl CheckSpec {
    /// Where the check reads result files.
    pub fn result_files(&self) -> ResultFiles {
        ResultFiles {
            files: self.metrics.iter().filter_map(|m| m.file.clone()).collect(),
            series: self.series.iter().map(|s| (s.each.clone(), s.order, s.file.clone())).collect(),
        }
    }

    /// Refuses a check that cannot be run as written.
    pub fn validate(&self) -> Result<(), String> {
        if self.metrics.is_empty() && self.series.is_empty() && self.external.is_none() {
            return Err("a check needs metrics, a series or an external command".into());
        }
        for m in &self.metrics {
            m.validate().map_err(|e| format!("check metric `{}`: {e}", m.name))?;
        }
        for s in &self.series {
            s.validate().map_err(|e| format!("check series `{}`: {e}", s.name))?;
        }
        if let Some(ext) = &self.external
            && ext.command.is_empty()
        {
            return Err("check.external.command is empty".into());
        }
        Ok(())
    }

    /// Whether the external command names the gold folder, which only a gold check may.
    pub fn uses_gold_dir(&self) -> bool {
        self.external.as_ref().is_some_and(|e| e.command.iter().any(|w| w.contains("{gold}")))
    }

    /// Each metric the check can report, with what it must be (a series gives one per
    /// expected value).
    pub fn expectations(&self) -> Vec<(String, Expectation)> {
        let mut out: Vec<(String, Expectation)> =
            self.metrics.iter().filter_map(|m| Some((m.name.clone(), m.expectation().ok()?))).collect();
        for s in &self.series {
            out.extend((0..s.len()).filter_map(|k| Some((s.metric_name(k), s.expectation(k)?))));
        }
        out
    }

    /// Judges a run. Files are read beneath the working copy only (a link the
    /// experiment left that leaves it is refused, so the metric fails), as regular
    /// files of at most a bundle artifact's size, and never by a read that waits.
    pub fn run(&self, out: RunOutput<'_>) -> CheckReport {
        let mut report = CheckReport { passed: true, ..CheckReport::default() };
        let root = Folder::open_relative(out.workdir, "working copy").map_err(|e| e.to_string());
        for m in &self.metrics {
            let expectation = m.expectation().expect("validated");
            report.judge(&m.name, m.read(&root, out), expectation);
        }
        for s in &self.series {
            s.run(&root, &mut report);
        }
        if let Some(ext) = &self.external {
            let (ok, metrics, log) = ext.run(out);
            report.passed &= ok;
            report.metrics.extend(metrics);
            report.log.push_str(&log);
        }
        report
    }
}

impl CheckReport {
    fn judge(&mut self, name: &str, read: Result<f64, String>, expectation: Expectation) {
        match read {
            Ok(value) => {
                self.metrics.insert(name.to_owned(), value);
                let ok = expectation.accepts(value);
                self.passed &= ok;
                let verdict = if ok { "pass" } else { "FAIL" };
                let _ = writeln!(self.log, "{name}: read {value}, expected {expectation}: {verdict}");
            }
            Err(why) => self.fail(&format!("{name}: {why}")),
        }
    }

    fn fail(&mut self, why: &str) {
        self.passed = false;
        let _ = writeln!(self.log, "{why}: FAIL");
    }
}

impl MetricSpec {
    fn extract(&self) -> Result<Extract<'_>, String> {
        Extract::from_fields(&self.regex, self.occurrence, &self.json, &self.csv_column, self.csv_row)
    }

    fn validate(&self) -> Result<(), String> {
        let extract = self.extract()?;
        extract.validate()?;
        if extract.reads_file_only() && self.file.is_none() {
            return Err("json and csv_column read a file: give `file`".into());
        }
        if let Some(file) = &self.file {
            path::validate(file)?;
        }
        self.expectation().map(drop)
    }

    pub fn expectation(&self) -> Result<Expectation, String> {
        let forms = [
            self.equals.is_some(),
            self.expected.is_some() || self.tolerance.is_some(),
            self.min.is_some() || self.max.is_some(),
        ];
        if forms.iter().filter(|x| **x).count() != 1 {
            return Err("give exactly one expectation: equals, expected + tolerance, or min + max".into());
        }
        match (self.equals, self.expected, self.tolerance, self.min, self.max) {
            (Some(e), ..) => Ok(Expectation::Equals(e)),
            (_, Some(expected), Some(tolerance), ..) => Ok(Expectation::Within { expected, tolerance }),
            (.., Some(min), Some(max)) => Ok(Expectation::Range { min, max }),
            _ => Err("expected goes with tolerance, min with max".into()),
        }
    }

    fn read(&self, root: &Result<Folder, String>, out: RunOutput<'_>) -> Result<f64, String> {
        let extract = self.extract()?;
        let (bytes, shown) = match (&self.file, self.from) {
            (Some(pattern), _) => {
                let root = root.as_ref().map_err(Clone::clone)?;
                let rel = path::resolve(root, pattern)?;
                let shown = path::shown(root, &rel);
                (root.read(&rel).map_err(|e| format!("cannot read {shown}: {e}"))?, shown)
            }
            (None, stream) => {
                let (path, shown) = match stream {
                    Stream::Stdout => (out.stdout, "stdout"),
                    Stream::Stderr => (out.stderr, "stderr"),
                };
                let bytes = confined::read_file(path, "run's logs")
                    .map_err(|e| format!("cannot read {shown}: {e}"))?;
                (bytes, shown.to_owned())
            }
        };
        extract.read(bytes, &shown)
    }
}

impl SeriesSpec {
    fn extract(&self) -> Result<Extract<'_>, String> {
        Extract::from_fields(&self.regex, self.occurrence, &self.json, &self.csv_column, self.csv_row)
    }

    fn len(&self) -> usize {
        self.equals.as_ref().or(self.expected.as_ref()).map_or(0, Vec::len)
    }

    fn metric_name(&self, k: usize) -> String {
        self.name.replace("{n}", &(k + 1).to_string())
    }

    fn expectation(&self, k: usize) -> Option<Expectation> {
        match (&self.equals, &self.expected, self.tolerance) {
            (Some(values), None, None) => values.get(k).copied().map(Expectation::Equals),
            (None, Some(values), Some(tolerance)) => {
                values.get(k).map(|&expected| Expectation::Within { expected, tolerance })
            }
            _ => None,
        }
    }

    fn validate(&self) -> Result<(), String> {
        self.extract()?.validate()?;
        if !self.name.contains("{n}") {
            return Err("the name needs `{n}`, the entry's place, to name each metric".into());
        }
        path::validate(&self.each)?;
        path::validate(&self.file)?;
        if self.len() == 0 || self.expectation(0).is_none() {
            return Err("give `equals = [...]`, or `expected = [...]` with `tolerance`".into());
        }
        Ok(())
    }

    fn run(&self, root: &Result<Folder, String>, report: &mut CheckReport) {
        let extract = self.extract().expect("validated");
        let root = match root {
            Ok(root) => root,
            Err(why) => return report.fail(&format!("{}: {why}", self.name)),
        };
        let entries = match path::entries(root, &self.each, self.order) {
            Ok(e) => e,
            Err(why) => return report.fail(&format!("{}: {why}", self.name)),
        };
        let want = self.len();
        let count_ok = match self.count {
            SeriesCount::Exact => entries.len() == want,
            SeriesCount::AtMost => entries.len() <= want,
        };
        let _ = writeln!(report.log, "{}: {} entries match `{}`", self.name, entries.len(), self.each);
        if !count_ok {
            let bound = if self.count == SeriesCount::Exact { "exactly" } else { "at most" };
            return report.fail(&format!("{}: expected {bound} {want} entries", self.name));
        }
        for (k, entry) in entries.iter().enumerate() {
            let rel = entry.join(&self.file);
            let shown = path::shown(root, &rel);
            let read = match root.kind(&rel) {
                Ok(None) => Err(format!("{shown} is missing")),
                Ok(Some(_)) => root
                    .read(&rel)
                    .map_err(|e| format!("cannot read {shown}: {e}"))
                    .and_then(|bytes| extract.read(bytes, &shown)),
                Err(e) => Err(format!("cannot read {shown}: {e}")),
            };
            report.judge(&self.metric_name(k), read, self.expectation(k).expect("k < len"));
        }
    }
}

impl ExternalSpec {
    /// Runs the command in the working copy, with the run's output files named in the
    /// environment: REXBENCH_WORKDIR, REXBENCH_STDOUT, REXBENCH_STDERR. In its words,
    /// `{task}` is the task's folder and `{gold}` the task's private gold folder, where
    /// an evaluator script can live.
    fn run(&self, out: RunOutput<'_>) -> (bool, BTreeMap<String, f64>, String) {
        let task_dir = out.task_dir.to_string_lossy();
        let gold_dir = out.gold_dir.map(|d| d.to_string_lossy()).unwrap_or_default();
        let argv: Vec<String> = self
            .command
            .iter()
            .map(|w| w.replace("{task}", &task_dir).replace("{gold}", &gold_dir))
            .collect();
        let result = Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(out.workdir)
            .env("REXBENCH_WORKDIR", out.workdir)
            .env("REXBENCH_STDOUT", out.stdout)
            .env("REXBENCH_STDERR", out.stderr)
            .output();
        let output = match result {
            Ok(o) => o,
            Err(e) => {
                return (false, BTreeMap::new(), format!("external check {argv:?} could not start: {e}\n"));
            }
        };
        let stdout = String::from_utf8_lossy(&output.stdout);
        let mut metrics = BTreeMap::new();
        let mut log = format!("external check {:?}: {}\n", self.command, output.status);
        if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(stdout.trim()) {
            let map = match map.get("metrics") {
                Some(Value::Object(inner)) => inner.clone(),
                _ => map,
            };
            for (k, v) in map {
                if let Some(x) = v.as_f64().filter(|x| x.is_finite()) {
                    let _ = writeln!(log, "{k}: read {x}");
                    metrics.insert(k, x);
                }
            }
        } else if !stdout.trim().is_empty() {
            let _ = writeln!(log, "its output (not a JSON object, so no metrics were read):");
            log.push_str(&stdout);
        }
        log.push_str(&String::from_utf8_lossy(&output.stderr));
        (output.status.success(), metrics, log)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metric(toml_text: &str) -> MetricSpec {
        let m: MetricSpec = toml::from_str(toml_text).unwrap();
        m.validate().unwrap();
        m
    }

    #[test]
    fn expectations() {
        let exact = metric("name = 'x'\nregex = '(\\d)'\nequals = 0.4562857142857143").expectation().unwrap();
        assert!(exact.accepts(0.4562857142857143));
        assert!(!exact.accepts(0.4562857142857144));
        let tol = metric("name = 'x'\nregex = '(\\d)'\nexpected = 0.88211\ntolerance = 0.002")
            .expectation()
            .unwrap();
        assert!(tol.accepts(0.88411) && tol.accepts(0.88011) && !tol.accepts(0.8842));
        // Just below 0.88211 - 0.002 as doubles compute it: |v - e| <= t would take it.
        assert!(!tol.accepts(0.8801099999999998));
        let range = metric("name = 'x'\nregex = '(\\d)'\nmin = 0.1\nmax = 0.2").expectation().unwrap();
        assert!(range.accepts(0.1) && range.accepts(0.2) && !range.accepts(0.21));
    }

    #[test]
    fn malformed_specs_are_refused() {
        for (text, why) in [
            ("name = 'x'\nequals = 1.0", "exactly one of regex"),
            ("name = 'x'\nregex = '\\d'\nequals = 1.0", "capture group"),
            ("name = 'x'\nregex = '(\\d)'", "exactly one expectation"),
            ("name = 'x'\nregex = '(\\d)'\nexpected = 1.0", "expected goes with tolerance"),
            ("name = 'x'\njson = 'a'\nequals = 1.0", "give `file`"),
            ("name = 'x'\nregex = '(\\d)'\nfile = '../x'\nequals = 1.0", "relative path"),
            ("name = 'x'\nregex = '(\\d)'\nequals = 1.0\nmin = 0.0\nmax = 1.0", "exactly one expectation"),
        ] {
            let m: MetricSpec = toml::from_str(text).unwrap();
            let err = m.validate().unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
        for (text, why) in [
            ("name = 'x'\neach = 'a/*'\nfile = 'm.csv'\ncsv_column = 'c'\nequals = [1.0]", "`{n}`"),
            ("name = 'x{n}'\neach = '/a'\nfile = 'm.csv'\ncsv_column = 'c'\nequals = [1.0]", "relative path"),
            ("name = 'x{n}'\neach = 'a/*'\nfile = 'm.csv'\ncsv_column = 'c'\nexpected = [1.0]", "tolerance"),
            ("name = 'x{n}'\neach = 'a/*'\nfile = 'm.csv'\ncsv_column = 'c'\nequals = []", "equals = [...]"),
        ] {
            let s: SeriesSpec = toml::from_str(text).unwrap();
            let err = s.validate().unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
    }
}
