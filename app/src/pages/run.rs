//! `/runs/{id}`: one run, with the evidence: outcome, metrics, the patch as a diff and
//! each log with line numbers.

use leptos::prelude::*;

use crate::islands::{LogTools, PatchTools};
use leptos_meta::{Meta, Title};

use store::{FoundBy, Outcome, ProvenanceKind, RunFinding};

use super::experiment::Experiment;
use super::outputs::{Artifacts, FilesTouched, PrivateNotice, TrajectoryCounts, outputs_words, role_label};
use super::reproduction::Reproduction;
use crate::components::{OutcomeLabel, ProvenanceBadge, TierBadge, loaded, param};
use crate::data::{ArtifactText, RunData};
use views::format;
use views::trajectory::{Clipped, Step, Trajectory, Usage};

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
    let error_step = data.trajectory.as_ref().and_then(|t| t.error_step);
    let imported =
        (r.provenance == ProvenanceKind::Imported).then(|| r.provenance_source.clone().unwrap_or_default());
    let outline = data.outline.clone();
    let readable = outline.readable;
    let reads_gold = outline.reads_gold;
    let has_patch = r.artifacts.iter().any(|a| a.role == "patch");
    let reproduced = super::reproduction::verdict(r.outcome, r.sampled, r.reproduction.as_ref());

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
            {r.regraded_from.map(|first| view! {
                <dt>"Regraded"</dt>
                <dd class="regraded">
                    "Harbor's verifier first judged this agent run "<OutcomeLabel outcome=first/>
                    "; a regrade verified the same outputs again and judged it "<OutcomeLabel outcome=r.outcome/>
                    ", the outcome that counts. One attempt: the agent ran once ("<a href="/about#regrades">"why"</a>")."
                </dd>
            })}
            <dt>"Error type"</dt>
            <dd>{r.error_type.clone().unwrap_or_else(|| "–".into())}</dd>
            <dt>"Hints"</dt>
            <dd>{r.hint.label()}</dd>
            <dt>"Attempt"</dt>
            <dd>{r.attempt}</dd>
            <dt>"Duration"</dt>
            <dd>{r.duration_s.map_or_else(|| "–".into(), format::seconds)}</dd>
            <dt>"Cost"</dt>
            <dd class="cost">
                {views::cost::run_cost(&r)}
                {r.cost_mark.map(|mark| view! {
                    <span class="cost-mark" data-mark=mark.as_str()>
                        <span aria-hidden="true">"✗ "</span>
                        <a href="/about#cost" title="a mark about cost alone, not about the run's success">{format!("cost {}: {}", mark.as_str(), mark.sentence())}</a>
                    </span>
                })}
            </dd>
            {r.task_folder.clone().map(|f| view! {
                <dt>"Task folder"</dt>
                <dd><code class="digest">{f}</code>" ("<a href="/about#task-identity">"what the harness ran"</a>")"</dd>
            })}
            <dt>"Tokens"</dt>
            <dd>{r.tokens.as_ref().map_or_else(|| "–".to_owned(), views::cost::tokens)}</dd>
            <dt>"File recall"</dt>
            <dd>{format::pct(r.file_recall)}</dd>
            <dt>"Files changed"</dt>
            <dd>{r.files_changed.clone().map_or_else(|| "–".into(), |f| if f.is_empty() { "none".into() } else { f.join(", ") })}</dd>
            {error_step.map(|step| view! {
                <dt>"Where it failed"</dt>
                <dd><a href=format!("#step-{step}")>{format!("Step {step} of the agent's trajectory")}</a></dd>
            })}
            {reproduced.map(|words| view! {
                <dt>"Reproduction"</dt>
                <dd>
                    {if r.reproduction.is_some() {
                        view! { <a href="#reproduction">{words}</a> }.into_any()
                    } else {
                        view! { <span>{words}</span> }.into_any()
                    }}
                </dd>
            })}
            <dt>"Outputs"</dt>
            <dd>{outputs_words(outline.outputs, readable)}</dd>
            <dt>"Results"</dt>
            <dd>
                <TierBadge tier=r.tier/>" "<ProvenanceBadge provenance=r.provenance source=r.provenance_source.clone()/>
                {format!(" · benchmark {} · bundle ", r.benchmark_version)}
                <code title=r.bundle_id.clone()>{format::short(&r.bundle_id).to_owned()}</code>
            </dd>
        </dl>

        {(!readable && !r.artifacts.is_empty()).then(|| view! { <PrivateNotice bundle_id=r.bundle_id.clone()/> })}

        {(!r.findings.is_empty()).then(|| view! {
            <Findings findings=r.findings.clone() texts=data.texts.clone() success=r.outcome == Outcome::Success/>
        })}

        {r.reproduction.clone().map(|reproduction| view! {
            <Reproduction reproduction=reproduction submitted=r.outcome submitted_metrics=r.metrics.clone() readable=readable reads_gold=reads_gold/>
        })}

        <h2>"Metrics"</h2>
        {if r.metrics_withheld {
            view! {
                <p class="empty">
                    "This task's check is private: what it read is its gold, so this run's metrics are its submitter's "
                    "and the maintainers' to read. Its outcome above is public."
                </p>
            }.into_any()
        } else if r.metrics.is_empty() {
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
        {if !has_patch {
            view! { <p class="empty">"No patch was submitted with this run."</p> }.into_any()
        } else {
            view! {
                {(!outline.files.is_empty()).then(|| view! { <FilesTouched outline=outline.clone()/> })}
                {patch.into_iter().map(|p| view! { <Diff text=p/> }).collect_view()}
            }.into_any()
        }}

        {outline.experiment.clone().map(|experiment| view! {
            <Experiment outline=experiment processes=data.processes.clone()/>
        })}

        {data.trajectory.map(|t| view! { <TrajectoryView t=t/> })}
        {outline.trajectory.clone().filter(|_| !readable).map(|stats| view! {
            <h2 id="trajectory">"Agent trajectory"</h2>
            <p>"The trajectory counted; its messages, tool calls and observations are private."</p>
            <TrajectoryCounts stats=stats/>
        })}
        {data.trajectory_problem.map(|problem| view! {
            <h2 id="trajectory">"Agent trajectory"</h2>
            <p class="notice">
                "This run carries a trajectory, but it cannot be shown step by step ("{problem}
                "); it is shown as plain text with the logs below."
            </p>
        })}

        {readable.then(|| view! {
            <h2 id="logs">"Logs"</h2>
            {if logs.is_empty() {
                view! { <p class="empty">"No logs were submitted with this run."</p> }.into_any()
            } else {
                logs.into_iter().map(|l| view! { <Log text=l/> }).collect_view().into_any()
            }}
        })}

        {(!r.artifacts.is_empty()).then(|| view! {
            <h2 id="outputs">"Outputs, checkable"</h2>
            <Artifacts artifacts=r.artifacts.clone() readable=readable reads_gold=reads_gold/>
        })}
    }
}

/// The run's integrity findings, each with its evidence linked: to the line on this
/// page where it is shown, else to the whole artifact.
#[component]
fn Findings(findings: Vec<RunFinding>, texts: Vec<ArtifactText>, success: bool) -> impl IntoView {
    let evidence = move |f: &RunFinding| {
        let role = f.artifact.clone()?;
        // The outputs are private to this reader: where the evidence is, without a link.
        if f.withheld {
            let label = match f.line {
                Some(n) => format!("{}, line {n}", role_label(&role)),
                None => role_label(&role),
            };
            return Some(view! { <span>{label}</span> }.into_any());
        }
        // A trajectory's findings name their step, which the page shows by its anchor.
        if role == views::trajectory::ROLE
            && let Some(step) = f.message.strip_prefix("step ").and_then(|m| m.split(':').next())
            && step.parse::<u64>().is_ok()
        {
            let href = format!("#step-{step}");
            return Some(view! { <a href=href>{format!("Trajectory, step {step}")}</a> }.into_any());
        }
        let text = texts.iter().find(|t| t.role == role);
        let label = match f.line {
            Some(n) => format!("{}, line {n}", role_label(&role)),
            None => role_label(&role),
        };
        let shown = |n: usize| {
            text.is_some_and(|t| t.parts.iter().any(|(start, l)| (*start..start + l.len()).contains(&n)))
        };
        let href = match (f.line.and_then(|n| usize::try_from(n).ok()), text) {
            (Some(n), Some(_)) if shown(n) => format!("#{}", line_anchor(&role, n)),
            (_, Some(t)) => artifact_link(t),
            (_, None) => return Some(view! { <span>{label}</span> }.into_any()),
        };
        Some(view! { <a href=href>{label}</a> }.into_any())
    };
    let flagged = findings.iter().any(RunFinding::flags);
    view! {
        <h2 id="findings">"Integrity findings"</h2>
        <p class="notice">
            {if success && flagged {
                "This success is flagged: a check found signs that the result may not come from running the \
                 agent's code. The outcome stands as the checker judged it; the findings say why to doubt it, \
                 and the leaderboard's strict view counts it as a failure."
            } else if success {
                "A check found signs that the result may not come from running the agent's code, and a \
                 maintainer reviewed each finding and dismissed it: this success is not flagged."
            } else {
                "A check found signs of a result produced without doing the work; this run did not succeed anyway."
            }}
            " What each check looks for is on the "<a href="/about#integrity">"about page"</a>"."
        </p>
        <table class="findings">
            <caption>"Findings about this run, with where the evidence is"</caption>
            <thead>
                <tr>
                    <th scope="col">"Check"</th>
                    <th scope="col">"What it saw"</th>
                    <th scope="col">"Evidence"</th>
                    <th scope="col">"Found by"</th>
                    <th scope="col">"Review"</th>
                </tr>
            </thead>
            <tbody>
                {findings.iter().map(|f| view! {
                    <tr id=format!("finding-{}", f.id) class:dismissed=!f.flags()>
                        <th scope="row"><code>{f.check.clone()}</code></th>
                        <td>{f.message.clone()}</td>
                        <td>{evidence(f).unwrap_or_else(|| view! { <span>"–"</span> }.into_any())}</td>
                        <td>{match f.found_by {
                            FoundBy::Submitter => "the submitter, signed in the bundle",
                            FoundBy::Server => "this server",
                        }}</td>
                        <td>{match &f.review {
                            None => view! { <span class="muted">"not reviewed"</span> }.into_any(),
                            Some(r) => view! {
                                <span class=format!("badge review-{}", r.verdict.as_str())>{r.verdict.as_str()}</span>
                                " "{r.note.clone()}
                                <span class="muted small">{format!(" (reviewed {})", r.at)}</span>
                            }.into_any(),
                        }}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

/// The anchor of line `n` of the artifact `role` as this page shows it.
fn line_anchor(role: &str, n: usize) -> String {
    format!("L-{role}-{n}")
}

fn artifact_link(t: &ArtifactText) -> String {
    format!("/artifacts/{}", t.digest)
}

/// The header of an artifact: its role, size, and the link to all of it.
#[component]
fn ArtifactHeader(text: ArtifactText) -> impl IntoView {
    let shown = text.shown_lines();
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

/// A unified diff: file headers, hunk headers, added and removed lines, each as
/// `benchmark::diff` read it by the hunks' counts (the page only draws the kinds). The
/// `+` and `−` in the text say what colour also says.
#[component]
fn Diff(text: ArtifactText) -> impl IntoView {
    use store::DiffLine;
    let lines: Vec<(usize, String)> = text
        .parts
        .iter()
        .flat_map(|(start, lines)| lines.iter().enumerate().map(move |(i, l)| (start + i, l.clone())))
        .collect();
    let kinds = text.kinds.clone();
    view! {
        <div class="artifact">
            <ArtifactHeader text=text.clone()/>
            <PatchTools>
            <pre class="diff" aria-label="Patch"><code>
                {lines.into_iter().enumerate().map(|(i, (n, line))| {
                    let class = match kinds.get(i) {
                        Some(DiffLine::FileStart) => "file file-head",
                        Some(DiffLine::FileHeader) => "file",
                        Some(DiffLine::Hunk) => "hunk",
                        Some(DiffLine::Added) => "add",
                        Some(DiffLine::Removed) => "del",
                        Some(DiffLine::Context | DiffLine::Text) | None => "ctx",
                    };
                    view! { <span class=format!("line {class}") id=line_anchor("patch", n)><span class="ln" aria-hidden="true">{n}</span>{line}"\n"</span> }
                }).collect_view()}
            </code></pre>
            </PatchTools>
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
    let role = text.role.clone();
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
            <LogTools>
            <pre class="log" aria-label=role_label(&text.role)><code>
                {parts.iter().enumerate().map(|(p, (start, lines))| {
                    let gap = parts.get(p + 1).map(|(next, _)| next - (start + lines.len()));
                    let lines = lines.clone();
                    let start = *start;
                    view! {
                        {lines.into_iter().enumerate().map(|(i, line)| {
                            let error = is_error_line(&line);
                            view! {
                                <span class="line" class:err=error id=line_anchor(&role, start + i)>
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
            </LogTools>
        </div>
    }
    .into_any()
}

/// The agent's trajectory, step by step: who acted, what it said, each tool call and
/// what came back. Long texts are folded and cut, with the whole file one link away.
#[component]
fn TrajectoryView(t: Trajectory) -> impl IntoView {
    let whole = format!("/artifacts/{}", t.digest);
    let shown = t.steps.len();
    let about = [
        (!t.agent.is_empty()).then(|| t.agent.clone()),
        t.schema_version.clone(),
        Some(format!(
            "{} step{}",
            shown + t.steps_not_shown,
            if shown + t.steps_not_shown == 1 { "" } else { "s" }
        )),
        Some(format::bytes(t.size)),
        (!t.totals.is_empty()).then(|| usage_words(&t.totals)),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" · ");
    view! {
        <h2 id="trajectory">"Agent trajectory"</h2>
        <p class="artifact-head">
            {about}" · "<a href=whole.clone()>"whole trajectory (plain text)"</a>
        </p>
        {t.error_step.map(|s| view! {
            <p class="notice">
                "The run's error first shows in "<a href=format!("#step-{s}")>{format!("step {s}")}</a>", marked ⚠ below."
            </p>
        })}
        <ol class="trajectory">
            {t.steps.into_iter().map(|s| view! { <StepView step=s whole=whole.clone()/> }).collect_view()}
        </ol>
        {(t.steps_not_shown > 0).then(|| view! {
            <p class="cut">
                {format!("{} more steps are not shown here; ", t.steps_not_shown)}
                <a href=whole.clone()>"the whole trajectory"</a>" has them."
            </p>
        })}
    }
}

fn usage_words(u: &Usage) -> String {
    let tokens = [
        u.prompt_tokens.map(|n| format!("{n} prompt")),
        u.completion_tokens.map(|n| format!("{n} completion")),
        u.cached_tokens.map(|n| format!("{n} cached")),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>();
    let tokens = (!tokens.is_empty()).then(|| format!("tokens: {}", tokens.join(", ")));
    [tokens, u.cost_usd.map(|c| format!("${c:.4}"))].into_iter().flatten().collect::<Vec<_>>().join(" · ")
}

#[component]
fn StepView(step: Step, whole: String) -> impl IntoView {
    let source = match step.source.as_str() {
        "agent" => "Agent".to_owned(),
        "user" => "User".to_owned(),
        "system" => "System".to_owned(),
        other => other.to_owned(),
    };
    let head = [
        step.model.clone(),
        step.timestamp.clone(),
        (!step.usage.is_empty()).then(|| usage_words(&step.usage)),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" · ");
    let class = format!("step {}", if step.error { "err" } else { "" });
    view! {
        <li id=format!("step-{}", step.id) class=class>
            <p class="step-head">
                {step.error.then(|| view! { <span class="mark" title="the run's error first shows here">"⚠ "</span> })}
                <strong>{format!("Step {} · {source}", step.id)}</strong>
                {(!head.is_empty()).then(|| view! { <span class="muted">{format!(" · {head}")}</span> })}
            </p>
            {(!step.message.text.is_empty()).then(|| view! { <Folded label="Message" text=step.message whole=whole.clone() open=true/> })}
            {step.reasoning.map(|r| view! { <Folded label="Reasoning" text=r whole=whole.clone() open=false/> })}
            {step.tool_calls.into_iter().map(|c| view! {
                <Folded label=format!("Tool call {} · {}", c.function, c.id) text=c.arguments whole=whole.clone() open=true/>
            }).collect_view()}
            {step.observations.into_iter().map(|o| {
                let label = o.call_id.map_or_else(|| "Observation".to_owned(), |c| format!("Observation of {c}"));
                view! { <Folded label=label text=o.content whole=whole.clone() open=false/> }
            }).collect_view()}
        </li>
    }
}

/// A text of the trajectory: short ones open, long ones folded; a cut says so and links
/// to the whole file.
#[component]
fn Folded(#[prop(into)] label: String, text: Clipped, whole: String, open: bool) -> impl IntoView {
    let cut = text.cut();
    let open = open && text.lines <= 12 && text.chars <= 800;
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let size = format!(" ({}, {})", plural(text.lines, "line"), plural(text.chars, "character"));
    view! {
        <details class="step-part" open=open>
            <summary>{label}<span class="muted">{size}</span></summary>
            <pre><code>{text.text}</code></pre>
            {cut.then(|| view! {
                <p class="cut">"Cut here; "<a href=whole>"the whole trajectory"</a>" has the rest."</p>
            })}
        </details>
    }
}

// What this page reads, through its server function (thin: its arguments → the view).

#[server(prefix = "/sfn", endpoint = "run")]
pub async fn load_run(id: String) -> Result<RunData, crate::error::AppError> {
    let ctx = crate::data::context()?;
    Ok(views::run::page(&ctx.store, &ctx.catalog, &ctx.reader, &id).await?)
}
