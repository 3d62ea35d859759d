//! What each `rexbench-server` command does once the data is open: the dispatcher in
//! `cli` names the command, a function here carries it out and prints what it did.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use super::{
    FindingsCommand, KeysCommand, OutputsCommand, SessionsCommand, TaskSetsCommand, VariantsCommand, base_url,
};
use crate::{AppState, Config};

const DONE: anyhow::Result<ExitCode> = Ok(ExitCode::SUCCESS);

/// `serve [--demo]`: the demo's data first when asked (and how to read its private
/// outputs), the sampling key's commitment, then the server.
pub(super) async fn serve(config: Config, state: AppState, demo: bool) -> anyhow::Result<ExitCode> {
    if demo {
        match crate::seed_demo(&state).await? {
            Some(s) => {
                tracing::info!(published = s.published, evaluated = s.evaluated, "demo data loaded")
            }
            None => tracing::info!("the database holds submissions already: no demo data added"),
        }
        // The demo's csvstats outputs are private: how to read them as their submitter.
        if let Some(key) = state
            .store
            .keys()
            .await?
            .into_iter()
            .find(|k| k.owner == crate::demo::SUBMITTER && k.revoked_at.is_none())
        {
            let minutes = crate::auth::LINK_MINUTES;
            let link = crate::auth::link(&state, Some(&key.keyid), false, minutes).await?;
            println!(
                "The demo's csvstats outputs are private, as RExBench's are. To read them as their submitter \
                     ({}), open within ten minutes, once:\n  {}{link}\nFor another link: rexbench-server \
                     sign-in-link --as {}",
                key.owner,
                base_url(&config),
                key.keyid
            );
        }
        // The maintainers' desk holds the demo's pending key request: how to open it.
        let link = crate::auth::link(&state, None, true, crate::auth::LINK_MINUTES).await?;
        println!(
            "The maintainers' desk (/desk) holds the demo's pending key request and the findings to review. To \
             open it as a maintainer, open within ten minutes, once:\n  {}{link}\nFor another link: \
             rexbench-server sign-in-link",
            base_url(&config)
        );
    }
    // The sampling key's commitment is public before any bundle is sampled.
    state.store.begin_sampling().await?;
    crate::serve(config, state).await?;
    DONE
}

/// `reproductions [--all]`: the sampled runs and what re-running them took.
pub(super) async fn reproductions(state: &AppState, all: bool) -> anyhow::Result<ExitCode> {
    let runs = state.store.reproduction_queue(!all).await?;
    let (done, hours, gpu_hours) = state.store.reproduction_hours().await?;
    if runs.is_empty() {
        println!("{}", if all { "no run has been sampled" } else { "no sampled run waits for a re-run" });
    }
    for r in &runs {
        let status = match (r.reproduced, r.held) {
            (Some(o), Some(true)) => format!("reproduced: {o}, held"),
            (Some(o), _) if o == store::Outcome::InfraError => {
                format!("could not be re-run in {} tries: not reproduced", r.tries)
            }
            (Some(o), _) => format!("reproduced: {o}, DIFFERENT"),
            (None, _) if r.patch.is_none() => {
                "nothing to re-run (no patch; a failure in the strict view)".to_owned()
            }
            (None, _) if r.tries > 0 => {
                format!(
                    "waiting ({} of {} tries could not complete)",
                    r.tries,
                    state.store.reproduction_tries()
                )
            }
            (None, _) => "waiting".to_owned(),
        };
        println!(
            "run {:>6}  {}/{}/{}  {} (submitted {}, {})  bundle {}{}  epoch {}  {status}",
            r.run_id,
            r.task,
            r.hint,
            r.attempt,
            r.agent_id,
            r.outcome,
            r.duration_s.map_or_else(|| "no duration".to_owned(), |d| format!("{d:.0} s")),
            r.bundle_id,
            if r.superseded { " (superseded)" } else { "" },
            r.epoch
        );
    }
    println!("{done} runs reproduced so far: {hours:.2} hours, {gpu_hours:.2} of them GPU hours");
    DONE
}

/// `sampling [--reveal]`: the epochs and their commitments, or the current key revealed.
pub(super) async fn sampling(state: &AppState, reveal: bool) -> anyhow::Result<ExitCode> {
    if reveal {
        let (old, new) = state.store.reveal_sampling_key().await?;
        println!(
            "revealed epoch {}'s key {} (commitment {}); epoch {} begins, commitment {}",
            old.epoch,
            old.key.unwrap_or_default(),
            old.commitment,
            new.epoch,
            new.commitment
        );
        crate::ingest::refresh_pages(state).await;
    } else {
        state.store.begin_sampling().await?;
        for e in state.store.sampling_epochs().await? {
            println!(
                "epoch {}  since {}  commitment {}  {}",
                e.epoch,
                e.committed_at,
                e.commitment,
                match (&e.key, &e.revealed_at) {
                    (Some(k), Some(at)) => format!("key {k} (revealed {at})"),
                    _ => "key secret (current)".to_owned(),
                }
            );
        }
    }
    DONE
}

/// `keys add|list|revoke`.
pub(super) async fn keys(state: &AppState, command: KeysCommand) -> anyhow::Result<ExitCode> {
    match command {
        KeysCommand::Add { public_key, owner, tier } => {
            let pem =
                std::fs::read_to_string(&public_key).with_context(|| public_key.display().to_string())?;
            let key = bundle::PublicKey::from_pem(&pem).with_context(|| public_key.display().to_string())?;
            let rec = state.store.add_key(&key, &owner, tier).await?;
            println!("added {} ({}, {})", rec.keyid, rec.owner, rec.tier);
        }
        KeysCommand::List => {
            for k in state.store.keys().await? {
                let status =
                    k.revoked_at.map(|at| format!("revoked {at}")).unwrap_or_else(|| "active".into());
                println!("{}  {:<10}  {:<24}  added {}  {status}", k.keyid, k.tier, k.owner, k.added_at);
            }
        }
        KeysCommand::Revoke { keyid } => {
            let k = state.store.revoke_key(&keyid).await?;
            println!("revoked {} ({}) at {}", k.keyid, k.owner, k.revoked_at.unwrap_or_default());
        }
    }
    DONE
}

/// `task-sets list|add`.
pub(super) async fn task_sets(state: &AppState, command: TaskSetsCommand) -> anyhow::Result<ExitCode> {
    match command {
        TaskSetsCommand::List => {
            for set in &state.catalog.claims.task_sets {
                println!("{}  {} {}  (the task cards')", set.digest, set.name, set.version);
            }
            for r in state.store.registered_task_sets().await? {
                println!(
                    "{}  {} {}  registered {}: {}",
                    r.set.digest, r.set.name, r.set.version, r.registered_at, r.note
                );
            }
        }
        TaskSetsCommand::Add { digest, name, version, note } => {
            let set = bundle::TaskSet { digest, name, version };
            let new = crate::api::task_sets::NewTaskSet {
                digest: set.digest.clone(),
                name: set.name.clone(),
                version: set.version.clone(),
                note,
            };
            let answer = crate::api::task_sets::register(state, &new)
                .await
                .map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))?;
            if answer.changed {
                println!("registered {set}");
            } else {
                println!("{set} was registered already");
            }
        }
    }
    DONE
}

/// `variants list|add`.
pub(super) async fn variants(state: &AppState, command: VariantsCommand) -> anyhow::Result<ExitCode> {
    match command {
        VariantsCommand::List => {
            for v in state.store.registered_variants().await? {
                let retired = v.retired_at.map(|r| format!(", retired {r}")).unwrap_or_default();
                println!("{} {}  registered {}{retired}: {}", v.task, v.digest, v.registered_at, v.note);
            }
        }
        VariantsCommand::Add { task, digest, note } => {
            let change =
                crate::api::variants::VariantChange { task: task.clone(), digest: digest.clone(), note };
            let answer = crate::api::variants::register(state, &change)
                .await
                .map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))?;
            if answer.changed {
                println!("registered a held-out variant of {task}: {digest}");
            } else {
                println!("the variant {digest} of {task} was registered already");
            }
        }
        VariantsCommand::Retire { task, digest, note } => {
            let change =
                crate::api::variants::VariantChange { task: task.clone(), digest: digest.clone(), note };
            let answer = crate::api::variants::retire(state, &change)
                .await
                .map_err(|e| anyhow::anyhow!("{}: {}", e.code, e.message))?;
            if answer.changed {
                println!(
                    "retired the held-out variant {digest} of {task}: it is chosen for no new submission"
                );
            } else {
                println!("the variant {digest} of {task} was retired already");
            }
        }
    }
    DONE
}

/// `findings list|confirm|dismiss`.
pub(super) async fn findings(state: &AppState, command: FindingsCommand) -> anyhow::Result<ExitCode> {
    match command {
        FindingsCommand::List { all, limit } => {
            let filter = if all { store::FindingsFilter::All } else { store::FindingsFilter::Pending };
            for f in state.store.findings(filter, limit.clamp(1, 100_000)).await? {
                let review = f
                    .finding
                    .review
                    .map_or_else(|| "not reviewed".to_owned(), |r| format!("{}: {}", r.verdict, r.note));
                println!(
                    "{}  run {} ({} on {}, {}, attempt {}: {})  {}  {}  [{}]",
                    f.finding.id,
                    f.run_id,
                    f.agent_name,
                    f.task,
                    f.hint,
                    f.attempt,
                    f.outcome,
                    f.finding.check,
                    f.finding.message,
                    review
                );
            }
        }
        FindingsCommand::Confirm { id, note } => review(state, id, store::Review::Confirmed, &note).await?,
        FindingsCommand::Dismiss { id, note } => review(state, id, store::Review::Dismissed, &note).await?,
    }
    DONE
}

/// `outputs list|publish|unpublish`.
pub(super) async fn outputs(state: &AppState, command: OutputsCommand) -> anyhow::Result<ExitCode> {
    match command {
        OutputsCommand::List => {
            for t in crate::api::outputs::list(state).await.map_err(anyhow::Error::new)? {
                let changed = if t.card == t.outputs { "" } else { "  (changed by a maintainer)" };
                println!("{:<28}  {:<7}  card: {}{changed}", t.task, t.outputs, t.card);
            }
        }
        OutputsCommand::Publish { task, reason } => {
            set_outputs(state, &task, store::Outputs::Public, &reason).await?
        }
        OutputsCommand::Unpublish { task, reason } => {
            set_outputs(state, &task, store::Outputs::Private, &reason).await?
        }
    }
    DONE
}

/// `sign-in-link [--as KEYID]`: a one-time link, printed with the server's address.
pub(super) async fn sign_in_link(
    state: &AppState,
    keyid: Option<String>,
    base: String,
    valid_for: i64,
) -> anyhow::Result<ExitCode> {
    let link = match keyid {
        None => crate::auth::link(state, None, true, valid_for).await?,
        Some(keyid) => {
            let key = state.store.key(&keyid).await?;
            anyhow::ensure!(key.revoked_at.is_none(), "key {keyid} was revoked");
            let maintainer = key.tier == store::Tier::Maintainer;
            crate::auth::link(state, Some(&key.keyid), maintainer, valid_for).await?
        }
    };
    println!("{}{link}", base.trim_end_matches('/'));
    DONE
}

/// `sessions list|revoke`.
pub(super) async fn sessions(state: &AppState, command: SessionsCommand) -> anyhow::Result<ExitCode> {
    match command {
        SessionsCommand::List => {
            let now = time::OffsetDateTime::now_utc().unix_timestamp();
            let open = state.store.open_sessions(now).await?;
            for o in &open {
                let who = match (&o.keyid, &o.owner) {
                    (Some(k), Some(owner)) => format!("key {k} ({owner})"),
                    (Some(k), None) => format!("key {k}"),
                    (None, _) => "a maintainer's sign-in link".to_owned(),
                };
                let reads = if o.maintainer { "maintainer" } else { "submitter" };
                println!(
                    "{}  {:<7} {:<10} ends in {:>5} min  {who}",
                    o.id,
                    o.kind.as_str(),
                    reads,
                    (o.expires_at - now + 59) / 60
                );
            }
            println!("{} open session(s)", open.len());
        }
        SessionsCommand::Revoke { ids, all, maintainers } => {
            let which = if all {
                store::Revoke::All
            } else if maintainers {
                store::Revoke::Maintainers
            } else {
                store::Revoke::Ids(ids)
            };
            let now = time::OffsetDateTime::now_utc().unix_timestamp();
            let ended = state.store.revoke_sessions(&which, now).await?;
            println!("ended {ended} session(s), and every session made from them");
        }
    }
    DONE
}

/// `access-log`: the newest reads of private content.
pub(super) async fn access_log(state: &AppState, limit: i64) -> anyhow::Result<ExitCode> {
    for e in state.store.access_log(limit.clamp(1, 100_000), None).await? {
        let what = match (e.run_id, &e.digest) {
            (Some(run), _) => format!("run {run}"),
            (None, Some(d)) => format!("artifact {d}"),
            (None, None) => "–".to_owned(),
        };
        println!("{}  {:<5} {:<8} {what:<74} {}", e.seq, e.via, e.at, e.reader);
    }
    DONE
}

/// `import BUNDLE…`: each bundle ingested as an upload would be; 1 if any was refused.
pub(super) async fn import(state: &AppState, bundles: Vec<PathBuf>) -> anyhow::Result<ExitCode> {
    let mut failed = 0;
    for path in bundles {
        match crate::demo::ingest_file(state, &path).await {
            Ok(r) => {
                println!("{}: {}", path.display(), serde_json::to_string(&r).expect("serializes"))
            }
            Err(e) => {
                eprintln!("{e:#}");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        return Ok(ExitCode::from(1));
    }
    DONE
}

async fn set_outputs(
    state: &AppState,
    task: &str,
    outputs: store::Outputs,
    reason: &str,
) -> anyhow::Result<()> {
    let done = crate::api::outputs::set(state, task, outputs, reason).await.map_err(anyhow::Error::new)?;
    match done.change_seq {
        Some(seq) => println!("the outputs of task {task}'s runs are {outputs} now (change {seq})"),
        None => println!("the outputs of task {task}'s runs were {outputs} already: nothing changed"),
    }
    Ok(())
}

async fn review(
    state: &AppState,
    id: store::FindingId,
    verdict: store::Review,
    note: &str,
) -> anyhow::Result<()> {
    let note = note.trim();
    anyhow::ensure!(
        !note.is_empty() && note.chars().count() <= 1000,
        "--note must be 1 to 1000 characters, not all blank"
    );
    let f = state.store.review_finding(&id, verdict, note).await?;
    println!("{verdict} {} ({}) about run {} of {}", f.finding.id, f.finding.check, f.run_id, f.agent_name);
    Ok(())
}
