//! A sampled run's reproduction on its run page: how the maintainers' re-run of the
//! submitted patch ended, beside how the submission says it ended, with the re-run's
//! own outputs (readable where the run's are).

use leptos::prelude::*;

use store::{Outcome, RunReproduction};

use super::outputs::Artifacts;
use crate::components::OutcomeLabel;
use views::format;

/// The facts line: what came of the run's place in its submission's sample.
pub(super) fn verdict(
    submitted: Outcome,
    sampled: bool,
    reproduction: Option<&RunReproduction>,
) -> Option<String> {
    match reproduction {
        Some(r) => Some(format::reproduction_words(submitted, r.outcome, r.held)),
        None if sampled => Some("sampled for reproduction; not re-run yet".to_owned()),
        None => None,
    }
}

#[component]
pub(super) fn Reproduction(
    reproduction: RunReproduction,
    submitted: Outcome,
    submitted_metrics: std::collections::BTreeMap<String, f64>,
    readable: bool,
    reads_gold: bool,
) -> impl IntoView {
    let r = reproduction;
    let class = if r.held { "notice reproduced held" } else { "notice reproduced differed" };
    let words = format::reproduction_words(submitted, r.outcome, r.held);
    let names: std::collections::BTreeSet<String> =
        submitted_metrics.keys().chain(r.metrics.keys()).cloned().collect();
    let gpus = if r.gpus > 0 {
        format!(", {} GPU{}", r.gpus, if r.gpus == 1 { "" } else { "s" })
    } else {
        String::new()
    };
    view! {
        <h2 id="reproduction">"Reproduction"</h2>
        <p class=class>
            <strong>{words}</strong>
            ". The maintainers re-ran this run's submitted patch with the public runner, as part of its submission's "
            "sample; a different final success is an integrity finding ("<code>"not-reproduced"</code>")."
        </p>
        <dl class="facts">
            <dt>"Re-run outcome"</dt>
            <dd><OutcomeLabel outcome=r.outcome/></dd>
            {r.heldout.clone().map(|h| view! {
                <dt>"Held out"</dt>
                <dd class=if h.generalised { "repro held" } else { "repro differed" }>
                    {if h.generalised {
                        "a success on a held-out variant of its task: it generalised"
                    } else {
                        "no success on a held-out variant of its task: it did not generalise (not-generalised)"
                    }}
                    " · variant "<code title=h.variant.clone()>{format::short(&h.variant).to_owned()}</code>
                    " ("<a href="/about#heldout">"what this is"</a>")"
                </dd>
            })}
            <dt>"Error type"</dt>
            <dd>{r.error_type.clone().unwrap_or_else(|| "–".into())}</dd>
            <dt>"Duration"</dt>
            <dd>{r.duration_s.map_or_else(|| "the maintainers' (this task's check is private)".to_owned(), format::seconds)}</dd>
            <dt>"Executor"</dt>
            <dd>{format!("{} · {}{gpus}", r.executor, r.hardware)}</dd>
            <dt>"Reproduction"</dt>
            <dd>
                <a href=format!("/api/v1/submissions/{}/envelope", r.bundle_id)>
                    <code title=r.bundle_id.clone()>{format::short(&r.bundle_id).to_owned()}</code>
                </a>
                {format!(" · received {}", r.received_at)}
            </dd>
        </dl>
        {r.metrics_withheld.then(|| view! {
            <p class="empty">
                "This task's check is private: the values it read on the re-run are the maintainers' to read."
            </p>
        })}
        {(!names.is_empty()).then(|| view! {
            <table>
                <caption>"The values the checker read: as submitted, and on the re-run."</caption>
                <thead>
                    <tr>
                        <th scope="col">"Metric"</th>
                        <th scope="col">"Submitted"</th>
                        <th scope="col">"Re-run"</th>
                    </tr>
                </thead>
                <tbody>
                    {names.into_iter().map(|name| {
                        let show = |m: &std::collections::BTreeMap<String, f64>| m.get(&name).map_or_else(|| "–".to_owned(), f64::to_string);
                        view! {
                            <tr>
                                <th scope="row"><code>{name.clone()}</code></th>
                                <td class="num">{show(&submitted_metrics)}</td>
                                <td class="num">{show(&r.metrics)}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        })}
        {if r.outputs_withheld {
            view! {
                <p class="empty rerun-withheld">
                    "This task's check is private: what the re-run made beside its verdict (its outputs, with their sizes "
                    "and digests, and how long it took) is the maintainers' to read, for a patch could shape any of them "
                    "to signal what it read on their machine ("<a href="/about#reproductions">"why"</a>")."
                </p>
            }.into_any()
        } else {
            view! {
                <Artifacts artifacts=r.artifacts readable=readable reads_gold=reads_gold whose="The re-run's outputs" class="rerun-artifacts"/>
            }.into_any()
        }}
    }
}
