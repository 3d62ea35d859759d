//! How runs failed and which successes are flagged: the tables the agent, task and
//! failures pages share.

use leptos::prelude::*;
use store::Outcome;
use views::format;

use super::OutcomeLabel;

/// One way runs failed: its outcome, error type, how many runs ended so and, where
/// several agents are counted, how many of them.
#[derive(Debug, Clone)]
pub(crate) struct FailureRow {
    pub outcome: Outcome,
    pub error_type: Option<String>,
    pub agents: Option<i64>,
    pub runs: i64,
}

/// "How runs failed": a table of the ways runs failed, or a line saying none did.
#[component]
pub(crate) fn FailureTable(caption: &'static str, rows: Vec<FailureRow>) -> impl IntoView {
    if rows.is_empty() {
        return view! { <h2>"How runs failed"</h2><p class="empty">"No failed runs."</p> }.into_any();
    }
    let by_agent = rows.iter().any(|r| r.agents.is_some());
    view! {
        <h2>"How runs failed"</h2>
        <table>
            <caption>{caption}</caption>
            <thead>
                <tr>
                    <th scope="col">"Outcome"</th>
                    <th scope="col">"Error type"</th>
                    {by_agent.then(|| view! { <th scope="col">"Agents"</th> })}
                    <th scope="col">"Runs"</th>
                </tr>
            </thead>
            <tbody>
                {rows.into_iter().map(|f| view! {
                    <tr>
                        <td><OutcomeLabel outcome=f.outcome/></td>
                        <td>{f.error_type.unwrap_or_else(|| "–".into())}</td>
                        {by_agent.then(|| view! { <td class="num">{f.agents.unwrap_or_default()}</td> })}
                        <td class="num">{f.runs}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
    .into_any()
}

/// Flagged successes, one row per run with the checks that flag it and who found each:
/// the agent page's list (`agents` false) and the failure explorer's (naming the agent).
#[component]
pub(crate) fn FlaggedRuns(
    caption: String,
    records: Vec<store::FindingRecord>,
    names: views::TaskNames,
    agents: bool,
) -> impl IntoView {
    // The records come ordered by run: each run's findings are consecutive.
    let mut runs: Vec<(store::FindingRecord, Vec<store::RunFinding>)> = Vec::new();
    for r in records {
        match runs.last_mut() {
            Some((first, findings)) if first.run_id == r.run_id => findings.push(r.finding),
            _ => {
                let finding = r.finding.clone();
                runs.push((r, vec![finding]));
            }
        }
    }
    let name_of = move |task: &store::TaskId| names.get(task).cloned().unwrap_or_else(|| task.to_string());
    view! {
        <div class="table-wrap">
            <table class="flagged-runs">
                <caption>{caption}</caption>
                <thead>
                    <tr>
                        <th scope="col">"Run"</th>
                        {agents.then(|| view! { <th scope="col">"Agent"</th> })}
                        <th scope="col">"Task"</th>
                        <th scope="col">"Hints"</th>
                        <th scope="col">"Attempt"</th>
                        <th scope="col">"Findings"</th>
                    </tr>
                </thead>
                <tbody>
                    {runs.into_iter().map(|(run, findings)| view! {
                        <tr>
                            <td><a href=format!("/runs/{}#findings", run.run_id)>{format!("#{}", run.run_id)}</a></td>
                            {agents.then(|| view! {
                                <td><a href=format!("/agents/{}", format::segment(&run.agent_id))>{run.agent_name.clone()}</a></td>
                            })}
                            <td>{name_of(&run.task)}</td>
                            <td>{run.hint.label()}</td>
                            <td class="num">{run.attempt}</td>
                            <td>
                                {findings.into_iter().map(|f| view! {
                                    <span class="finding">
                                        <code>{f.check.clone()}</code>
                                        <span class="muted small">{match f.found_by {
                                            store::FoundBy::Submitter => " (submitter",
                                            store::FoundBy::Server => " (server",
                                        }}{match f.review.as_ref().map(|r| r.verdict) {
                                            Some(store::Review::Confirmed) => ", confirmed)",
                                            Some(store::Review::Dismissed) => ", dismissed)",
                                            None => ")",
                                        }}</span>
                                    </span>
                                }).collect_view()}
                            </td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}
