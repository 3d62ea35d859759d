//! What a run's experiment did, from its provenance record: in counts for everyone, and
//! process by process (a collapsible tree: which command ran, how long, how it ended,
//! what it read and wrote) for a reader of the run's outputs.

use std::collections::BTreeMap;

use leptos::prelude::*;

use crate::data::{ExperimentOutline, ProcessNode};
use views::format;

/// Levels of the tree shown nested; deeper processes are listed at that level.
const DEPTH: usize = 24;
/// Levels open when the page loads.
const OPEN: usize = 2;

#[component]
pub(super) fn Experiment(outline: ExperimentOutline, processes: Vec<ProcessNode>) -> impl IntoView {
    let shown = processes.len();
    let summary = match (&outline.tracer, &outline.untraced) {
        (Some(tracer), _) => format!(
            "Traced ({tracer}): {} process{} in {}.",
            outline.processes,
            if outline.processes == 1 { "" } else { "es" },
            format::seconds(outline.duration_ms as f64 / 1000.0)
        ),
        (None, Some(why)) => format!("Not traced: {why}. No check on what it did could run."),
        (None, None) => "Not traced.".to_owned(),
    };
    let killed = (outline.killed > 0).then(|| {
        format!(
            "{} process{} outlived the task's command and {} killed when the run ended.",
            outline.killed,
            if outline.killed == 1 { "" } else { "es" },
            if outline.killed == 1 { "was" } else { "were" }
        )
    });
    let mut children: BTreeMap<Option<u32>, Vec<ProcessNode>> = BTreeMap::new();
    for p in processes {
        children.entry(p.parent).or_default().push(p);
    }
    let roots = children.remove(&None).unwrap_or_default();
    view! {
        <h2 id="experiment">"What the experiment did"</h2>
        <p>{summary}</p>
        {killed.map(|k| view! { <p>{k}</p> })}
        {outline.interrupted.map(|how| view! {
            <p class="notice">"Tracing stopped before the experiment ended: "{how}". What it did after is unrecorded."</p>
        })}
        {(shown > 0).then(|| view! {
            <p class="hint">
                "Each process with its command, how long it ran and how it ended, and the files under the working copy "
                "it read (←) and wrote (→). "
                {(shown < outline.processes).then(|| format!("The first {shown} of {} are listed.", outline.processes))}
            </p>
            <ul class="process-tree">{roots.into_iter().map(|p| node(p, &mut children, 0)).collect_view()}</ul>
        })}
    }
}

/// One process and, nested, the ones it started.
fn node(p: ProcessNode, children: &mut BTreeMap<Option<u32>, Vec<ProcessNode>>, depth: usize) -> AnyView {
    let kids = children.remove(&Some(p.id)).unwrap_or_default();
    let took = p.duration_ms.map_or_else(
        || "still running when the trace ended".to_owned(),
        |ms| format::seconds(ms as f64 / 1000.0),
    );
    let ended = match (&p.exit, p.killed) {
        (_, true) => "killed when the run ended".to_owned(),
        (Some(exit), _) => exit.clone(),
        (None, _) => "end unknown".to_owned(),
    };
    let failed = !p.killed && p.exit.as_deref().is_some_and(|e| e != "exit 0");
    let files = (!p.read.is_empty() || !p.wrote.is_empty()).then(|| {
        view! {
            <ul class="process-files">
                {p.read.iter().map(|f| view! { <li>"← "<code>{f.clone()}</code></li> }).collect_view()}
                {p.wrote.iter().map(|f| view! { <li>"→ "<code>{f.clone()}</code></li> }).collect_view()}
            </ul>
        }
    });
    // Past the nesting shown, the rest of the subtree is listed beside it.
    let (nested, beside): (Vec<ProcessNode>, Vec<ProcessNode>) =
        if depth < DEPTH { (kids, Vec::new()) } else { (Vec::new(), kids) };
    let nested: Vec<AnyView> = nested.into_iter().map(|c| node(c, children, depth + 1)).collect();
    let beside: Vec<AnyView> = beside.into_iter().map(|c| node(c, children, depth)).collect();
    let line = view! {
        <span class="process-id">{format!("#{}", p.id)}</span>" "
        <code>{p.command}</code>
        <span class=if failed { "process-end failed" } else { "process-end" }>{format!(" — {took}, {ended}")}</span>
    };
    let item = if nested.is_empty() && files.is_none() {
        view! { <li>{line}</li> }.into_any()
    } else {
        view! {
            <li>
                <details open=depth < OPEN>
                    <summary>{line}</summary>
                    {files}
                    {(!nested.is_empty()).then(|| view! { <ul class="process-tree">{nested}</ul> })}
                </details>
            </li>
        }
        .into_any()
    };
    view! { {item}{beside} }.into_any()
}
