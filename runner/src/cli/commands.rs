//! What the longer `rexbench` commands do once their arguments are read: the
//! dispatcher in `cli` names the command, a function here carries it out and prints
//! what it did.

use super::*;

/// Writes the paper's published results and Harbor's parity experiment as signed bundles.
pub(super) fn import_published(
    keys: Vec<PathBuf>,
    out: PathBuf,
    tasks: Option<PathBuf>,
    created_at: Option<String>,
) -> anyhow::Result<ExitCode> {
    let keys = keys.iter().map(|k| keyfile::read_secret(k)).collect::<Result<Vec<_>, _>>()?;
    // The built-in cards live in a directory that goes when `tasks` does.
    let tasks = TaskDir::open(tasks.as_deref())?;
    let cards = tasks.cards()?;
    let benchmark = cards.values().filter(|c| bundle::REXBENCH_TASKS.contains(&c.id.as_str()));
    let digest = crate::taskset::task_set_digest(benchmark)?;
    let created_at = rfc3339(created_at)?;
    let key_refs: Vec<&SecretKey> = keys.iter().collect();
    for done in crate::published::import(digest, &key_refs, &created_at, &out)? {
        println!("wrote {}: bundle {}", done.path.display(), done.id);
        for a in &done.adjustments {
            eprintln!("warning: {}: the paper is inconsistent: {a}", done.agent);
        }
    }
    for done in crate::parity::import(digest, &key_refs, &created_at, &out)? {
        println!("wrote {}: bundle {} (Harbor's parity experiment)", done.path.display(), done.id);
    }
    Ok(ExitCode::SUCCESS)
}

/// Evaluates an agent's outputs; 130 when interrupted (a second run resumes).
pub(super) fn evaluate_outputs(
    outputs: PathBuf,
    out: PathBuf,
    heldout: Option<String>,
    run: RunArgs,
) -> anyhow::Result<ExitCode> {
    let (mut opts, _tasks) = run.options(outputs, out.clone(), super::Purpose::Evaluate)?;
    if let Some(digest) = heldout {
        let Some(gold) = opts.gold.as_deref() else {
            anyhow::bail!("--heldout {digest} names a variant in the maintainers' gold: give --gold DIR");
        };
        let variant = benchmark::heldout::all(gold)?.into_iter().find(|v| v.digest.to_hex() == digest);
        let Some(variant) = variant else {
            anyhow::bail!(
                "no held-out variant {digest} under {} (`rexbench variants --gold {}` lists them)",
                gold.display(),
                gold.display()
            );
        };
        let codebase = out.join(".heldout").join(&digest).join("codebase");
        opts.heldout = Some(evaluate::HeldOutRun { variant, codebase });
    }
    catch_interrupts(stop_evaluating)?;
    match evaluate::evaluate(&opts) {
        Ok(s) => {
            let per: Vec<String> = s.outcomes.iter().map(|(o, n)| format!("{o} {n}")).collect();
            println!(
                "evaluated {} runs ({}); {} were already done; results in {}",
                s.evaluated,
                per.join(", "),
                s.skipped,
                out.display()
            );
            if s.flagged > 0 {
                println!(
                    "{} of the successes carry integrity findings (each run's run.json names them; \
                     `rexbench inspect` shows them)",
                    s.flagged
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ crate::Error::Interrupted { .. }) => {
            eprintln!("rexbench: {e}");
            Ok(ExitCode::from(130))
        }
        Err(e) => Err(e.into()),
    }
}

/// Re-runs the sampled runs waiting on the server and submits each reproduction; 1 when one is refused or waits.
pub(super) fn reproduce(
    server: String,
    token: String,
    key: PathBuf,
    out: PathBuf,
    bundle: Option<String>,
    dry_run: bool,
    run: RunArgs,
) -> anyhow::Result<ExitCode> {
    let (evaluate, _tasks) = run.options(PathBuf::new(), out.clone(), super::Purpose::Reproduce)?;
    catch_interrupts(stop_evaluating)?;
    let bundle_limit = bundle::Limits::default().compressed;
    let opts = crate::reproduce::Options { server, token, key, out, bundle, dry_run, evaluate, bundle_limit };
    let reports = crate::reproduce::reproduce(&opts)?;
    if reports.is_empty() {
        println!("no sampled run waits for a re-run");
    }
    let mut refused = false;
    for r in &reports {
        println!("submission {} ({}):", r.bundle_id, r.agent_id);
        for (run, submitted, rerun) in &r.runs {
            let verdict = if r.skipped.is_some() {
                "waits".to_owned()
            } else if submitted.succeeded() == rerun.succeeded() {
                format!("held ({submitted} → {rerun})")
            } else {
                format!("DIFFERENT ({submitted} → {rerun})")
            };
            println!("  {run}: {verdict}");
        }
        for (run, variant, outcome) in &r.heldout {
            let verdict =
                if outcome.succeeded() == Some(true) { "generalised" } else { "DID NOT GENERALISE" };
            println!(
                "  {run} on held-out variant {}…: {outcome}: {verdict}",
                &variant[..12.min(variant.len())]
            );
        }
        for (run, before) in &r.inconclusive {
            println!(
                "  {run}: infra_error, submitted as try {} (the server says how many a run gets at /api/v1/sampling; \
                 the next `rexbench reproduce` re-runs it until then)",
                before + 1
            );
        }
        if let Some(why) = &r.skipped {
            println!("  not re-run: {why}");
        }
        match &r.verdict {
            Some(crate::submit::Verdict::Accepted { status, .. }) => println!(
                "  reproduction {} {}: {} re-run, {} different, {} tries",
                r.bundle.as_ref().map(|p| p.display().to_string()).unwrap_or_default(),
                match *status {
                    201 => "accepted",
                    202 => "held (this key's request is pending)",
                    _ => "already stored",
                },
                r.runs.len(),
                r.differed(),
                r.inconclusive.len()
            ),
            Some(crate::submit::Verdict::Refused { status, code, message }) => {
                refused = true;
                println!("  REFUSED ({status})  {code}: {message}");
            }
            None => {}
        }
    }
    if evaluate::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("rexbench: interrupted; run the same command again to resume");
        return Ok(ExitCode::from(130));
    }
    let skipped = reports.iter().any(|r| r.skipped.is_some() && !dry_run);
    Ok(if refused || skipped { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Imports Harbor jobs into a results folder, and says how to pack it.
pub(super) fn import_harbor(
    jobs: Vec<PathBuf>,
    out: PathBuf,
    hint: Option<Hint>,
    tasks: Option<PathBuf>,
    gold: Option<PathBuf>,
    harbor_version: Option<String>,
    foreign_tasks: bool,
) -> anyhow::Result<ExitCode> {
    interrupted_or((|| {
        catch_interrupts(stop_reading)?;
        let tasks = TaskDir::open(tasks.as_deref())?;
        let opts = crate::harbor::Options {
            jobs,
            out: out.clone(),
            hint,
            tasks_dir: tasks.path().to_owned(),
            gold,
            harbor_version,
            foreign_tasks,
        };
        let done = crate::harbor::import(&opts)?;
        let per: Vec<String> = done.outcomes.iter().map(|(o, n)| format!("{o} {n}")).collect();
        println!(
            "imported {} runs ({}) from {}; results in {}",
            done.runs,
            per.join(", "),
            done.source,
            out.display()
        );
        for line in &done.comparison {
            println!("{line}");
        }
        println!(
            "agent `{}` ({} with {}): check {} then run
  rexbench pack {} --agent {} --key YOUR_KEY.pem",
            done.agent.id,
            done.agent.framework,
            done.agent.model,
            out.join("agent.toml").display(),
            out.display(),
            out.join("agent.toml").display()
        );
        Ok(ExitCode::SUCCESS)
    })())
}

/// Packs a results folder into a signed bundle.
pub(super) fn pack_results(
    results: PathBuf,
    agent: PathBuf,
    keys: Vec<PathBuf>,
    out: Option<PathBuf>,
    created_at: Option<String>,
) -> anyhow::Result<ExitCode> {
    interrupted_or((|| {
        catch_interrupts(stop_reading)?;
        let agent = pack::read_agent(&agent)?;
        let keys = keys.iter().map(|k| keyfile::read_secret(k)).collect::<Result<Vec<_>, _>>()?;
        let created_at = rfc3339(created_at)?;
        let out = out.unwrap_or_else(|| PathBuf::from(format!("{}.rexb.tar.gz", agent.id)));
        let key_refs: Vec<&SecretKey> = keys.iter().collect();
        let packed = pack::pack(&results, agent, &key_refs, &created_at, &out)?;
        println!(
            "wrote {}: bundle {}, {} runs, {} artifacts",
            out.display(),
            packed.id,
            packed.runs,
            packed.artifacts
        );
        Ok(ExitCode::SUCCESS)
    })())
}

/// Signs in with a registered key and saves the session.
pub(super) fn login(server: String, key: PathBuf, save: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let secret = keyfile::read_secret(&key)?;
    let session = crate::login::login(&server, &secret)?;
    let path = save.or_else(crate::login::default_path).ok_or_else(|| {
        crate::Error::Setup("no HOME or XDG_CONFIG_HOME to save the session in: pass --save PATH".into())
    })?;
    crate::login::save(&session, &path)?;
    let until = time::OffsetDateTime::from_unix_timestamp(session.expires_at)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default();
    println!(
        "signed in to {} as a {}, until {until} (saved in {})",
        session.server,
        session.reads_as,
        path.display()
    );
    println!(
        "to sign a browser in, open this within ten minutes and press its button (once):\n  {}",
        session.browser_link
    );
    Ok(ExitCode::SUCCESS)
}
