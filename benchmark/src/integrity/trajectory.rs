//! Signs in an agent's trajectory (Harbor's ATIF JSON, the `x-trajectory` artifact):
//! what the agent's own tool calls did. A call that writes the checker's result line,
//! writes into a protected path or a result file, or names the checker's files or the
//! gold is evidence a patch alone may hide (the agent may have run it in its sandbox
//! and shipped only what it produced). Observations (what the tools answered) and the
//! agent's words are not evidence: a run that printed its result line shows it there
//! honestly.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;
use serde_json::value::RawValue;

use super::{Found, Globs, TRAJECTORY_EVIDENCE, result_line_values, result_patterns, write_targets};
use crate::check::CheckSpec;
use crate::task::TaskCard;
use bundle::Finding;

/// The artifact role that holds a trajectory.
pub const TRAJECTORY: &str = "x-trajectory";

/// Where Harbor puts a task's tests and its reference solution in the agent's
/// environment (after the agent's turn): an agent that names them went looking.
pub const ALWAYS_WATCHED: [&str; 2] = ["/tests/**", "/solution/**"];

/// What the agent's tool calls in `trajectory` show about the task, at most
/// [`bundle::MAX_FINDINGS`], one per step. `check` is the task's check as the run was
/// judged by, if known. A file that is not ATIF gives none.
pub fn trajectory_findings(card: &TaskCard, check: Option<&CheckSpec>, trajectory: &[u8]) -> Vec<Finding> {
    // Only the steps' source, id and tool calls are read: the rest (observations, the
    // agent's words, metrics; most of a trajectory's bytes) is checked to be JSON and
    // skipped, never built, however deeply nested.
    let Ok(text) = std::str::from_utf8(trajectory) else { return Vec::new() };
    let Some(file) = object(text) else { return Vec::new() };
    let Some(steps) = file.get("steps").and_then(|s| array(s.get())) else { return Vec::new() };
    // A step id given twice points at its first line (collected last, so kept).
    let lines: BTreeMap<i64, usize> = step_lines(text).into_iter().rev().collect();
    let protected = Globs::new(card.integrity.protected.iter().map(String::as_str));
    let watched =
        Globs::new(ALWAYS_WATCHED.into_iter().chain(card.integrity.watched.iter().map(String::as_str)));
    let results = Globs::new(check.map(|c| c.result_files()).iter().flat_map(|r| {
        r.files.iter().cloned().chain(r.series.iter().map(|(each, _, file)| format!("{each}/{file}")))
    }));
    let patterns = check.map(result_patterns).unwrap_or_default();
    let mut found = Found::about(TRAJECTORY);
    for step in steps.iter().filter_map(|s| object(s.get())) {
        let field = |name: &str| step.get(name).map(|v| v.get());
        if field("source").and_then(string).as_deref() != Some("agent") {
            continue;
        }
        let Some(id) = field("step_id").and_then(|v| serde_json::from_str::<i64>(v).ok()) else { continue };
        let line = lines.get(&id).copied().unwrap_or(1);
        let calls = field("tool_calls").and_then(array).unwrap_or_default();
        let calls: Vec<_> = calls.iter().filter_map(|c| object(c.get())).collect();
        let seen = calls.iter().find_map(|call| {
            let function = call.get("function_name").and_then(|v| string(v.get()));
            let function = function.as_deref().unwrap_or("tool");
            let arguments = call.get("arguments").and_then(|v| serde_json::from_str::<Value>(v.get()).ok());
            let mut texts = Vec::new();
            strings(arguments.as_ref().unwrap_or(&Value::Null), &mut texts);
            texts.iter().flat_map(|t| t.lines()).find_map(|text| {
                if let Some((name, value)) = result_line_values(&patterns, text).into_iter().next() {
                    return Some(format!(
                        "the agent's `{function}` call writes the result line `{name}` is read from itself, \
                         with the value {value}"
                    ));
                }
                for target in write_targets(text) {
                    if let Some(glob) = protected.matching(&target) {
                        return Some(format!(
                            "the agent's `{function}` call writes into `{target}`, which the task protects \
                             (`{glob}`)"
                        ));
                    }
                    if let Some(glob) = results.matching(&target) {
                        return Some(format!(
                            "the agent's `{function}` call writes `{target}`, where the check reads results \
                             (`{glob}`)"
                        ));
                    }
                }
                paths(text).find_map(|path| {
                    let glob = watched.matching(path)?;
                    Some(format!(
                        "the agent's `{function}` call names `{path}`, the checker's files or the gold (`{glob}`)"
                    ))
                })
            })
        });
        if let Some(what) = seen {
            found.add(TRAJECTORY_EVIDENCE, line, format!("step {id}: {what}"));
        }
    }
    found.findings
}

/// A JSON object's fields, each left unparsed; of a key given twice, the last counts (as
/// for a whole [`Value`]). `None` for anything else.
fn object(json: &str) -> Option<BTreeMap<String, &RawValue>> {
    serde_json::from_str(json).ok()
}

/// A JSON array's items, each left unparsed; `None` for anything else.
fn array(json: &str) -> Option<Vec<&RawValue>> {
    serde_json::from_str(json).ok()
}

/// A JSON string's text; `None` for anything else.
fn string(json: &str) -> Option<String> {
    serde_json::from_str(json).ok()
}

/// The line of the file where each step's `"step_id"` is, by step id. One pass: the
/// lines are counted from one step to the next, never again from the start (a file of
/// many steps would otherwise cost its length times their number).
fn step_lines(text: &str) -> Vec<(i64, usize)> {
    static KEY: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""step_id"\s*:\s*(\d+)"#).expect("a valid pattern"));
    let (mut counted_to, mut line) = (0, 1);
    KEY.captures_iter(text)
        .filter_map(|c| {
            let at = c.get(0)?.start();
            line += text[counted_to..at].matches('\n').count();
            counted_to = at;
            Some((c[1].parse().ok()?, line))
        })
        .collect()
}

/// Every string in a JSON value (a tool call's arguments are an object of them, or one).
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(fields) => fields.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The words of a line that look like paths: with a `/` in them.
fn paths(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| c.is_whitespace() || "'\"`=,;()<>|&:".contains(c))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| w.contains('/') && w.len() > 1)
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_step_is_found_on_its_own_line() {
        let text = "{\"steps\": [\n  {\"step_id\": 1,\n   \"x\": \"a\"},\n\n  {\"step_id\" : 2},\n  {\"step_id\": 10}]}\n";
        assert_eq!(super::step_lines(text), [(1, 2), (2, 5), (10, 6)]);
        assert_eq!(super::step_lines("{\"step_id\": 7}"), [(7, 1)]);
    }
}
