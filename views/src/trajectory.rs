//! An agent's trajectory (Harbor's ATIF JSON, carried in a run's `x-trajectory`
//! artifact) as a run page shows it: the steps in order, who acted, the message, each
//! tool call with its arguments and each observation, with tokens and cost.
//!
//! What a page shows of a trajectory is bounded whatever the file holds: every text is
//! cut to a few thousand characters (the whole artifact is one link away), and once the
//! page's budget is spent the remaining steps are counted, not shown. A file that is
//! not ATIF is shown as plain text with a note, never as an error page.

use serde::{Deserialize, Serialize};

/// The artifact role that holds a trajectory (`x-trajectory.json` in a results
/// directory).
pub const ROLE: &str = "x-trajectory";

/// A text as shown: its head, and how much there was.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Clipped {
    pub text: String,
    /// Characters and lines of the whole text.
    pub chars: usize,
    pub lines: usize,
}

impl Clipped {
    pub fn cut(&self) -> bool {
        self.text.chars().count() < self.chars
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub function: String,
    /// The arguments as indented JSON.
    pub arguments: Clipped,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// The tool call it answers, where it names one.
    pub call_id: Option<String>,
    pub content: Clipped,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub cached_tokens: Option<i64>,
    pub cost_usd: Option<f64>,
}

impl Usage {
    pub fn is_empty(&self) -> bool {
        *self == Usage::default()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub id: i64,
    /// `system`, `user` or `agent`, as the file says.
    pub source: String,
    pub timestamp: Option<String>,
    pub model: Option<String>,
    pub message: Clipped,
    pub reasoning: Option<Clipped>,
    pub tool_calls: Vec<ToolCall>,
    pub observations: Vec<Observation>,
    pub usage: Usage,
    /// Whether the run's error shows first in this step.
    pub error: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    pub digest: String,
    pub size: i64,
    pub schema_version: Option<String>,
    /// The agent as the file names it: name, version, model.
    pub agent: String,
    pub steps: Vec<Step>,
    /// Steps in the file that the page had no room for.
    pub steps_not_shown: usize,
    /// The step in which the run's error first shows, if any does.
    pub error_step: Option<i64>,
    pub totals: Usage,
}

/// What anyone may know of a trajectory whose text is private: how long it was and what
/// the agent did, counted, without a word of any message, argument or observation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TrajectoryStats {
    /// Steps in all, and by who acted (`system`, `user`, `agent`).
    pub steps: usize,
    pub steps_by_source: std::collections::BTreeMap<String, usize>,
    /// Tool calls in all, and by tool (at most [`TOOLS_NAMED`] tools are named, each
    /// by at most 24 characters; the rest are counted under `other tools`).
    pub tool_calls: usize,
    pub tool_calls_by_tool: std::collections::BTreeMap<String, usize>,
    /// Tokens and cost: the file's totals, else its steps' summed.
    pub prompt_tokens: Option<i64>,
    pub completion_tokens: Option<i64>,
    pub cached_tokens: Option<i64>,
    pub cost_usd: Option<f64>,
    /// Seconds from the first step's timestamp to the last one's, where both read.
    pub duration_s: Option<f64>,
}

impl TrajectoryStats {
    /// The tools named, most used first (ties by name).
    pub fn tools_by_use(&self) -> Vec<(String, usize)> {
        let mut tools: Vec<(String, usize)> = self.tool_calls_by_tool.clone().into_iter().collect();
        tools.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        tools
    }
}

/// How many tools [`TrajectoryStats`] names.
pub const TOOLS_NAMED: usize = 30;

/// A trajectory's statistics, or what is wrong with a file that is not ATIF.
#[cfg(feature = "db")]
pub fn stats(bytes: &[u8]) -> Result<TrajectoryStats, String> {
    use time::OffsetDateTime;
    use time::format_description::well_known::Rfc3339;

    let file: atif::File = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    atif::version(file.schema_version.as_deref())?;
    let mut out = TrajectoryStats { steps: file.steps.len(), ..TrajectoryStats::default() };
    let mut summed = Usage::default();
    let add = |total: &mut Option<i64>, n: Option<i64>| {
        if let Some(n) = n {
            *total = Some(total.unwrap_or(0).saturating_add(n));
        }
    };
    let mut times = Vec::new();
    // A name, cut short enough that no run of 32 bytes of the file reaches the answer.
    let name = |text: &str| {
        let c = clip(text, 24);
        if c.cut() { format!("{}…", c.text) } else { c.text }
    };
    for s in &file.steps {
        *out.steps_by_source.entry(name(&s.source)).or_default() += 1;
        for call in s.tool_calls.iter().flatten() {
            out.tool_calls += 1;
            let known = out.tool_calls_by_tool.len() < TOOLS_NAMED
                || out.tool_calls_by_tool.contains_key(&name(&call.function_name));
            let tool = if known { name(&call.function_name) } else { "other tools".to_owned() };
            *out.tool_calls_by_tool.entry(tool).or_default() += 1;
        }
        if let Some(m) = &s.metrics {
            add(&mut summed.prompt_tokens, m.prompt_tokens);
            add(&mut summed.completion_tokens, m.completion_tokens);
            add(&mut summed.cached_tokens, m.cached_tokens);
            if let Some(c) = m.cost_usd {
                summed.cost_usd = Some(summed.cost_usd.unwrap_or(0.0) + c);
            }
        }
        times.extend(s.timestamp.as_deref().and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok()));
    }
    let totals = file.final_metrics.as_ref();
    out.prompt_tokens = totals.and_then(|t| t.total_prompt_tokens).or(summed.prompt_tokens);
    out.completion_tokens = totals.and_then(|t| t.total_completion_tokens).or(summed.completion_tokens);
    out.cached_tokens = totals.and_then(|t| t.total_cached_tokens).or(summed.cached_tokens);
    out.cost_usd = totals.and_then(|t| t.total_cost_usd).or(summed.cost_usd);
    if let (Some(first), Some(last)) = (times.iter().min(), times.iter().max()) {
        out.duration_s = Some((*last - *first).as_seconds_f64());
    }
    Ok(out)
}

/// Bounds on what one trajectory puts on a page.
#[cfg(feature = "db")]
mod limits {
    /// Characters of a message, of reasoning, of a call's arguments, of an observation.
    pub const MESSAGE: usize = 2_000;
    pub const ARGUMENTS: usize = 1_200;
    pub const OBSERVATION: usize = 1_500;
    /// Lines of any of those.
    pub const LINES: usize = 40;
    /// Bytes of all steps together, markup included; past it, steps are counted only.
    pub const PAGE: usize = 90_000;
    /// What the markup around a step and around each of its texts takes of that.
    pub const STEP_MARKUP: usize = 500;
    pub const PART_MARKUP: usize = 250;
    /// Characters of a name, an id or a timestamp.
    pub const NAME: usize = 120;
}

/// The file's form, as far as a page needs it. Unknown fields (ATIF's `extra`, newer
/// versions' additions) are passed over.
#[cfg(feature = "db")]
mod atif {
    use serde::Deserialize;
    use serde_json::Value;

    #[derive(Deserialize)]
    pub struct File {
        pub schema_version: Option<String>,
        pub agent: Option<Agent>,
        pub steps: Vec<Step>,
        pub final_metrics: Option<FinalMetrics>,
    }

    #[derive(Deserialize)]
    pub struct Agent {
        pub name: Option<String>,
        pub version: Option<String>,
        pub model_name: Option<String>,
    }

    #[derive(Deserialize)]
    pub struct Step {
        pub step_id: i64,
        pub source: String,
        pub timestamp: Option<String>,
        pub model_name: Option<String>,
        #[serde(default)]
        pub message: Value,
        pub reasoning_content: Option<String>,
        pub tool_calls: Option<Vec<ToolCall>>,
        pub observation: Option<Observation>,
        pub metrics: Option<Metrics>,
    }

    #[derive(Deserialize)]
    pub struct ToolCall {
        pub tool_call_id: String,
        pub function_name: String,
        #[serde(default)]
        pub arguments: Value,
    }

    #[derive(Deserialize)]
    pub struct Observation {
        pub results: Vec<ObservationResult>,
    }

    #[derive(Deserialize)]
    pub struct ObservationResult {
        pub source_call_id: Option<String>,
        #[serde(default)]
        pub content: Value,
    }

    #[derive(Deserialize)]
    pub struct Metrics {
        pub prompt_tokens: Option<i64>,
        pub completion_tokens: Option<i64>,
        pub cached_tokens: Option<i64>,
        pub cost_usd: Option<f64>,
    }

    #[derive(Deserialize)]
    pub struct FinalMetrics {
        pub total_prompt_tokens: Option<i64>,
        pub total_completion_tokens: Option<i64>,
        pub total_cached_tokens: Option<i64>,
        pub total_cost_usd: Option<f64>,
    }

    /// ATIF's content: a string, or parts. Text parts are shown; an image or an audio
    /// part (ATIF-v1.8) is named, with its media type and path (and an audio part's
    /// length); a part of a type this board does not read is said to be there.
    pub fn text(content: &Value) -> String {
        match content {
            Value::Null => String::new(),
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts.iter().map(part).collect::<Vec<_>>().join("\n"),
            other => other.to_string(),
        }
    }

    fn part(p: &Value) -> String {
        let source = p.get("source");
        let field = |name: &str| source.and_then(|s| s.get(name)).and_then(Value::as_str);
        let path = field("path").unwrap_or("no path given");
        let media = field("media_type").map(|m| format!("{m}, ")).unwrap_or_default();
        let kind = p.get("type").and_then(Value::as_str);
        match (kind, p.get("text").and_then(Value::as_str)) {
            (Some("text") | None, Some(text)) => text.to_owned(),
            (Some("image"), _) | (None, None) if source.is_some() => format!("[image: {media}{path}]"),
            (Some("audio"), _) => {
                let length = source
                    .and_then(|s| s.get("duration_sec"))
                    .and_then(Value::as_f64)
                    .map(|d| format!("{d} s, "))
                    .unwrap_or_default();
                format!("[audio: {media}{length}{path}]")
            }
            (Some(other), _) => {
                format!("[a content part of type `{other}`, which this board does not read]")
            }
            (None, None) => p.to_string(),
        }
    }

    /// The versions this board reads: ATIF-v1.0 to v1.8, and later minor versions of
    /// v1 (each only adds). A newer major version, or a version that is not ATIF's
    /// form, is refused with a sentence; a file that names none is read as v1.
    pub fn version(declared: Option<&str>) -> Result<(), String> {
        let Some(declared) = declared else { return Ok(()) };
        let parsed = declared
            .strip_prefix("ATIF-v")
            .and_then(|v| v.split_once('.'))
            .and_then(|(major, minor)| Some((major.parse::<u32>().ok()?, minor.parse::<u32>().ok()?)));
        match parsed {
            Some((1, _)) => Ok(()),
            Some((major, minor)) => Err(format!(
                "it declares ATIF-v{major}.{minor}, a major version this board does not read (it reads ATIF-v1.0 \
                 to v1.8)"
            )),
            None => Err(format!(
                "its schema_version `{}` is not an ATIF version (ATIF-v1.0 to v1.8)",
                clip_name(declared)
            )),
        }
    }

    fn clip_name(text: &str) -> String {
        text.chars().take(40).collect()
    }
}

/// Reads an ATIF trajectory for a page, marking the step where `error` (the run's
/// error type, e.g. `FileNotFoundError`) first shows. The error names what is wrong
/// with a file that is not ATIF.
#[cfg(feature = "db")]
pub fn read(bytes: &[u8], digest: &str, size: i64, error: Option<&str>) -> Result<Trajectory, String> {
    let file: atif::File = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    atif::version(file.schema_version.as_deref())?;
    if file.steps.is_empty() {
        return Err("it has no steps".to_owned());
    }
    let agent = file.agent.map_or_else(String::new, |a| {
        let name =
            [a.name, a.version.map(|v| format!("v{v}"))].into_iter().flatten().collect::<Vec<_>>().join(" ");
        match a.model_name {
            Some(model) if !name.is_empty() => format!("{name} ({model})"),
            Some(model) => model,
            None => name,
        }
    });
    let mut budget = limits::PAGE;
    let mut steps = Vec::new();
    let mut error_step = None;
    let total = file.steps.len();
    for s in file.steps {
        if budget == 0 {
            break;
        }
        let message = atif::text(&s.message);
        let tool_calls: Vec<(String, String, String)> = s
            .tool_calls
            .unwrap_or_default()
            .into_iter()
            .map(|c| {
                let arguments = serde_json::to_string_pretty(&c.arguments).unwrap_or_default();
                (c.tool_call_id, c.function_name, arguments)
            })
            .collect();
        let observations: Vec<(Option<String>, String)> = s
            .observation
            .map(|o| o.results.into_iter().map(|r| (r.source_call_id, atif::text(&r.content))).collect())
            .unwrap_or_default();
        let shows_error = error.is_some_and(|e| {
            !e.is_empty()
                && error_step.is_none()
                && (observations.iter().any(|(_, o)| o.contains(e)) || message.contains(e))
        });
        if shows_error {
            error_step = Some(s.step_id);
        }
        budget = budget.saturating_sub(limits::STEP_MARKUP);
        // Each text takes its share of what the page has left.
        let mut take = |text: &str, cap: usize| {
            let c = clip(text, cap.min(budget));
            budget = budget.saturating_sub(c.text.len() + limits::PART_MARKUP);
            c
        };
        let step = Step {
            id: s.step_id,
            message: take(&message, limits::MESSAGE),
            reasoning: s.reasoning_content.as_deref().map(|r| take(r, limits::MESSAGE)),
            tool_calls: tool_calls
                .iter()
                .map(|(id, function, arguments)| ToolCall {
                    id: short(id),
                    function: short(function),
                    arguments: take(arguments, limits::ARGUMENTS),
                })
                .collect(),
            observations: observations
                .iter()
                .map(|(call, content)| Observation {
                    call_id: call.as_deref().map(short),
                    content: take(content, limits::OBSERVATION),
                })
                .collect(),
            source: short(&s.source),
            timestamp: s.timestamp.as_deref().map(short),
            model: s.model_name.as_deref().map(short),
            usage: s.metrics.map_or_else(Usage::default, |m| Usage {
                prompt_tokens: m.prompt_tokens,
                completion_tokens: m.completion_tokens,
                cached_tokens: m.cached_tokens,
                cost_usd: m.cost_usd,
            }),
            error: shows_error,
        };
        steps.push(step);
    }
    let totals = file.final_metrics.map_or_else(Usage::default, |m| Usage {
        prompt_tokens: m.total_prompt_tokens,
        completion_tokens: m.total_completion_tokens,
        cached_tokens: m.total_cached_tokens,
        cost_usd: m.total_cost_usd,
    });
    Ok(Trajectory {
        digest: digest.to_owned(),
        size,
        schema_version: file.schema_version.as_deref().map(short),
        agent: short(&agent),
        steps_not_shown: total - steps.len(),
        steps,
        error_step,
        totals,
    })
}

/// At most `cap` characters and [`limits::LINES`] lines of `text`.
#[cfg(feature = "db")]
fn clip(text: &str, cap: usize) -> Clipped {
    let chars = text.chars().count();
    let lines = text.lines().count();
    let mut end = text.char_indices().nth(cap).map_or(text.len(), |(i, _)| i);
    if let Some((i, _)) = text.match_indices('\n').nth(limits::LINES - 1) {
        end = end.min(i);
    }
    Clipped { text: text[..end].to_owned(), chars, lines }
}

#[cfg(feature = "db")]
fn short(text: &str) -> String {
    let c = clip(text, limits::NAME);
    if c.cut() { format!("{}…", c.text) } else { c.text }
}

#[cfg(all(test, feature = "db"))]
mod tests {
    use super::*;

    fn step(id: i64, source: &str, extra: &str) -> String {
        format!(r#"{{"step_id": {id}, "source": "{source}", "message": "m{id}"{extra}}}"#)
    }

    fn file(steps: &[String]) -> Vec<u8> {
        format!(
            r#"{{"schema_version": "ATIF-v1.7", "agent": {{"name": "openhands", "version": "0.9", "model_name": "gpt-5"}},
               "steps": [{}], "final_metrics": {{"total_cost_usd": 0.5, "total_prompt_tokens": 10}}}}"#,
            steps.join(",")
        )
        .into_bytes()
    }

    /// What anyone may know of a private trajectory: counts, never its text.
    #[test]
    fn statistics_count_steps_calls_tokens_and_time_without_a_word_of_the_text() {
        let call = |name: &str| {
            format!(r#"{{"tool_call_id": "c", "function_name": "{name}", "arguments": {{"cmd": "SECRET"}}}}"#)
        };
        let bytes = file(&[
            step(1, "user", r#", "timestamp": "2026-01-01T10:00:00Z""#),
            step(
                2,
                "agent",
                &format!(
                    r#", "timestamp": "2026-01-01T10:01:30Z", "tool_calls": [{}, {}, {}],
                       "metrics": {{"prompt_tokens": 7, "completion_tokens": 3, "cost_usd": 0.01}}"#,
                    call("bash"),
                    call("bash"),
                    call(&"a-tool-with-a-name-longer-than-thirty-two-bytes".repeat(2))
                ),
            ),
            step(3, "agent", r#", "timestamp": "2026-01-01T10:02:00Z", "metrics": {"completion_tokens": 5}"#),
        ]);
        let s = stats(&bytes).unwrap();
        assert_eq!((s.steps, s.tool_calls), (3, 3));
        assert_eq!(s.steps_by_source, [("agent".to_owned(), 2), ("user".to_owned(), 1)].into());
        assert_eq!(s.tool_calls_by_tool["bash"], 2);
        assert!(s.tool_calls_by_tool.keys().all(|k| k.len() < 32), "{:?}", s.tool_calls_by_tool);
        // The file's totals where it gives them, the steps' summed where not.
        assert_eq!((s.prompt_tokens, s.completion_tokens, s.cost_usd), (Some(10), Some(8), Some(0.5)));
        assert_eq!(s.duration_s, Some(120.0));
        assert!(!serde_json::to_string(&s).unwrap().contains("SECRET"));
        assert!(stats(b"not json").is_err());
    }

    #[test]
    fn steps_calls_observations_and_usage_are_read() {
        let bytes = file(&[
            step(1, "user", ""),
            step(
                2,
                "agent",
                r#", "tool_calls": [{"tool_call_id": "c1", "function_name": "bash", "arguments": {"cmd": "python run.py"}}],
                   "observation": {"results": [{"source_call_id": "c1", "content": "Traceback\nFileNotFoundError: x"}]},
                   "metrics": {"prompt_tokens": 7, "completion_tokens": 3, "cost_usd": 0.01}, "extra": {"k": 1}"#,
            ),
            r#"{"step_id": 3, "source": "agent", "message": [{"type": "text", "text": "FileNotFoundError again"},
                {"type": "image", "source": {"media_type": "image/png", "path": "a.png"}}]}"#
                .to_owned(),
        ]);
        let t = read(&bytes, "d", 1, Some("FileNotFoundError")).unwrap();
        assert_eq!(t.agent, "openhands v0.9 (gpt-5)");
        assert_eq!(t.steps.len(), 3);
        assert_eq!(t.error_step, Some(2), "the first step where the error shows");
        assert!(t.steps[1].error && !t.steps[2].error);
        let call = &t.steps[1].tool_calls[0];
        assert_eq!((call.id.as_str(), call.function.as_str()), ("c1", "bash"));
        assert!(call.arguments.text.contains("\"cmd\": \"python run.py\""));
        assert_eq!(t.steps[1].observations[0].call_id.as_deref(), Some("c1"));
        assert_eq!(t.steps[1].usage.cost_usd, Some(0.01));
        assert_eq!(t.steps[2].message.text, "FileNotFoundError again\n[image: image/png, a.png]");
        assert_eq!(t.totals.cost_usd, Some(0.5));
    }

    #[test]
    fn long_texts_are_cut_and_the_page_budget_holds() {
        let big = "x".repeat(200_000);
        let lines = "line\n".repeat(500);
        let steps: Vec<String> = (1..=400)
            .map(|i| {
                step(i, "agent", &format!(r#", "observation": {{"results": [{{"content": "{big}"}}, {{"content": {lines:?}}}]}}"#))
            })
            .collect();
        let t = read(&file(&steps), "d", 1, None).unwrap();
        let shown: usize = t
            .steps
            .iter()
            .flat_map(|s| s.observations.iter().map(|o| o.content.text.len()).chain([s.message.text.len()]))
            .sum();
        assert!(shown <= limits::PAGE, "{shown}");
        // Many small steps: the markup around each counts too.
        let small: Vec<String> = (1..=5_000).map(|i| step(i, "agent", "")).collect();
        let many = read(&file(&small), "d", 1, None).unwrap();
        let markup = limits::STEP_MARKUP + limits::PART_MARKUP;
        assert!(many.steps.len() * markup <= limits::PAGE + markup, "{}", many.steps.len());
        assert_eq!(many.steps.len() + many.steps_not_shown, 5_000);
        assert_eq!(t.steps.len() + t.steps_not_shown, 400);
        assert!(t.steps_not_shown > 0);
        let first = &t.steps[0].observations;
        assert_eq!((first[0].content.text.len(), first[0].content.chars), (limits::OBSERVATION, 200_000));
        assert!(first[0].content.cut());
        assert_eq!((first[1].content.text.lines().count(), first[1].content.lines), (limits::LINES, 500));
    }

    #[test]
    fn what_is_not_atif_is_refused_with_a_reason() {
        assert!(read(b"{not json", "d", 1, None).unwrap_err().contains("line 1"));
        assert!(read(br#"{"steps": []}"#, "d", 1, None).unwrap_err().contains("no steps"));
        assert!(read(br#"{"agent": {}}"#, "d", 1, None).unwrap_err().contains("steps"));
        assert!(read(br#"[1, 2]"#, "d", 1, None).is_err());
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        let c = clip(&"é".repeat(10), 3);
        assert_eq!((c.text.as_str(), c.chars), ("ééé", 10));
        assert_eq!(short(&"ü".repeat(300)).chars().count(), limits::NAME + 1);
    }

    /// ATIF-v1.8's content parts: text shown, images and audio named with what the
    /// file says of them, a part of an unknown type said to be there; never dropped.
    #[test]
    fn atif_1_8_parts_are_shown_or_named_and_newer_majors_refused() {
        let parts = r#"[{"type": "text", "text": "listen"},
            {"type": "image", "source": {"media_type": "image/png", "path": "images/plot.png"}},
            {"type": "audio", "source": {"media_type": "audio/wav", "path": "audio/note.wav", "duration_sec": 3.5}},
            {"type": "video", "source": {"path": "v.mp4"}}]"#;
        let bytes = format!(
            r#"{{"schema_version": "ATIF-v1.8", "agent": {{"name": "a"}},
                "steps": [{{"step_id": 1, "source": "user", "message": {parts}}},
                          {{"step_id": 2, "source": "agent", "message": "ok",
                            "observation": {{"results": [{{"content": {parts}}}]}}}}]}}"#
        );
        let t = read(bytes.as_bytes(), "d", 1, None).unwrap();
        let shown = &t.steps[0].message.text;
        assert!(shown.contains("listen"), "{shown}");
        assert!(shown.contains("[image: image/png, images/plot.png]"), "{shown}");
        assert!(shown.contains("[audio: audio/wav, 3.5 s, audio/note.wav]"), "{shown}");
        assert!(shown.contains("a content part of type `video`"), "{shown}");
        assert!(t.steps[1].observations[0].content.text.contains("[audio: audio/wav"));
        assert_eq!(t.schema_version.as_deref(), Some("ATIF-v1.8"));
        assert!(stats(bytes.as_bytes()).is_ok());
        // Every v1 reads, a file that names no version reads as v1; v2 and nonsense do not.
        for ok in ["ATIF-v1.0", "ATIF-v1.7", "ATIF-v1.9"] {
            assert!(read(bytes.replace("ATIF-v1.8", ok).as_bytes(), "d", 1, None).is_ok(), "{ok}");
        }
        let newer = read(bytes.replace("ATIF-v1.8", "ATIF-v2.0").as_bytes(), "d", 1, None).unwrap_err();
        assert!(newer.contains("ATIF-v2.0, a major version this board does not read"), "{newer}");
        assert!(stats(bytes.replace("ATIF-v1.8", "ATIF-v2.0").as_bytes()).is_err());
        let odd = read(bytes.replace("ATIF-v1.8", "v1").as_bytes(), "d", 1, None).unwrap_err();
        assert!(odd.contains("is not an ATIF version"), "{odd}");
    }
}
