//! What a run page shows of a run's outputs to everyone, whoever may read them: who may
//! read them, the files the patch touched with lines counted, each artifact's role,
//! size and SHA-256 (what the signed manifest commits to, with how to check a copy),
//! and the trajectory's statistics. None of it quotes the outputs.

use leptos::prelude::*;
use store::{ArtifactRef, Outputs};

use crate::data::{FileLines, Outline};
use views::format;
use views::trajectory::{TOOLS_NAMED, TrajectoryStats};

/// Says who may read the run's outputs, where this reader may not.
#[component]
pub(super) fn PrivateNotice(bundle_id: String) -> impl IntoView {
    view! {
        <section class="notice private-outputs" aria-labelledby="outputs-private">
            <h2 id="outputs-private">"The outputs of this run are private"</h2>
            <p>
                "RExBench's dataset terms forbid making agent outputs public, to keep the tasks out of training data. "
                "So this run's patch, logs and trajectory are shown only to the submitter who signed its bundle and to "
                "the benchmark's maintainers. Everything else is public: the outcome above (and the metrics, where the "
                "task's check is public), the files the patch touched, each output's size and SHA-256 below, and the "
                "integrity findings by check and place."
            </p>
            <p>
                "Each SHA-256 is what the submission's signed manifest commits to: whoever holds a copy of an output "
                "can check it with "<code>"sha256sum FILE"</code>", or check the whole bundle with "
                <code>"rexbench verify BUNDLE"</code>" against "
                <a href=format!("/api/v1/submissions/{bundle_id}/envelope")>"its signed envelope"</a>"."
            </p>
        </section>
    }
}

/// The files the patch touched, each with its lines added and removed.
#[component]
pub(super) fn FilesTouched(outline: Outline) -> impl IntoView {
    let Outline { files, files_cut, .. } = outline;
    let (added, removed) = files.iter().fold((0, 0), |(a, r), f| (a + f.added, r + f.removed));
    let summary = format!(
        "{} file{} · +{added} −{removed} lines{}",
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        if files_cut { " in the part of the patch read (it is longer)" } else { "" }
    );
    view! {
        <div class="table-wrap">
            <table class="files-touched">
                <caption>{format!("Files the patch touches: {summary}")}</caption>
                <thead>
                    <tr>
                        <th scope="col">"File"</th>
                        <th scope="col" class="num">"Added"</th>
                        <th scope="col" class="num">"Removed"</th>
                    </tr>
                </thead>
                <tbody>
                    {files.into_iter().map(|f: FileLines| view! {
                        <tr>
                            <th scope="row"><code>{f.path}</code></th>
                            {if f.binary {
                                view! { <td class="num" colspan="2">"binary"</td> }.into_any()
                            } else {
                                view! {
                                    <td class="num add">{format!("+{}", f.added)}</td>
                                    <td class="num del">{format!("−{}", f.removed)}</td>
                                }.into_any()
                            }}
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// Each artifact: its role, size and SHA-256, linked to its content where the reader
/// may read it. `whose` says whose outputs they are in the caption ("The run's outputs
/// as submitted", "The re-run's outputs"); `class` names the table.
#[component]
pub(super) fn Artifacts(
    artifacts: Vec<ArtifactRef>,
    readable: bool,
    /// The reader is a maintainer: what only maintainers read is theirs.
    reads_gold: bool,
    #[prop(default = "The run's outputs as submitted")] whose: &'static str,
    #[prop(default = "artifacts")] class: &'static str,
) -> impl IntoView {
    let caption = if readable {
        format!("{whose}: each one's size and SHA-256, linked to its plain text.")
    } else {
        format!("{whose}: each one's size and SHA-256 (the content is private).")
    };
    view! {
        <div class="table-wrap">
            <table class=class>
                <caption>{caption}</caption>
                <thead>
                    <tr>
                        <th scope="col">"Output"</th>
                        <th scope="col" class="num">"Size"</th>
                        <th scope="col">"SHA-256"</th>
                    </tr>
                </thead>
                <tbody>
                    {artifacts.into_iter().map(|a| view! {
                        <tr>
                            <th scope="row">{role_label(&a.role)}</th>
                            <td class="num">{format::bytes(a.size)}</td>
                            <td>
                                {if readable && (reads_gold || !a.maintainers_only) {
                                    view! { <a href=format!("/artifacts/{}", a.digest)><code class="digest">{a.digest.clone()}</code></a> }.into_any()
                                } else if readable {
                                    view! {
                                        <code class="digest">{a.digest.clone()}</code>
                                        " "<span class="note">"(the maintainers' only: it shows what the task's private check expects)"</span>
                                    }.into_any()
                                } else {
                                    view! { <code class="digest">{a.digest.clone()}</code> }.into_any()
                                }}
                            </td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// A trajectory counted: steps, tool calls by tool, tokens, cost and time.
#[component]
pub(super) fn TrajectoryCounts(stats: TrajectoryStats) -> impl IntoView {
    let by_source =
        stats.steps_by_source.iter().map(|(who, n)| format!("{n} by {who}")).collect::<Vec<_>>().join(", ");
    let tokens = [
        stats.prompt_tokens.map(|n| format!("{n} prompt")),
        stats.completion_tokens.map(|n| format!("{n} completion")),
        stats.cached_tokens.map(|n| format!("{n} cached")),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ");
    let tools = stats.tools_by_use();
    view! {
        <dl class="facts">
            <dt>"Steps"</dt>
            <dd>{stats.steps}{(!by_source.is_empty()).then(|| format!(" ({by_source})"))}</dd>
            <dt>"Tool calls"</dt>
            <dd>{stats.tool_calls}</dd>
            <dt>"Tokens"</dt>
            <dd>{if tokens.is_empty() { "–".to_owned() } else { tokens }}</dd>
            <dt>"Cost (as the trajectory says)"</dt>
            <dd>{format::usd(stats.cost_usd)}</dd>
            <dt>"First to last step"</dt>
            <dd>{stats.duration_s.map_or_else(|| "–".into(), format::seconds)}</dd>
        </dl>
        {(!tools.is_empty()).then(|| view! {
            <div class="table-wrap">
                <table class="tool-calls">
                    <caption>{format!("Tool calls by tool (at most {TOOLS_NAMED} tools are named)")}</caption>
                    <thead>
                        <tr><th scope="col">"Tool"</th><th scope="col" class="num">"Calls"</th></tr>
                    </thead>
                    <tbody>
                        {tools.into_iter().map(|(tool, n)| view! {
                            <tr><th scope="row"><code>{tool}</code></th><td class="num">{n}</td></tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
        })}
    }
}

/// What the page says of who may read the outputs, in a word.
pub(super) fn outputs_words(outputs: Outputs, readable: bool) -> &'static str {
    match (outputs, readable) {
        (Outputs::Public, _) => "public: anyone may read them",
        (Outputs::Private, true) => "private: shown to you as the bundle's submitter or a maintainer",
        (Outputs::Private, false) => "private: only the bundle's submitter and the maintainers may read them",
    }
}

/// What a page calls an artifact of this role.
pub(super) fn role_label(role: &str) -> String {
    match role {
        "patch" => "Patch".into(),
        "agent_log" => "Agent log".into(),
        "stdout" => "Standard output".into(),
        "stderr" => "Standard error".into(),
        "checker_log" => "Checker log".into(),
        other => other.strip_prefix("x-").unwrap_or(other).to_owned(),
    }
}
