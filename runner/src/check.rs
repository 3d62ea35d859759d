//! Checkers: how a run's output is compared with the gold results.
//!
//! A declarative check reads each metric from the run's stdout, stderr or a file (with a
//! regular expression, a JSON path or a CSV cell) and compares it exactly, within a
//! tolerance, or within a range; all metrics must hold. An external check is a command
//! whose exit status decides and whose JSON output gives the metrics.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    #[serde(default)]
    pub metrics: Vec<MetricSpec>,
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
    /// A file to read, relative to the run's working copy of the codebase.
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
    /// Pass if the value is within `tolerance` of `expected`.
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
#[serde(rename_all = "lowercase")]
pub enum Occurrence {
    Once,
    First,
    #[default]
    Last,
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
    pub workdir: &'a Path,
    pub stdout: &'a Path,
    pub stderr: &'a Path,
}

impl CheckSpec {
    /// Refuses a check that cannot be run as written.
    pub fn validate(&self) -> Result<(), String> {
        if self.metrics.is_empty() && self.external.is_none() {
            return Err("a check needs metrics or an external command".into());
        }
        for m in &self.metrics {
            m.validate().map_err(|e| format!("check metric `{}`: {e}", m.name))?;
        }
        if let Some(ext) = &self.external
            && ext.command.is_empty()
        {
            return Err("check.external.command is empty".into());
        }
        Ok(())
    }

    pub fn run(&self, out: RunOutput<'_>) -> CheckReport {
        let mut report = CheckReport { passed: true, ..CheckReport::default() };
        for m in &self.metrics {
            match m.read(out) {
                Ok(value) => {
                    report.metrics.insert(m.name.clone(), value);
                    let ok = m.accepts(value);
                    report.passed &= ok;
                    let _ = writeln!(
                        report.log,
                        "{}: read {value}, expected {}: {}",
                        m.name,
                        m.expectation(),
                        if ok { "pass" } else { "FAIL" }
                    );
                }
                Err(why) => {
                    report.passed = false;
                    let _ = writeln!(report.log, "{}: {why}: FAIL", m.name);
                }
            }
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

impl MetricSpec {
    fn validate(&self) -> Result<(), String> {
        let extractors = [self.regex.is_some(), self.json.is_some(), self.csv_column.is_some()];
        if extractors.iter().filter(|x| **x).count() != 1 {
            return Err("give exactly one of regex, json, csv_column".into());
        }
        if let Some(r) = &self.regex {
            let re = Regex::new(r).map_err(|e| format!("regex: {e}"))?;
            if re.captures_len() < 2 {
                return Err("the regex needs a capture group around the number".into());
            }
        }
        if (self.json.is_some() || self.csv_column.is_some()) && self.file.is_none() {
            return Err("json and csv_column read a file: give `file`".into());
        }
        if let Some(p) = &self.json {
            parse_json_path(p)?;
        }
        let forms = [
            self.equals.is_some(),
            self.expected.is_some() || self.tolerance.is_some(),
            self.min.is_some() || self.max.is_some(),
        ];
        if forms.iter().filter(|x| **x).count() != 1 {
            return Err("give exactly one expectation: equals, expected + tolerance, or min + max".into());
        }
        if (self.expected.is_some() != self.tolerance.is_some()) || (self.min.is_some() != self.max.is_some())
        {
            return Err("expected goes with tolerance, min with max".into());
        }
        if let Some(file) = &self.file
            && (file.starts_with('/') || file.split('/').any(|c| c == ".."))
        {
            return Err(format!("file `{file}` must be a relative path inside the codebase"));
        }
        Ok(())
    }

    fn accepts(&self, v: f64) -> bool {
        if let Some(e) = self.equals {
            return v == e;
        }
        if let (Some(e), Some(t)) = (self.expected, self.tolerance) {
            return (v - e).abs() <= t + f64::EPSILON * e.abs().max(1.0);
        }
        if let (Some(lo), Some(hi)) = (self.min, self.max) {
            return lo <= v && v <= hi;
        }
        false
    }

    fn expectation(&self) -> String {
        if let Some(e) = self.equals {
            return format!("exactly {e}");
        }
        if let (Some(e), Some(t)) = (self.expected, self.tolerance) {
            return format!("{e} ± {t}");
        }
        format!("within [{}, {}]", self.min.unwrap_or(f64::NAN), self.max.unwrap_or(f64::NAN))
    }

    fn read(&self, out: RunOutput<'_>) -> Result<f64, String> {
        let path = match (&self.file, self.from) {
            (Some(f), _) => out.workdir.join(f),
            (None, Stream::Stdout) => out.stdout.to_owned(),
            (None, Stream::Stderr) => out.stderr.to_owned(),
        };
        let where_ = self.file.clone().unwrap_or_else(|| format!("{:?}", self.from).to_lowercase());
        let bytes = fs::read(&path).map_err(|e| format!("cannot read {where_}: {e}"))?;
        let text = String::from_utf8_lossy(&bytes);
        if let Some(r) = &self.regex {
            return read_regex(&text, r, self.occurrence).map_err(|e| format!("{where_}: {e}"));
        }
        if let Some(p) = &self.json {
            let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{where_} is not JSON: {e}"))?;
            return read_json(&doc, p).map_err(|e| format!("{where_}: {e}"));
        }
        let column = self.csv_column.as_deref().unwrap_or_default();
        read_csv(&text, column, self.csv_row).map_err(|e| format!("{where_}: {e}"))
    }
}

fn read_regex(text: &str, pattern: &str, occurrence: Occurrence) -> Result<f64, String> {
    let re = Regex::new(pattern).map_err(|e| e.to_string())?;
    let matches: Vec<_> = re.captures_iter(text).collect();
    let chosen = match occurrence {
        Occurrence::Once if matches.len() != 1 => {
            return Err(format!("expected exactly one match of /{pattern}/, found {}", matches.len()));
        }
        Occurrence::Once | Occurrence::First => matches.first(),
        Occurrence::Last => matches.last(),
    };
    let caps = chosen.ok_or_else(|| format!("no match of /{pattern}/"))?;
    let raw = caps.get(1).map(|m| m.as_str()).unwrap_or_default();
    number(raw)
}

fn number(raw: &str) -> Result<f64, String> {
    raw.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("`{raw}` is not a finite number"))
}

#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

fn parse_json_path(path: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !key.is_empty() {
            steps.push(Step::Key(key.to_owned()));
        }
        while let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']').ok_or_else(|| format!("json path `{path}`: unclosed ["))?;
            let index = inner[..end].parse().map_err(|_| format!("json path `{path}`: bad index"))?;
            steps.push(Step::Index(index));
            rest = &inner[end + 1..];
        }
        if !rest.is_empty() || (key.is_empty() && steps.is_empty()) {
            return Err(format!("json path `{path}` is malformed"));
        }
    }
    Ok(steps)
}

fn read_json(doc: &Value, path: &str) -> Result<f64, String> {
    let mut at = doc;
    for step in parse_json_path(path)? {
        at = match step {
            Step::Key(k) => at.get(&k),
            Step::Index(i) => at.get(i),
        }
        .ok_or_else(|| format!("json path `{path}` not found"))?;
    }
    match at {
        Value::Number(n) => n.as_f64().ok_or_else(|| format!("`{n}` is not a number")),
        Value::String(s) => number(s),
        other => Err(format!("json path `{path}` holds {other}, not a number")),
    }
}

fn read_csv(text: &str, column: &str, row: i64) -> Result<f64, String> {
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(text.as_bytes());
    let headers = reader.headers().map_err(|e| e.to_string())?.clone();
    let col =
        headers.iter().position(|h| h.trim() == column).ok_or_else(|| format!("no CSV column `{column}`"))?;
    let rows: Vec<csv::StringRecord> =
        reader.records().collect::<Result<_, _>>().map_err(|e| e.to_string())?;
    let index = if row < 0 { rows.len() as i64 + row } else { row };
    let record =
        usize::try_from(index).ok().and_then(|i| rows.get(i)).ok_or_else(|| format!("no CSV row {row}"))?;
    number(record.get(col).unwrap_or_default())
}

impl ExternalSpec {
    /// Runs the command in the working copy, with the run's output files named in the
    /// environment: REXBENCH_WORKDIR, REXBENCH_STDOUT, REXBENCH_STDERR. `{task}` in a
    /// word of the command is the task's folder, where a checker script can live.
    fn run(&self, out: RunOutput<'_>) -> (bool, BTreeMap<String, f64>, String) {
        let task_dir = out.task_dir.to_string_lossy();
        let argv: Vec<String> = self.command.iter().map(|w| w.replace("{task}", &task_dir)).collect();
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
                return (
                    false,
                    BTreeMap::new(),
                    format!("external check {:?} could not start: {e}\n", self.command),
                );
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
            let _ = writeln!(log, "(its output is not a JSON object; no metrics read)");
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
    fn regex_occurrences() {
        let text = "PRED ACC : 0.5 (10/21000)\nnoise\nPRED ACC : 0.25 (5/21000)\n";
        let p = r"PRED ACC : (\S+) \(\d+/21000\)";
        assert_eq!(read_regex(text, p, Occurrence::Last), Ok(0.25));
        assert_eq!(read_regex(text, p, Occurrence::First), Ok(0.5));
        assert!(read_regex(text, p, Occurrence::Once).unwrap_err().contains("found 2"));
        assert!(read_regex("", p, Occurrence::Last).unwrap_err().starts_with("no match"));
        assert!(read_regex("PRED ACC : nan (1/21000)", p, Occurrence::Last).is_err());
    }

    #[test]
    fn json_paths() {
        let doc: Value = serde_json::json!({"a": {"b": [1, {"c": 0.75}]}, "s": "0.5", "t": true});
        assert_eq!(read_json(&doc, "a.b[1].c"), Ok(0.75));
        assert_eq!(read_json(&doc, "a.b[0]"), Ok(1.0));
        assert_eq!(read_json(&doc, "s"), Ok(0.5));
        assert!(read_json(&doc, "t").is_err());
        assert!(read_json(&doc, "a.x").unwrap_err().contains("not found"));
        assert!(parse_json_path("a[1").is_err());
        assert!(parse_json_path("").is_err());
    }

    #[test]
    fn csv_cells() {
        let text = "epoch,train_acc,test_acc\n1,0.5,0.6\n2,0.7,0.88211\n";
        assert_eq!(read_csv(text, "test_acc", -1), Ok(0.88211));
        assert_eq!(read_csv(text, "test_acc", 0), Ok(0.6));
        assert!(read_csv(text, "loss", -1).is_err());
        assert!(read_csv(text, "test_acc", 5).is_err());
    }

    #[test]
    fn expectations() {
        let exact = metric("name = 'x'\nregex = '(\\d)'\nequals = 0.4562857142857143");
        assert!(exact.accepts(0.4562857142857143));
        assert!(!exact.accepts(0.4562857142857144));
        let tol = metric("name = 'x'\nregex = '(\\d)'\nexpected = 0.88211\ntolerance = 0.002");
        assert!(tol.accepts(0.88411) && tol.accepts(0.88011) && !tol.accepts(0.8842));
        let range = metric("name = 'x'\nregex = '(\\d)'\nmin = 0.1\nmax = 0.2");
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
    }
}
