//! `/runs/{id}`: one run, with the evidence: outcome, metrics, the patch as a diff and
//! each log with line numbers.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};

use store::ProvenanceKind;

use super::{OutcomeLabel, ProvenanceBadge, TierBadge, loaded, param};
use crate::data::{ArtifactText, RunData, load_run};
use crate::format;

#[component]
pub(crate) fn RunPage() -> impl IntoView {
    let id = param("id");
    let data = Resource::new_blocking(move || id.clone(), load_run);
    view! {
        {loaded(data, |data| view! { <Run data=data/> })}
    }
}

#[component]
fn Run(data: RunData) -> impl IntoView {
    let r = data.run;
    let title = format!("Run #{} · {} · {}", r.id, data.task_name, r.agent_name);
    let agent_link = format!("/agents/{}", format::segment(&r.agent_id));
    let task_link = format!("/tasks/{}", format::segment(&r.task));
    let description = format!(
        "{} on {} ({}, attempt {}): {}.",
        r.agent_name,
        data.task_name,
        r.hint.label().to_lowercase(),
        r.attempt,
        format::outcome_words(r.outcome)
    );
    let expected = data.expected.clone();
    let patch: Vec<ArtifactText> = data.texts.iter().filter(|t| t.role == "patch").cloned().collect();
    let logs: Vec<ArtifactText> = data.texts.iter().filter(|t| t.role != "patch").cloned().collect();
    let published = r.provenance == ProvenanceKind::Published;
    let imported =
        (r.provenance == ProvenanceKind::Imported).then(|| r.provenance_source.clone().unwrap_or_default());

    view! {
        <Title text=title.clone()/>
        <Meta name="description" content=description/>
        <nav class="crumbs" aria-label="Breadcrumb">
            <a href="/">"Leaderboard"</a>" › "
            <a href=agent_link.clone()>{r.agent_name.clone()}</a>" › "
            <a href=task_link.clone()>{data.task_name.clone()}</a>" › "
            {format!("Run #{}", r.id)}
        </nav>
        <h1>{title}</h1>
        <dl class="facts">
            <dt>"Outcome"</dt>
            <dd><OutcomeLabel outcome=r.outcome/></dd>
            <dt>"Error type"</dt>
            <dd>{r.error_type.clone().unwrap_or_else(|| "–".into())}</dd>
            <dt>"Hints"</dt>
            <dd>{r.hint.label()}</dd>
            <dt>"Attempt"</dt>
            <dd>{r.attempt}</dd>
            <dt>"Duration"</dt>
            <dd>{r.duration_s.map_or_else(|| "–".into(), format::seconds)}</dd>
            <dt>"Cost"</dt>
            <dd>{r.cost_usd.map_or_else(|| "–".into(), |c| format!("${c:.2}"))}</dd>
            <dt>"File recall"</dt>
            <dd>{format::pct(r.file_recall)}</dd>
            <dt>"Files changed"</dt>
            <dd>{r.files_changed.clone().map_or_else(|| "–".into(), |f| if f.is_empty() { "none".into() } else { f.join(", ") })}</dd>
            <dt>"Results"</dt>
            <dd>
                <TierBadge tier=r.tier/>" "<ProvenanceBadge provenance=r.provenance source=r.provenance_source.clone()/>
                {format!(" · benchmark {} · bundle ", r.benchmark_version)}
                <code title=r.bundle_id.clone()>{format::short(&r.bundle_id).to_owned()}</code>
            </dd>
        </dl>

        <h2>"Metrics"</h2>
        {if r.metrics.is_empty() {
            view! { <p class="empty">"No metrics were read for this run."</p> }.into_any()
        } else {
            view! {
                <table>
                    <caption>
                        {if expected.is_empty() {
                            "The values the checker read. This task's expected values are private."
                        } else {
                            "The values the checker read, and the expected values this task makes public."
                        }}
                    </caption>
                    <thead>
                        <tr>
                            <th scope="col">"Metric"</th>
                            <th scope="col">"Value"</th>
                            {(!expected.is_empty()).then(|| view! { <th scope="col">"Expected"</th> })}
                        </tr>
                    </thead>
                    <tbody>
                        {r.metrics.iter().map(|(name, value)| {
                            let exp = expected.iter().find(|e| &e.metric == name).map(|e| e.value.clone());
                            let show = !expected.is_empty();
                            view! {
                                <tr>
                                    <th scope="row"><code>{name.clone()}</code></th>
                                    <td class="num">{value.to_string()}</td>
                                    {show.then(|| view! { <td class="num">{exp.unwrap_or_else(|| "–".into())}</td> })}
                                </tr>
                            }
                        }).collect_view()}
                    </tbody>
                </table>
            }.into_any()
        }}

        {published.then(|| view! {
            <p class="notice">
                "This result was reported in the RExBench paper as a per-task fraction; the run was reconstructed "
                "from it, so there is no patch or log to show."
            </p>
        })}

        {imported.map(|source| view! {
            <p class="notice">
                "This run was executed and judged by another harness ("{source}"), not re-run here. Its stdout and "
                "stderr are the verifier's output, which holds the experiment's; the checker log gives the reward "
                "that decided the outcome. A patch is shown only where the job kept the agent's patch."
            </p>
        })}

        <h2 id="patch">"Patch"</h2>
        {if patch.is_empty() {
            view! { <p class="empty">"No patch was submitted with this run."</p> }.into_any()
        } else {
            patch.into_iter().map(|p| view! { <Diff text=p/> }).collect_view().into_any()
        }}

        <h2 id="logs">"Logs"</h2>
        {if logs.is_empty() {
            view! { <p class="empty">"No logs were submitted with this run."</p> }.into_any()
        } else {
            logs.into_iter().map(|l| view! { <Log text=l/> }).collect_view().into_any()
        }}
    }
}

fn artifact_link(t: &ArtifactText) -> String {
    format!("/artifacts/{}", t.digest)
}

/// The header of an artifact: its role, size, and the link to all of it.
#[component]
fn ArtifactHeader(text: ArtifactText) -> impl IntoView {
    let shown: usize = text.parts.iter().map(|(_, l)| l.len()).sum();
    view! {
        <p class="artifact-head">
            <strong>{role_label(&text.role)}</strong>
            {format!(" · {} · {} lines", format::bytes(text.size), text.total_lines)}
            " · "<a href=artifact_link(&text)>"whole file (plain text)"</a>
            {text.cut.then(|| view! {
                <span class="cut">{format!(" · showing {shown} of {} lines", text.total_lines)}</span>
            })}
        </p>
    }
}

fn role_label(role: &str) -> String {
    match role {
        "patch" => "Patch".into(),
        "agent_log" => "Agent log".into(),
        "stdout" => "Standard output".into(),
        "stderr" => "Standard error".into(),
        "checker_log" => "Checker log".into(),
        other => other.strip_prefix("x-").unwrap_or(other).to_owned(),
    }
}

/// A unified diff: file headers, hunk headers, added and removed lines. The `+` and
/// `−` in the text say what colour also says.
#[component]
fn Diff(text: ArtifactText) -> impl IntoView {
    let lines: Vec<(usize, String)> = text
        .parts
        .iter()
        .flat_map(|(start, lines)| lines.iter().enumerate().map(move |(i, l)| (start + i, l.clone())))
        .collect();
    view! {
        <div class="artifact">
            <ArtifactHeader text=text.clone()/>
            <pre class="diff" aria-label="Patch"><code>
                {lines.into_iter().map(|(n, line)| {
                    let class = if line.starts_with("diff ") || line.starts_with("--- ") || line.starts_with("+++ ") || line.starts_with("index ") {
                        "file"
                    } else if line.starts_with("@@") {
                        "hunk"
                    } else if line.starts_with('+') {
                        "add"
                    } else if line.starts_with('-') {
                        "del"
                    } else {
                        "ctx"
                    };
                    view! { <span class=format!("line {class}")><span class="ln" aria-hidden="true">{n}</span>{line}"\n"</span> }
                }).collect_view()}
            </code></pre>
        </div>
    }
}

/// Whether a log line reports an error (to highlight it).
fn is_error_line(line: &str) -> bool {
    const MARKS: [&str; 14] = [
        "Traceback",
        "Error",
        "error:",
        "ERROR",
        "Exception",
        "FAILED",
        "Killed",
        "Timeout",
        "timed out",
        "cannot open",
        "cannot access",
        "No such file",
        "Permission denied",
        "syntax error",
    ];
    MARKS.iter().any(|m| line.contains(m))
}

/// A log with line numbers; error lines highlighted and marked; a cut in the middle
/// of a long log said in words.
#[component]
fn Log(text: ArtifactText) -> impl IntoView {
    let parts = text.parts.clone();
    let total = text.total_lines;
    if total == 0 {
        return view! {
            <div class="artifact">
                <ArtifactHeader text=text.clone()/>
                <p class="empty">"Empty."</p>
            </div>
        }
        .into_any();
    }
    view! {
        <div class="artifact">
            <ArtifactHeader text=text.clone()/>
            <pre class="log" aria-label=role_label(&text.role)><code>
                {parts.iter().enumerate().map(|(p, (start, lines))| {
                    let gap = parts.get(p + 1).map(|(next, _)| next - (start + lines.len()));
                    let lines = lines.clone();
                    let start = *start;
                    view! {
                        {lines.into_iter().enumerate().map(|(i, line)| {
                            let error = is_error_line(&line);
                            view! {
                                <span class="line" class:err=error>
                                    <span class="ln" aria-hidden="true">{start + i}</span>
                                    {error.then(|| view! { <span class="mark" title="error line">"⚠ "</span> })}
                                    {line}"\n"
                                </span>
                            }
                        }).collect_view()}
                        {gap.filter(|g| *g > 0).map(|g| view! {
                            <span class="line gap">{format!("⋯ {g} lines not shown of {total} ⋯\n")}</span>
                        })}
                    }
                }).collect_view()}
            </code></pre>
        </div>
    }
    .into_any()
}
