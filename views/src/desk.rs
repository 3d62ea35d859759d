//! The maintainers' desk as a view: what waits on them (key requests, findings to review,
//! the reproduction queue) and what they keep (task sets, held-out variants), each list
//! cut by the one [`Window`], its page in the URL. Only a maintainer reads it: the page
//! refuses anyone else before it asks for this.

use serde::{Deserialize, Serialize};

use crate::key_requests::KeyRequestView;
use crate::query::{Params, Strictness, Window};

/// Rows of each of the desk's lists a page.
pub const PER_PAGE: usize = 20;

/// Which page of each list, read leniently from the desk's URL (`requests`, `findings`,
/// `queue`: each a page number from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeskQuery {
    pub requests: Window,
    pub findings: Window,
    pub queue: Window,
}

impl DeskQuery {
    /// The pages `get` names; a bad or missing page is the first.
    pub fn read<G: Fn(&str) -> Option<String>>(get: G) -> DeskQuery {
        let page = |name: &'static str| {
            let one = |n: &str| (n == "page").then(|| get(name)).flatten();
            Window::pages(&Params::new(one, Strictness::Lenient), PER_PAGE, None).unwrap_or(Window {
                page: 1,
                size: PER_PAGE,
                before: None,
            })
        };
        DeskQuery { requests: page("requests"), findings: page("findings"), queue: page("queue") }
    }
}

/// A list's page: which, of how many.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageOf {
    pub page: usize,
    pub pages: usize,
    pub total: usize,
}

/// A submission's findings that wait for review, together: each with its run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubmissionFindings {
    pub bundle_id: String,
    pub agent_id: String,
    pub agent_name: String,
    pub findings: Vec<store::FindingRecord>,
}

/// A sampled run waiting to be re-run, with the command that re-runs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueRow {
    pub run: store::QueuedRun,
    /// `pending`, `escalated` (carried on to more of the submission's runs), `overdue`
    /// (sampled more than a week ago and not re-run) or `retrying` (ended `infra_error`).
    pub state: String,
    pub command: String,
}

/// A task set a bundle may name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSetRow {
    pub digest: String,
    pub name: String,
    pub version: String,
    /// `cards` for the task cards' own; else when it was registered.
    pub registered_at: Option<String>,
    pub note: String,
}

/// Everything the desk shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeskData {
    pub requests: Vec<KeyRequestView>,
    pub requests_page: PageOf,
    pub findings: Vec<SubmissionFindings>,
    pub findings_page: PageOf,
    pub queue: Vec<QueueRow>,
    pub queue_page: PageOf,
    pub task_sets: Vec<TaskSetRow>,
    pub variants: Vec<store::RegisteredVariant>,
    /// The tasks a variant may be registered for.
    pub tasks: Vec<String>,
    /// The form token every action carries (the desk's forms refuse one without it).
    pub form_token: String,
}

#[cfg(feature = "db")]
mod answers {
    use super::*;
    use crate::access::Reader;

    fn page_of(window: Window, total: usize) -> PageOf {
        let cut = window.of(total);
        PageOf { page: cut.page, pages: cut.pages, total }
    }

    /// A sampled run's state on the desk.
    pub fn queue_state(run: &store::QueuedRun, now: time::OffsetDateTime) -> &'static str {
        let sampled =
            time::OffsetDateTime::parse(&run.sampled_at, &time::format_description::well_known::Rfc3339).ok();
        if run.tries > 0 {
            "retrying"
        } else if sampled.is_some_and(|s| now - s > time::Duration::days(7)) {
            "overdue"
        } else if run.outcome != store::Outcome::Success {
            "escalated"
        } else {
            "pending"
        }
    }

    /// The command that re-runs a queued run's submission's sample (`rexbench reproduce`).
    pub fn reproduce_command(run: &store::QueuedRun) -> String {
        format!(
            "rexbench reproduce --server \"$SERVER\" --key maintainer.pem --out reruns --bundle {}",
            run.bundle_id
        )
    }

    /// The desk for a maintainer, with `form_token` for its forms.
    pub async fn desk(
        store: &store::Store,
        catalog: &crate::catalog::Catalog,
        query: DeskQuery,
        reader: &Reader,
        form_token: String,
    ) -> Result<DeskData, crate::ViewError> {
        let requests = crate::key_requests::requests(
            store,
            crate::key_requests::RequestsQuery { pending_only: true, window: query.requests },
            reader,
        )
        .await?;
        let requests_page = page_of(query.requests, requests.total);

        // Findings newest first, as many as this page reaches, then cut by the window.
        let total = usize::try_from(store.pending_findings().await?).unwrap_or(0);
        let cut = query.findings.of(total);
        let reach = i64::try_from(cut.skip + cut.take).unwrap_or(i64::MAX).max(1);
        let all = store.findings(store::FindingsFilter::Pending, reach).await?;
        let shown = all.get(cut.range()).unwrap_or(&[]);
        let mut findings: Vec<SubmissionFindings> = Vec::new();
        for f in shown {
            match findings.iter_mut().find(|s| s.bundle_id == f.bundle_id) {
                Some(s) => s.findings.push(f.clone()),
                None => findings.push(SubmissionFindings {
                    bundle_id: f.bundle_id.clone(),
                    agent_id: f.agent_id.clone(),
                    agent_name: f.agent_name.clone(),
                    findings: vec![f.clone()],
                }),
            }
        }

        let queue = crate::reproductions::queue(
            store,
            crate::reproductions::QueueQuery { status: crate::admin::Status::Pending, window: query.queue },
        )
        .await?;
        let now = time::OffsetDateTime::now_utc();
        let queue_page = page_of(query.queue, queue.total);
        let queue = queue
            .runs
            .into_iter()
            .map(|run| QueueRow {
                state: queue_state(&run, now).into(),
                command: reproduce_command(&run),
                run,
            })
            .collect();

        let mut task_sets: Vec<TaskSetRow> = catalog
            .claims
            .task_sets
            .iter()
            .map(|s| TaskSetRow {
                digest: s.digest.clone(),
                name: s.name.clone(),
                version: s.version.clone(),
                registered_at: None,
                note: "the task cards' own".into(),
            })
            .collect();
        task_sets.extend(store.registered_task_sets().await?.into_iter().map(|r| TaskSetRow {
            digest: r.set.digest,
            name: r.set.name,
            version: r.set.version,
            registered_at: Some(r.registered_at),
            note: r.note,
        }));
        Ok(DeskData {
            requests: requests.requests,
            requests_page,
            findings,
            findings_page: PageOf { page: cut.page, pages: cut.pages, total },
            queue,
            queue_page,
            task_sets,
            variants: store.registered_variants().await?,
            tasks: catalog.tasks.iter().map(|t| t.id.to_string()).collect(),
            form_token,
        })
    }
}

#[cfg(feature = "db")]
pub use answers::{desk, queue_state, reproduce_command};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_list_reads_its_own_page_leniently() {
        let q = DeskQuery::read(|n| match n {
            "requests" => Some("3".into()),
            "findings" => Some("x".into()),
            _ => None,
        });
        assert_eq!((q.requests.page, q.findings.page, q.queue.page), (3, 1, 1));
        assert_eq!(q.requests.size, PER_PAGE);
    }
}
