//! Reading a number out of a run's output, the way the official RExBench evaluators
//! read it: text as Python's `open()` gives it, numbers in a regular expression's
//! capture as Python's `float()` parses them, and CSV cells as pandas' `read_csv`
//! types them. Each difference from those is a verdict the leaderboard would get
//! wrong, so the rules are spelled out here and tested against the official scripts
//! (`runner/tests/it/verdicts.rs`).

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

/// With `regex`: which match counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Occurrence {
    /// Exactly one match in the whole text, else the metric fails.
    Once,
    First,
    #[default]
    Last,
}

/// Text as Python reads a file opened in text mode: UTF-8 (invalid bytes are an
/// error, as Python's decoder raises), with `\r\n` and a lone `\r` read as `\n`.
pub fn python_text(bytes: Vec<u8>) -> Result<String, String> {
    let text = String::from_utf8(bytes).map_err(|e| format!("is not UTF-8 text ({})", e.utf8_error()))?;
    if !text.contains('\r') {
        return Ok(text);
    }
    Ok(text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// A number as Python's `float()` parses a string: surrounding white space allowed,
/// `_` between digits, `inf`/`infinity`/`nan` in any case. (Python also accepts
/// digits of other scripts; no metric the benchmark prints uses them.)
pub fn python_float(s: &str) -> Option<f64> {
    let s = s.trim();
    let bytes = s.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'_' {
            let digit_at = |j: Option<usize>| j.and_then(|j| bytes.get(j)).is_some_and(u8::is_ascii_digit);
            if !digit_at(i.checked_sub(1)) || !digit_at(Some(i + 1)) {
                return None;
            }
        }
    }
    plain_float(&s.replace('_', ""))
}

/// Rust's grammar for a float is Python's, less white space and underscores.
fn plain_float(s: &str) -> Option<f64> {
    if s.is_empty() || s.contains(char::is_whitespace) {
        return None;
    }
    s.parse::<f64>().ok()
}

/// A CSV cell as pandas' default parser types it.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Number(f64),
    /// Empty, or one of pandas' default missing-value markers: read as NaN.
    Missing,
    /// Anything else; one such cell makes pandas read the whole column as text.
    Text(String),
}

/// pandas' default `na_values`.
const PANDAS_MISSING: &[&str] = &[
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",
    "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
];

pub fn pandas_cell(raw: &str) -> Cell {
    if PANDAS_MISSING.contains(&raw) {
        return Cell::Missing;
    }
    // pandas' converter skips spaces and tabs around a number and knows infinity in any case.
    let s = raw.trim_matches([' ', '\t']);
    let unsigned = s.trim_start_matches(['+', '-']);
    if s.len() - unsigned.len() <= 1 && ["inf", "infinity"].contains(&unsigned.to_ascii_lowercase().as_str())
    {
        return Cell::Number(if s.starts_with('-') { f64::NEG_INFINITY } else { f64::INFINITY });
    }
    match plain_float(s) {
        Some(v) if !v.is_nan() && !unsigned.eq_ignore_ascii_case("nan") => Cell::Number(v),
        _ => Cell::Text(raw.to_owned()),
    }
}

/// A metric value must be a finite number: the bundle carries nothing else, and NaN or
/// infinity never lies within an expectation anyway.
fn finite(v: f64, raw: &str) -> Result<f64, String> {
    if v.is_finite() { Ok(v) } else { Err(format!("`{raw}` is not a finite number")) }
}

/// The first capture group of the chosen match, parsed as Python's `float()` does.
/// Matches are found as Python's `re.findall` finds them: anywhere, not overlapping.
pub fn regex(text: &str, pattern: &str, occurrence: Occurrence) -> Result<f64, String> {
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
    let v = python_float(raw).ok_or_else(|| format!("`{raw}` is not a number"))?;
    finite(v, raw)
}

#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

pub fn validate_json_path(path: &str) -> Result<(), String> {
    parse_json_path(path).map(drop)
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

pub fn json(text: &str, path: &str) -> Result<f64, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("is not JSON: {e}"))?;
    let mut at = &doc;
    for step in parse_json_path(path)? {
        at = match step {
            Step::Key(k) => at.get(&k),
            Step::Index(i) => at.get(i),
        }
        .ok_or_else(|| format!("json path `{path}` not found"))?;
    }
    match at {
        Value::Number(n) => n.as_f64().ok_or_else(|| format!("`{n}` is not a number")),
        Value::String(s) => {
            let v = python_float(s).ok_or_else(|| format!("`{s}` is not a number"))?;
            finite(v, s)
        }
        other => Err(format!("json path `{path}` holds {other}, not a number")),
    }
}

/// A cell of `column` (its header exactly, the first of that name) in data row `row`
/// (0 the first, -1 the last), as `pandas.read_csv(file).iloc[row][column]` reads it:
/// a byte-order mark and blank lines are skipped; when the first data row has more
/// fields than the header, the extra leading fields are the index; a later row with
/// more fields than that is an error, a shorter one reads as missing; and one cell of
/// the column that is not a number makes every cell of it text, which no numeric
/// expectation accepts.
pub fn csv(text: &str, column: &str, row: i64) -> Result<f64, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes());
    let mut records = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| format!("is not CSV: {e}"))?;
        let blank = record.len() == 1 && record[0].trim_matches([' ', '\t']).is_empty();
        if !blank {
            records.push(record);
        }
    }
    let (header, data) = records.split_first().ok_or("is empty: no CSV header")?;
    let col =
        header.iter().position(|h| h == column).ok_or_else(|| format!("has no CSV column `{column}`"))?;
    let index_fields = data.first().map_or(0, |r| r.len().saturating_sub(header.len()));
    let width = header.len() + index_fields;
    let mut cells = Vec::with_capacity(data.len());
    for (i, record) in data.iter().enumerate() {
        if record.len() > width {
            return Err(format!(
                "data row {} has {} fields where the rows before it have {width}",
                i + 1,
                record.len()
            ));
        }
        cells.push(record.get(index_fields + col).map_or(Cell::Missing, pandas_cell));
    }
    if let Some((i, Cell::Text(t))) = cells.iter().enumerate().find(|(_, c)| matches!(c, Cell::Text(_))) {
        return Err(format!(
            "column `{column}` holds `{t}` in data row {}, which is not a number, so the column is read as text",
            i + 1
        ));
    }
    let at = if row < 0 { cells.len() as i64 + row } else { row };
    let cell = usize::try_from(at)
        .ok()
        .and_then(|i| cells.get(i))
        .ok_or_else(|| format!("has no data row {row} ({} data rows)", cells.len()))?;
    match cell {
        Cell::Number(v) => finite(*v, &v.to_string()),
        Cell::Missing => Err(format!("column `{column}` is empty in that row (read as NaN)")),
        Cell::Text(_) => unreachable!("text cells were refused above"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_reads_text_with_universal_newlines_and_refuses_bad_utf8() {
        assert_eq!(python_text(b"a\r\nb\rc\n".to_vec()).unwrap(), "a\nb\nc\n");
        assert!(python_text(vec![b'a', 0xff]).unwrap_err().contains("not UTF-8"));
    }

    #[test]
    fn floats_as_python_parses_them() {
        for (s, v) in
            [(" 0.5 ", 0.5), ("1_0", 10.0), ("4.562857142857143e-01", 0.4562857142857143), ("+.5", 0.5)]
        {
            assert_eq!(python_float(s), Some(v), "{s}");
        }
        assert!(python_float("-Infinity").unwrap().is_infinite());
        assert!(python_float("nan").unwrap().is_nan());
        for s in ["_1", "1_", "1__0", "0x1", "1e", "", "1 2", "0.5 (1/2)"] {
            assert_eq!(python_float(s), None, "{s}");
        }
    }

    #[test]
    fn cells_as_pandas_types_them() {
        assert_eq!(pandas_cell(" 0.88211\t"), Cell::Number(0.88211));
        assert_eq!(pandas_cell("-Infinity"), Cell::Number(f64::NEG_INFINITY));
        assert_eq!(pandas_cell("INF"), Cell::Number(f64::INFINITY));
        for missing in ["", "NA", "nan", "NaN", "None", "null", "<NA>"] {
            assert_eq!(pandas_cell(missing), Cell::Missing, "{missing}");
        }
        for text in ["0.882_11", "0x10", " 1 2", "True", "８", "--1", "+-inf"] {
            assert!(matches!(pandas_cell(text), Cell::Text(_)), "{text}");
        }
    }

    #[test]
    fn regex_occurrences() {
        let text = "PRED ACC : 0.5 (10/21000)\nnoise\nPRED ACC : 0.25 (5/21000)\n";
        let p = r"PRED ACC : (\S+) \(\d+/21000\)";
        assert_eq!(regex(text, p, Occurrence::Last), Ok(0.25));
        assert_eq!(regex(text, p, Occurrence::First), Ok(0.5));
        assert!(regex(text, p, Occurrence::Once).unwrap_err().contains("found 2"));
        assert!(regex("", p, Occurrence::Last).unwrap_err().starts_with("no match"));
        assert!(regex("PRED ACC : nan (1/21000)", p, Occurrence::Last).is_err());
    }

    #[test]
    fn json_paths() {
        let doc = serde_json::json!({"a": {"b": [1, {"c": 0.75}]}, "s": "0.5", "t": true}).to_string();
        assert_eq!(json(&doc, "a.b[1].c"), Ok(0.75));
        assert_eq!(json(&doc, "a.b[0]"), Ok(1.0));
        assert_eq!(json(&doc, "s"), Ok(0.5));
        assert!(json(&doc, "t").is_err());
        assert!(json(&doc, "a.x").unwrap_err().contains("not found"));
        assert!(parse_json_path("a[1").is_err());
        assert!(parse_json_path("").is_err());
    }

    #[test]
    fn csv_cells() {
        let text = "epoch,train_acc,test_acc\n1,0.5,0.6\n\n2,0.7,0.88211\n";
        assert_eq!(csv(text, "test_acc", -1), Ok(0.88211));
        assert_eq!(csv(text, "test_acc", 0), Ok(0.6));
        assert!(csv(text, "loss", -1).is_err());
        assert!(csv(text, "test_acc", 5).is_err());
        // The first row's extra field is the index, so the columns shift by one.
        assert_eq!(csv("epoch,test_acc\n0,1,0.88211\n", "test_acc", -1), Ok(0.88211));
        assert!(csv("epoch,test_acc\n1,0.5\n2,0.8,3\n", "test_acc", -1).unwrap_err().contains("data row 2"));
        assert!(
            csv("epoch,test_acc\n1,abc\n2,0.88211\n", "test_acc", -1).unwrap_err().contains("read as text")
        );
        assert_eq!(csv("epoch,test_acc\n1,NA\n2,0.88211\n", "test_acc", -1), Ok(0.88211));
        assert!(csv("epoch, test_acc\n1,0.88211\n", "test_acc", -1).is_err(), "headers are not trimmed");
        assert!(csv("epoch,test_acc\n", "test_acc", -1).unwrap_err().contains("no data row"));
        assert!(csv("", "test_acc", -1).unwrap_err().contains("empty"));
    }
}
