//! Reproductions (spec §4d, §4e): the sampling epochs anyone may check a sample against,
//! a submission's sample as far as anyone may know it, and the maintainers' queue of
//! sampled runs, one window of it at a time. What anyone may know of a sample (whether
//! its key is revealed) is decided here, for every reader.

use serde::{Deserialize, Serialize};

use crate::admin::{MAX_PER_ANSWER, PER_ANSWER, Status};
use crate::query::{BadQuery, Params, Strictness, Window};
use store::{Hint, QueuedRun, RegisteredVariant, SampleCounts, SamplingEpoch};

/// Where the sampling rule is written.
pub const RULE: &str = "/about#reproductions";

/// The sampling epochs, newest first.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SamplingAnswer {
    /// Where the rule is written: the keyed hash, and what it picks.
    pub rule: String,
    pub epochs: Vec<SamplingEpoch>,
    /// The held-out variants registered (spec §4l), oldest first: a sampled success is
    /// re-run on the key's choice among its task's variants registered before its
    /// submission arrived. Their digests only.
    pub variants: Vec<RegisteredVariant>,
    /// How many re-runs of a sampled run may end `infra_error` (each a try the
    /// maintainers' runner could not complete) before the run counts as not reproduced
    /// (spec §4d; `REXBENCH_REPRODUCTION_TRIES`).
    pub tries: u32,
    /// How many successes each submission sampled from now on takes (spec §4e): enough
    /// to catch `share` of fakes with `probability`, at most `cap` per submission
    /// (`REXBENCH_SAMPLE_SHARE`, `REXBENCH_SAMPLE_PROBABILITY`, `REXBENCH_SAMPLE_CAP`). A
    /// submitter one of whose submissions did not reproduce is sampled by its enlarged
    /// form (half the share, twice the cap). Each submission keeps the rule it was
    /// sampled by (`/api/v1/submissions/{id}/sample`).
    pub sizing: bundle::sample::Rule,
    /// Every rule the server has used, oldest first, with when it came into force: a
    /// submission's `sizing` is the one in force when it arrived, or its enlarged form.
    pub sizing_history: Vec<RuleInForce>,
}

/// A sample rule, from when.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RuleInForce {
    pub since: String,
    pub rule: bundle::sample::Rule,
}

/// A run of a sample.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SampledRun {
    pub task: String,
    pub hint: Hint,
    pub attempt: i64,
    /// Where it was sampled because the same run of this agent's earlier submission
    /// did not reproduce (spec §4e), that submission; otherwise the keyed rule chose it.
    pub carried_from: Option<String>,
    /// Where it was queued because a re-run refuted another run of its submission (a
    /// caught lie costs the submission: every success not itself re-run and held is
    /// re-run), that run's number.
    pub escalated_by: Option<i64>,
}

/// A submission's reproduction sample, as far as anyone may know it.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SampleAnswer {
    pub bundle_id: String,
    pub agent_id: String,
    /// The epoch whose key chose the sample (none: the submission is not sampled, as a
    /// maintainer's or a paper's is not).
    pub epoch: Option<i64>,
    /// Whether that epoch's key has been revealed: then `runs` is the whole sample.
    pub revealed: bool,
    pub counts: SampleCounts,
    /// The rule its sample of successes was sized by (spec §4e): with the revealed key
    /// it recomputes the sample. `null` for a submission sampled before sizing (one
    /// success per condition) or not sampled.
    pub sizing: Option<bundle::sample::Rule>,
    /// The sampled runs anyone may know of: those reproduced, and every one once the
    /// key is revealed.
    pub runs: Vec<SampledRun>,
}

/// Whether the key of `epoch` (a submission's sampling epoch, if it has one) is revealed:
/// only then is its whole sample anyone's to know.
pub fn revealed(epoch: Option<i64>, epochs: &[SamplingEpoch]) -> bool {
    epoch.is_some_and(|e| epochs.iter().any(|x| x.epoch == e && x.key.is_some()))
}

/// One window of the sampled runs.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QueueAnswer {
    /// This page's runs, oldest sample first.
    pub runs: Vec<QueuedRun>,
    /// The page given (from 1), runs a page, and how many runs the list holds in all: a
    /// reader that wants them all asks for each page up to `total / per_page`, rounded up.
    pub page: usize,
    pub per_page: usize,
    pub total: usize,
    /// What the reproductions so far took, in hours of runs (on GPUs where they had any).
    pub hours: ReproductionHours,
}

/// What the reproductions so far cost the maintainers.
#[derive(Debug, Default, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReproductionHours {
    pub runs: i64,
    pub hours: f64,
    pub gpu_hours: f64,
}

/// Which sampled runs to list, and which page of them.
#[derive(Debug, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct QueueParams {
    /// `pending` (the default): sampled runs not yet reproduced; `all`: every sampled run.
    #[cfg_attr(feature = "openapi", param(schema_with = crate::query::schema::pending_or_all))]
    pub status: Option<String>,
    /// The page, from 1 (the default); a page past the last holds no runs.
    #[cfg_attr(feature = "openapi", param(minimum = 1))]
    pub page: Option<i64>,
    /// Runs in each page: 1 to 1000, default 100.
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 1000))]
    pub per_page: Option<i64>,
}

/// The maintainers' queue as they asked for it: which runs, which page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueQuery {
    pub status: Status,
    pub window: Window,
}

impl QueueParams {
    /// Which sampled runs (those not yet reproduced by default, or all) and which page,
    /// read strictly: only the API lists them.
    pub fn view(&self) -> Result<QueueQuery, BadQuery> {
        let status = Status::read(self.status.as_deref())?;
        let get = |name: &str| match name {
            "page" => self.page.map(|n| n.to_string()),
            "per_page" => self.per_page.map(|n| n.to_string()),
            _ => None,
        };
        let window = Window::pages(&Params::new(get, Strictness::Strict), PER_ANSWER, Some(MAX_PER_ANSWER))?;
        Ok(QueueQuery { status, window })
    }
}

#[cfg(feature = "db")]
mod answers {
    use super::*;
    use crate::{Missing, ViewError};

    /// The sampling epochs, the variants, and the rules in force and before.
    pub async fn sampling(store: &store::Store) -> Result<SamplingAnswer, ViewError> {
        Ok(SamplingAnswer {
            rule: RULE.into(),
            epochs: store.sampling_epochs().await?,
            variants: store.registered_variants().await?,
            tries: store.reproduction_tries(),
            sizing: store.sample_rule(),
            sizing_history: store
                .sample_rules()
                .await?
                .into_iter()
                .map(|(since, rule)| RuleInForce { since, rule })
                .collect(),
        })
    }

    /// A submission's sample as far as anyone may know it.
    pub async fn sample(store: &store::Store, bundle_id: &str) -> Result<SampleAnswer, ViewError> {
        let submission = store
            .submission(bundle_id)
            .await?
            .ok_or_else(|| ViewError::NotFound(Missing::Submission(bundle_id.to_owned())))?;
        let epoch = store.sample_epoch(bundle_id).await?;
        let revealed = revealed(epoch, &store.sampling_epochs().await?);
        let runs = store.public_sample(bundle_id).await?;
        Ok(SampleAnswer {
            bundle_id: bundle_id.to_owned(),
            agent_id: submission.agent_id,
            epoch,
            revealed,
            counts: submission.sample,
            sizing: store.sample_rule_of(bundle_id).await?,
            runs: runs
                .into_iter()
                .map(|r| SampledRun {
                    task: r.task,
                    hint: r.hint,
                    attempt: r.attempt,
                    carried_from: r.carried_from,
                    escalated_by: r.escalated_by,
                })
                .collect(),
        })
    }

    /// The window of the queue asked for, cut by the one rule past the end (a page past
    /// the last holds no runs).
    pub async fn queue(store: &store::Store, query: QueueQuery) -> Result<QueueAnswer, ViewError> {
        let (skip, take) = query.window.cut();
        let whole = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        let (runs, total) = store
            .reproduction_queue_window(query.status == Status::Pending, whole(skip), whole(take))
            .await?;
        let (hours_runs, hours, gpu_hours) = store.reproduction_hours().await?;
        Ok(QueueAnswer {
            runs,
            page: query.window.page,
            per_page: query.window.size,
            total: usize::try_from(total).unwrap_or(0),
            hours: ReproductionHours { runs: hours_runs, hours, gpu_hours },
        })
    }
}

#[cfg(feature = "db")]
pub use answers::{queue, sample, sampling};

#[cfg(test)]
mod tests {
    use super::*;

    fn epoch(n: i64, key: bool) -> SamplingEpoch {
        SamplingEpoch {
            epoch: n,
            commitment: "c".repeat(64),
            committed_at: "2026-01-01T00:00:00Z".into(),
            key: key.then(|| "k".repeat(64)),
            revealed_at: key.then(|| "2026-02-01T00:00:00Z".into()),
        }
    }

    #[test]
    fn the_queue_reads_its_status_and_page_strictly() {
        let q = |status: Option<&str>, page, per_page| {
            QueueParams { status: status.map(str::to_owned), page, per_page }.view()
        };
        let all = q(Some("all"), None, None).unwrap();
        assert_eq!((all.status, all.window.page, all.window.size), (Status::All, 1, PER_ANSWER));
        assert_eq!(
            q(None, Some(3), Some(1000)).unwrap().window,
            Window { page: 3, size: 1000, before: None }
        );
        assert_eq!(q(None, None, None).unwrap().status, Status::Pending);
        assert_eq!(q(Some("x"), None, None).unwrap_err().parameter, "status");
        assert!(q(Some(""), None, None).is_err(), "empty is no status");
        assert_eq!(q(None, Some(0), None).unwrap_err().parameter, "page");
        assert_eq!(q(None, None, Some(1001)).unwrap_err().parameter, "per_page");
    }

    #[test]
    fn a_sample_is_revealed_only_by_its_own_epoch_s_key() {
        let epochs = [epoch(2, false), epoch(1, true)];
        assert!(revealed(Some(1), &epochs));
        assert!(!revealed(Some(2), &epochs), "its epoch's key is still secret");
        assert!(!revealed(Some(3), &epochs), "an epoch the server does not know reveals nothing");
        assert!(!revealed(None, &epochs), "a submission not sampled has no sample to reveal");
    }
}
