//! The command line: `keygen`, `pack`, `verify`, `inspect`.

use std::fs::File;
use std::io::{self, BufReader, IsTerminal as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use bundle::{Hint, PublicKey, REXBENCH_TASKS, SecretKey, Verifier};
use clap::{Parser, Subcommand};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use benchmark::builtin::TaskDir;

use crate::exec::Executor;
use crate::sandbox::{self, Confinement};
use crate::{evaluate, keyfile, pack, summary};

#[derive(Debug, Parser)]
#[command(
    name = "rexbench",
    version,
    about = "The RExBench evaluation runner: pack, sign, verify and inspect result bundles."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Generate an Ed25519 signing key: PREFIX.pem (secret) and PREFIX.pub.pem.
    Keygen {
        /// Path prefix of the two files.
        #[arg(long, default_value = "rexbench-key")]
        out: PathBuf,
        /// Replace existing files.
        #[arg(long)]
        force: bool,
    },
    /// Evaluate an agent's outputs against the tasks into a results directory.
    Evaluate {
        /// The agent's outputs (layouts: runner/README.md).
        outputs: PathBuf,
        /// The results directory to write (resumable).
        #[arg(long)]
        out: PathBuf,
        /// Evaluate on this held-out variant (its digest, from `rexbench variants`) of
        /// the outputs' task, from --gold: a maintainer's check that a variant's gold
        /// holds (the gold solution's patch passes it) before registering it. Such
        /// results are never packed.
        #[arg(long, value_name = "DIGEST")]
        heldout: Option<String>,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Re-run the runs a leaderboard sampled from self-reported submissions (a
    /// maintainer's job): fetch each sampled run's submitted patch, evaluate it as
    /// `evaluate` does, and submit one signed reproduction per submission, with the
    /// executor's hardware and each run's duration.
    Reproduce {
        /// The leaderboard, e.g. https://rexbench.example.org
        #[arg(long)]
        server: String,
        /// A file holding the server's admin token (it reaches the queue and the private
        /// patches) [default: asked for at the terminal]. The token is read here and
        /// passed to no process: never from the environment, which every process this
        /// command starts would otherwise be given.
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
        /// A maintainer key (PKCS#8 PEM) registered on the server, to sign with.
        #[arg(long)]
        key: PathBuf,
        /// Where each submission's re-run is kept, as OUT/<bundle id>/ (resumable).
        #[arg(long)]
        out: PathBuf,
        /// Only this submission's sample (its bundle id).
        #[arg(long)]
        bundle: Option<String>,
        /// List the sampled runs that wait, and re-run nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        run: RunArgs,
    },
    /// List the held-out variants in a gold folder (GOLD/<task>/heldout/<name>/), each
    /// with the digest a maintainer registers on the server (`rexbench-server variants add`).
    Variants {
        /// The maintainers' private gold directory.
        #[arg(long)]
        gold: PathBuf,
    },
    /// Keep a run's processes: start COMMAND as their subreaper and kill every one left
    /// when it ends (what the executors run each experiment beneath).
    #[command(hide = true)]
    Keep {
        /// Where to write what it killed (JSON).
        #[arg(long)]
        report: PathBuf,
        /// A control group's `cgroup.procs` to join before starting COMMAND (repeatable).
        #[arg(long = "cgroup")]
        cgroups: Vec<PathBuf>,
        #[arg(required = true, last = true)]
        command: Vec<std::ffi::OsString>,
    },
    /// Run one Slurm job's experiment (what `evaluate --executor slurm` submits).
    #[command(hide = true)]
    SlurmJob {
        /// The job's folder under the results directory's .slurm/jobs/.
        dir: PathBuf,
    },
    /// Turn Harbor job folders (RExBench adapter) into a results directory for `pack`,
    /// with provenance `imported`: Harbor ran and judged the runs; nothing is re-run.
    ImportHarbor {
        /// Harbor job folders (each with result.json and one folder per trial).
        #[arg(required = true)]
        jobs: Vec<PathBuf>,
        /// The results directory to write (must not exist yet, or be empty).
        #[arg(long)]
        out: PathBuf,
        /// The hint condition the jobs ran under (none | hints | detailed); required
        /// unless every trial's task name says it. The adapter's tasks carry the
        /// no-hint instructions.
        #[arg(long)]
        hint: Option<Hint>,
        /// A directory of task cards, for the task-set digest [default: the cards built
        /// into this binary].
        #[arg(long)]
        tasks: Option<PathBuf>,
        /// The private gold directory (<task>/gold.toml), for file recall.
        #[arg(long)]
        gold: Option<PathBuf>,
        /// Harbor's version, for jobs whose lock.json does not record it.
        #[arg(long)]
        harbor_version: Option<String>,
        /// Keep trials whose task folder is not the one its card pins (harbor.toml), under
        /// a task set of their own that never ranks with the benchmark's, instead of
        /// refusing them.
        #[arg(long)]
        foreign_tasks: bool,
    },
    /// Print the digest Harbor records for each task folder (a trial lock's
    /// `task.digest`), for a card's harbor.toml to pin.
    TaskDigest {
        /// Harbor task folders (each with task.toml).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
    /// Pack an evaluation results directory into a signed bundle (layout: runner/README.md).
    Pack {
        /// The results directory (evaluation.json and runs/<task>/<hint>/<attempt>/).
        results: PathBuf,
        /// The agent: a TOML file with id, framework, model and the optional fields.
        #[arg(long)]
        agent: PathBuf,
        /// Secret key (PKCS#8 PEM) to sign with; repeat to sign with several.
        #[arg(long = "key", required = true)]
        keys: Vec<PathBuf>,
        /// Where to write the bundle [default: <agent-id>.rexb.tar.gz].
        #[arg(long)]
        out: Option<PathBuf>,
        /// The bundle's creation time, RFC 3339 [default: now].
        #[arg(long)]
        created_at: Option<String>,
    },
    /// Write the RExBench paper's published per-task results as one signed bundle per
    /// agent, and the Harbor adapter's parity experiment as one per harness (provenance
    /// `published`).
    ImportPublished {
        /// Secret key (PKCS#8 PEM) to sign with.
        #[arg(long = "key", required = true)]
        keys: Vec<PathBuf>,
        /// The folder to write the bundles into.
        #[arg(long)]
        out: PathBuf,
        /// A directory of task cards, for the task-set digest [default: the cards built
        /// into this binary].
        #[arg(long)]
        tasks: Option<PathBuf>,
        /// The bundles' creation time, RFC 3339 [default: now].
        #[arg(long)]
        created_at: Option<String>,
    },
    /// Verify a bundle against trusted keys; exit status 1 if it is invalid.
    Verify {
        bundle: PathBuf,
        /// A trusted public key (SubjectPublicKeyInfo PEM); repeat for several.
        #[arg(long = "trust", required = true)]
        trust: Vec<PathBuf>,
        /// A task id to accept besides RExBench's twelve; repeat for several.
        #[arg(long = "task")]
        tasks: Vec<String>,
        /// Also accept every task with a card in this folder (e.g. `tasks`, which holds
        /// the examples).
        #[arg(long = "tasks")]
        tasks_dir: Option<PathBuf>,
        /// A task set to accept besides those the cards give, as a board's maintainers
        /// register one: "NAME VERSION DIGEST" (e.g. "RExBench 1.0 ab…"); repeat for several.
        #[arg(long = "task-set", value_parser = parse_task_set)]
        task_sets: Vec<bundle::TaskSet>,
        /// Print the verdict as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Submit a bundle to a leaderboard server; exit status 1 if it is refused.
    Submit {
        bundle: PathBuf,
        /// The server, e.g. https://rexbench.example.org
        #[arg(long)]
        server: String,
    },
    /// Check from outside that a leaderboard shows what an agent's signed bundle says:
    /// the signature, the bundle id, every artifact's digest and each rate; exit status
    /// 1 if any check fails.
    Audit {
        /// The leaderboard, e.g. https://rexbench.example.org
        server: String,
        /// The agent's id (the last part of its page's address).
        agent: String,
        /// A public key (SubjectPublicKeyInfo PEM) the signature must be by; repeat for
        /// several [default: the key the server lists for the signer].
        #[arg(long = "trust")]
        trust: Vec<PathBuf>,
        /// A token that reaches private outputs (a maintainer's admin token, or one
        /// `rexbench login` got): their bytes are checked too, not only their digests.
        #[arg(long, env = "REXBENCH_TOKEN", hide_env_values = true)]
        token: Option<String>,
    },
    /// Sign in to a leaderboard with the key you sign bundles with (it must be
    /// registered there): a token for this command line, saved for an hour, and a
    /// one-time link that signs a browser in, to read your runs' private outputs.
    Login {
        /// The leaderboard, e.g. https://rexbench.example.org
        #[arg(long)]
        server: String,
        /// Your Ed25519 secret key (PKCS#8 PEM).
        #[arg(long)]
        key: PathBuf,
        /// Where to save the session [default: ~/.config/rexbench/session.json].
        #[arg(long)]
        save: Option<PathBuf>,
    },
    /// Ask a leaderboard to register your key (no e-mail needed): the key signs the
    /// server's challenge, and the request names its owner and a contact for the
    /// maintainers. While it is pending the key may submit already (its bundles are held,
    /// seen by you and the maintainers only). With --status, where the request stands.
    Register {
        /// The leaderboard, e.g. https://rexbench.example.org
        #[arg(long)]
        server: String,
        /// Your Ed25519 secret key (PKCS#8 PEM), as `rexbench keygen` made it.
        #[arg(long)]
        key: PathBuf,
        /// Who holds the key, as results will show it (not the board's badge words, not
        /// another owner's name).
        #[arg(long, required_unless_present = "status")]
        owner: Option<String>,
        /// An e-mail or https:// address the maintainers reach you at (for them only).
        #[arg(long, required_unless_present = "status")]
        contact: Option<String>,
        /// Your team's page, shown with the request.
        #[arg(long)]
        url: Option<String>,
        /// A word for the maintainers: what the agent is, who runs it (for them only).
        #[arg(long)]
        note: Option<String>,
        /// Show where the key's request stands instead (with a saved `rexbench login`
        /// session for this server, its held bundles too).
        #[arg(long, conflicts_with_all = ["owner", "contact", "url", "note"])]
        status: bool,
    },
    /// A run's outputs on a leaderboard.
    Runs {
        #[command(subcommand)]
        command: RunsCommand,
    },
    /// Show what a bundle holds, checking everything but signatures and task ids.
    Inspect {
        bundle: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum RunsCommand {
    /// Download a run's outputs (patch, logs, trajectory) into OUT/<role>, each checked
    /// against its SHA-256 in the signed manifest. Private outputs need a session
    /// (`rexbench login`) that reaches them.
    Download {
        #[arg(long)]
        server: String,
        /// The run's number (the last part of its page's address).
        run: i64,
        /// A new folder [default: run-RUN].
        #[arg(long)]
        out: Option<PathBuf>,
        /// A token [default: the session `rexbench login` saved for this server].
        #[arg(long, env = "REXBENCH_TOKEN", hide_env_values = true)]
        token: Option<String>,
    },
}

/// How runs are evaluated: the task cards, the gold results, the codebases and the
/// executor (`evaluate` and `reproduce`).
#[derive(Debug, clap::Args)]
struct RunArgs {
    /// A directory of task cards [default: the cards built into this binary].
    #[arg(long)]
    tasks: Option<PathBuf>,
    /// The private gold directory (<task>/gold.toml).
    #[arg(long)]
    gold: Option<PathBuf>,
    /// Where the tasks' base codebases are (<task>/), for cards that do not name one.
    #[arg(long)]
    codebases: Option<PathBuf>,
    /// Where the runs execute: `local` (this machine, --jobs at once) or `slurm`
    /// (one batch job per run; the results directory must be on a filesystem the
    /// cluster's nodes share).
    #[arg(long, value_enum, default_value_t = ExecutorKind::Local)]
    executor: ExecutorKind,
    /// Runs at once on this machine (--executor local) [default: 1].
    #[arg(long)]
    jobs: Option<usize>,
    /// Run experiments in a container: a command template with {workdir}, {name} and
    /// {command}, e.g. 'podman run --rm --name {name} --user 65534:65534 --network none --read-only
    /// --cap-drop ALL --security-opt no-new-privileges -v {workdir}:/work -w /work IMAGE {command}'
    /// or, inside Slurm jobs, 'apptainer exec --containall --no-home --net --network none --nv
    /// --bind {workdir}:/work --pwd /work IMAGE {command}'. A template without the flags that
    /// sandbox the experiment is refused (the runner's README, "The sandbox").
    #[arg(long)]
    container: Option<String>,
    /// Run the agent's code without a sandbox, with your rights (`evaluate` only: your
    /// own agent on your own machine; `reproduce` never runs unsandboxed).
    #[arg(long)]
    unsandboxed: bool,
    /// A folder the sandbox mounts read-only at its own path, beside the system (a
    /// Python or CUDA installation outside /usr); repeatable. Never one that is or holds
    /// the gold, the results, the outputs, a home or the root.
    #[arg(long = "sandbox-ro", value_name = "DIR")]
    sandbox_ro: Vec<PathBuf>,
    /// A device the sandbox passes through (/dev/nvidia0, …); repeatable.
    #[arg(long = "sandbox-dev", value_name = "DEVICE")]
    sandbox_dev: Vec<PathBuf>,
    /// A variable of this environment the sandbox passes in, beside those the task's
    /// card declares; repeatable. Never one of the runner's own (REXBENCH_…).
    #[arg(long = "sandbox-env", value_name = "NAME")]
    sandbox_env: Vec<String>,
    #[command(flatten)]
    slurm: Box<SlurmArgs>,
}

/// Which command the run arguments are for: `reproduce` never runs unsandboxed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Evaluate,
    Reproduce,
}

impl RunArgs {
    /// The evaluation's options (its outputs and results folders to be set), and the
    /// task cards' folder, which must live as long as they are used.
    fn options(
        self,
        outputs: PathBuf,
        out: PathBuf,
        purpose: Purpose,
    ) -> anyhow::Result<(evaluate::Options, TaskDir)> {
        if self.unsandboxed && purpose == Purpose::Reproduce {
            anyhow::bail!(
                "reproduce never runs unsandboxed: a submitter's patch runs on the maintainers' machine, beside \
                 their gold, keys and token (SECURITY.md, \"The sandbox\")"
            );
        }
        let private: Vec<&Path> = [self.gold.as_deref(), Some(out.as_path()), Some(outputs.as_path())]
            .into_iter()
            .flatten()
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        let confinement = if self.unsandboxed {
            if !(self.sandbox_ro.is_empty() && self.sandbox_dev.is_empty() && self.sandbox_env.is_empty()) {
                anyhow::bail!(
                    "--sandbox-ro, --sandbox-dev and --sandbox-env shape the sandbox: not with --unsandboxed"
                );
            }
            Confinement::Unsandboxed
        } else {
            let settings = sandbox::Settings {
                network: false,
                env: self.sandbox_env,
                readonly: self.sandbox_ro,
                devices: self.sandbox_dev,
                // Each task's card sets its own (`Confinement::for_task`).
                limits: Default::default(),
            };
            sandbox::check_settings(&settings, &private).map_err(anyhow::Error::msg)?;
            Confinement::Sandboxed(settings)
        };
        let executor = match self.container {
            Some(t) => {
                let executor = Executor::container(&t)?;
                if let (Executor::Container { template }, Confinement::Sandboxed(_)) =
                    (&executor, &confinement)
                {
                    sandbox::lint_container(template, &private).map_err(anyhow::Error::msg)?;
                }
                executor
            }
            None => Executor::Local,
        };
        // Here, and so before anything is written, unless the runs go to Slurm's nodes
        // (each job makes its own sandbox, and a node without one fails its runs).
        if let (Executor::Local, Confinement::Sandboxed(s), ExecutorKind::Local) =
            (&executor, &confinement, self.executor)
        {
            sandbox::Sandbox::new(s).map_err(|why| {
                anyhow::anyhow!(
                    "no sandbox can be made here: {why}; install bubblewrap (apt-get install bubblewrap){}",
                    if purpose == Purpose::Evaluate {
                        ", or, for your own agent on your own machine, run with --unsandboxed"
                    } else {
                        ""
                    }
                )
            })?;
        }
        let slurm = match self.executor {
            ExecutorKind::Slurm if self.jobs.is_some() => anyhow::bail!(
                "--jobs is for --executor local; under Slurm, --max-jobs limits the runs queued or running at once"
            ),
            ExecutorKind::Slurm => Some(self.slurm.options()),
            ExecutorKind::Local => {
                if let Some(flag) = self.slurm.given() {
                    anyhow::bail!("{flag} is for --executor slurm");
                }
                None
            }
        };
        if confinement == Confinement::Unsandboxed && io::stderr().is_terminal() {
            eprintln!(
                "warning: --unsandboxed: each experiment runs the agent's code with your rights \
                 (see \"The sandbox\" in the runner's README)"
            );
        }
        let builtin_tasks = self.tasks.is_none();
        let tasks = TaskDir::open(self.tasks.as_deref())?;
        let opts = evaluate::Options {
            tasks_dir: tasks.path().to_owned(),
            outputs,
            out,
            gold: self.gold,
            codebases: self.codebases,
            jobs: self.jobs.unwrap_or(1),
            executor,
            confinement,
            slurm,
            builtin_tasks,
            heldout: None,
        };
        Ok((opts, tasks))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ExecutorKind {
    Local,
    Slurm,
}

/// What a cluster needs to know about the jobs of `evaluate --executor slurm`.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Slurm (--executor slurm)")]
struct SlurmArgs {
    /// The partition to submit to [default: the cluster's default].
    #[arg(long)]
    partition: Option<String>,
    /// The account to charge.
    #[arg(long)]
    account: Option<String>,
    /// The quality of service.
    #[arg(long)]
    qos: Option<String>,
    /// Generic resources per run, as sbatch's --gres (e.g. gpu:a100:1).
    #[arg(long)]
    gres: Option<String>,
    /// GPUs per run, as sbatch's --gpus (e.g. 1 or a100:1).
    #[arg(long)]
    gpus: Option<String>,
    /// CPUs per run (sbatch's --cpus-per-task).
    #[arg(long)]
    cpus_per_run: Option<u32>,
    /// Memory per run, as sbatch's --mem (e.g. 64G).
    #[arg(long)]
    mem: Option<String>,
    /// Slurm's time limit per job, as sbatch's --time [default: the task's timeout_s in
    /// minutes, rounded up, plus 5]. The task's own limit is enforced to the second
    /// inside the job whatever this says.
    #[arg(long)]
    time: Option<String>,
    /// Runs queued or running in Slurm at once [default: 500].
    #[arg(long)]
    max_jobs: Option<usize>,
    /// How many times a run whose job ended without a result is submitted again
    /// [default: 2].
    #[arg(long)]
    resubmit: Option<u32>,
    /// One more argument for every sbatch, e.g. --sbatch-arg=--constraint=a100; repeat
    /// for several.
    #[arg(long = "sbatch-arg", allow_hyphen_values = true)]
    sbatch_args: Vec<String>,
}

impl SlurmArgs {
    /// The first Slurm option given, if any.
    fn given(&self) -> Option<&'static str> {
        [
            ("--partition", self.partition.is_some()),
            ("--account", self.account.is_some()),
            ("--qos", self.qos.is_some()),
            ("--gres", self.gres.is_some()),
            ("--gpus", self.gpus.is_some()),
            ("--cpus-per-run", self.cpus_per_run.is_some()),
            ("--mem", self.mem.is_some()),
            ("--time", self.time.is_some()),
            ("--max-jobs", self.max_jobs.is_some()),
            ("--resubmit", self.resubmit.is_some()),
            ("--sbatch-arg", !self.sbatch_args.is_empty()),
        ]
        .into_iter()
        .find_map(|(flag, given)| given.then_some(flag))
    }

    fn options(self) -> crate::slurm::Options {
        crate::slurm::Options {
            partition: self.partition,
            account: self.account,
            qos: self.qos,
            gres: self.gres,
            gpus: self.gpus,
            cpus_per_run: self.cpus_per_run,
            mem: self.mem,
            time: self.time,
            max_jobs: self.max_jobs.unwrap_or(500),
            resubmit: self.resubmit.unwrap_or(2),
            sbatch_args: self.sbatch_args,
        }
    }
}

/// Exit statuses: 0 valid / done, 1 invalid bundle, 2 anything else went wrong.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(code) => code,
        Err(e) => {
            // A path from a hostile folder may hold a terminal's control characters: they
            // are shown escaped, never sent to the terminal.
            eprintln!("rexbench: {}", shown(&format!("{e:#}")));
            ExitCode::from(2)
        }
    }
}

mod commands;

fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Keygen { out, force } => {
            let key = SecretKey::generate();
            let (secret, public) = keyfile::write_pair(&key, &out, force)?;
            println!("wrote {} (secret: keep it private) and {}", secret.display(), public.display());
            println!("keyid {}", key.public_key().keyid());
            Ok(ExitCode::SUCCESS)
        }
        Command::ImportPublished { keys, out, tasks, created_at } => {
            commands::import_published(keys, out, tasks, created_at)
        }
        Command::Evaluate { outputs, out, heldout, run } => {
            commands::evaluate_outputs(outputs, out, heldout, run)
        }
        Command::Reproduce { server, token_file, key, out, bundle, dry_run, run } => {
            let token = crate::keyfile::admin_token(token_file.as_deref(), &server)?;
            commands::reproduce(server, token, key, out, bundle, dry_run, run)
        }
        Command::Variants { gold } => {
            let all = benchmark::heldout::all(&gold)?;
            if all.is_empty() {
                println!(
                    "no held-out variants under {} (<task>/{}/<name>/)",
                    gold.display(),
                    benchmark::heldout::DIR
                );
            }
            for v in &all {
                println!(
                    "{} {} {}  ({} replaced: {})",
                    v.task,
                    v.digest,
                    v.name,
                    v.files.len(),
                    v.files.join(", ")
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Keep { report, cgroups, command } => {
            let code = crate::keep::run(&report, &cgroups, &command);
            Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
        }
        Command::SlurmJob { dir } => {
            catch_job_interrupts()?;
            let ran = crate::slurm::job::run(&dir, &evaluate::INTERRUPTED)?;
            eprintln!("rexbench slurm-job: {}", serde_json::to_string(&ran).expect("serializes"));
            Ok(ExitCode::SUCCESS)
        }
        Command::ImportHarbor { jobs, out, hint, tasks, gold, harbor_version, foreign_tasks } => {
            commands::import_harbor(jobs, out, hint, tasks, gold, harbor_version, foreign_tasks)
        }
        Command::TaskDigest { dirs } => {
            // Every folder's digest before any is printed: a refused folder prints none.
            let digests = dirs
                .iter()
                .map(|dir| crate::harbor::digest::task_digest(dir))
                .collect::<Result<Vec<_>, _>>()?;
            for (digest, dir) in digests.iter().zip(&dirs) {
                println!("{digest}  {}", dir.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Pack { results, agent, keys, out, created_at } => {
            commands::pack_results(results, agent, keys, out, created_at)
        }
        Command::Verify { bundle, trust, tasks, tasks_dir, task_sets, json } => {
            let keys: Vec<PublicKey> =
                trust.iter().map(|p| keyfile::read_public(p)).collect::<Result<_, _>>()?;
            let mut known: Vec<String> = REXBENCH_TASKS.iter().map(|t| t.to_string()).chain(tasks).collect();
            // Spec §4j: the runs of a task whose check is private state no metrics.
            let private = |cards: std::collections::BTreeMap<String, crate::task::TaskCard>| -> Vec<String> {
                cards.into_values().filter(|c| c.check_is_private()).map(|c| c.id).collect()
            };
            // Spec §5a: the claims a board holds a bundle to, as the cards give them.
            // The built-in cards' folder goes when its `TaskDir` does: the digests read it.
            let builtin_dir = TaskDir::builtin()?;
            let builtin = builtin_dir.cards()?;
            let mut claims = crate::taskset::claims(&builtin)?;
            let mut private_checks = private(builtin);
            if let Some(dir) = tasks_dir {
                let cards = TaskDir::given(&dir)?.cards()?;
                known.extend(cards.keys().cloned());
                let given = crate::taskset::claims(&cards)?;
                claims.task_sets.extend(given.task_sets);
                claims.tasks.extend(given.tasks);
                private_checks.extend(private(cards));
            }
            claims.task_sets.extend(task_sets);
            let verifier = Verifier::new(keys, known).with_private_checks(private_checks).holding(claims);
            report(&verifier, &bundle, "VALID", json)
        }
        Command::Submit { bundle, server } => match crate::submit::submit(&bundle, &server)? {
            crate::submit::Verdict::Accepted { status, body } => {
                let what = match status {
                    201 => "accepted",
                    202 => "held until the maintainers approve your key",
                    _ => "already stored",
                };
                println!("{what}: {body}");
                Ok(ExitCode::SUCCESS)
            }
            crate::submit::Verdict::Refused { status, code, message } => {
                println!("REFUSED ({status})  {code}: {message}");
                Ok(ExitCode::from(1))
            }
        },
        Command::Audit { server, agent, trust, token } => {
            let keys: Vec<PublicKey> =
                trust.iter().map(|p| keyfile::read_public(p)).collect::<Result<_, _>>()?;
            let token = token.or_else(|| saved(&server));
            let audit = crate::audit::audit(&server, &agent, &keys, token.as_deref())?;
            println!("{audit}");
            Ok(if audit.passed() { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Login { server, key, save } => commands::login(server, key, save),
        Command::Register { server, key, owner, contact, url, note, status } => {
            let secret = crate::keyfile::read_secret(&key)?;
            let answer = if status {
                let keyid = secret.public_key().keyid().to_string();
                crate::register::status(&server, &keyid, saved(&server).as_deref())?
            } else {
                let request = crate::register::Request {
                    owner: owner.as_deref().unwrap_or_default(),
                    contact: contact.as_deref().unwrap_or_default(),
                    url: url.as_deref(),
                    note: note.as_deref(),
                };
                crate::register::register(&server, &secret, &request)?
            };
            print!("{}", shown(&crate::register::describe(&server, &answer)));
            if !status {
                println!(
                    "  your key may submit now: its bundles are held for you and the maintainers until they decide \
                     (`rexbench register --status --server {} --key {}`)",
                    shown(&server),
                    shown(&key.display().to_string())
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Runs { command: RunsCommand::Download { server, run, out, token } } => {
            let token = token.or_else(|| saved(&server));
            let out = out.unwrap_or_else(|| PathBuf::from(format!("run-{run}")));
            for path in crate::login::download(&server, token.as_deref(), run, &out)? {
                println!("{}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Inspect { bundle, json } => report(&Verifier::inspector(), &bundle, "READABLE", json),
    }
}

/// Ctrl-C, and SIGTERM (how Slurm and `timeout` stop a command): the first asks the
/// command to stop cleanly (`on_first`); a second stops it at once, for a person who
/// insists.
fn catch_interrupts(on_first: fn()) -> anyhow::Result<()> {
    static SEEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    ctrlc::set_handler(move || {
        if SEEN.swap(true, std::sync::atomic::Ordering::Relaxed) {
            eprintln!("rexbench: interrupted again: stopping now");
            std::process::exit(130);
        }
        on_first();
    })
    .context("cannot catch Ctrl-C")
}

/// A Slurm job's stop: Slurm may signal the job's processes more than once, and the job
/// must always get to write its status, so every signal only asks it to stop.
fn catch_job_interrupts() -> anyhow::Result<()> {
    ctrlc::set_handler(stop_evaluating).context("cannot catch SIGTERM")
}

/// Evaluating stops starting runs and kills the experiments under way.
fn stop_evaluating() {
    evaluate::INTERRUPTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Importing and packing stop at their next read, and remove what they staged.
fn stop_reading() {
    benchmark::confined::stop_reading();
}

/// What a command that stopped reading when interrupted answers.
fn interrupted_or(result: anyhow::Result<ExitCode>) -> anyhow::Result<ExitCode> {
    match result {
        Err(_) if benchmark::confined::stopped() => {
            eprintln!("rexbench: interrupted; nothing was written");
            Ok(ExitCode::from(130))
        }
        other => other,
    }
}

/// `--created-at` as given (checked), or now; to the second, in UTC.
fn rfc3339(arg: Option<String>) -> anyhow::Result<String> {
    let t = match arg {
        Some(t) => OffsetDateTime::parse(&t, &Rfc3339).with_context(|| format!("--created-at `{t}`"))?,
        None => OffsetDateTime::now_utc(),
    };
    Ok(pack::timestamp(t))
}

/// The token `rexbench login` saved for `server`, if any is live.
fn saved(server: &str) -> Option<String> {
    crate::login::saved_token(server, &crate::login::default_path()?)
}

fn report(verifier: &Verifier, path: &Path, verdict: &str, json: bool) -> anyhow::Result<ExitCode> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut records = summary::Records::default();
    match verifier.verify_into(BufReader::with_capacity(256 * 1024, file), &mut records) {
        Ok(v) => {
            let marks =
                if v.manifest.reproduction.is_some() { None } else { Some(marks(verifier, path, &v)?) };
            if json {
                println!("{}", summary::json(&v, marks.as_deref()));
            } else {
                print!("{}", summary::text(verdict, &v, &records, marks.as_deref()));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) if e.class() == bundle::ErrorClass::Io => {
            Err(anyhow::Error::new(e).context(path.display().to_string()))
        }
        Err(e) => {
            if json {
                println!("{}", summary::error_json(&e));
            } else {
                println!("INVALID  {}: {e}", e.code());
            }
            Ok(ExitCode::from(1))
        }
    }
}

/// The marks a board gives the runs of the bundle at `path` (verified as `v`) from the
/// bundle alone, priced with the built-in table: a second pass that keeps the patches and
/// trajectories.
fn marks(
    verifier: &Verifier,
    path: &Path,
    v: &bundle::VerifiedBundle,
) -> anyhow::Result<Vec<bundle::RunMarks>> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut reading = benchmark::marks::WantedArtifacts::new(&v.manifest);
    verifier
        .verify_into(BufReader::with_capacity(256 * 1024, file), &mut reading)
        .with_context(|| format!("{} changed while it was read", path.display()))?;
    let prices = benchmark::cost::Prices::builtin();
    Ok(benchmark::marks::of(prices, &v.manifest, &reading.read).by_run(&v.manifest))
}

/// `--task-set "NAME VERSION DIGEST"`: the name may hold spaces, the version and digest not.
fn parse_task_set(text: &str) -> Result<bundle::TaskSet, String> {
    let mut words = text.rsplitn(3, ' ');
    let (Some(digest), Some(version), Some(name)) = (words.next(), words.next(), words.next()) else {
        return Err(format!("a task set is \"NAME VERSION DIGEST\", not {text:?}"));
    };
    if bundle::Digest::from_hex(digest).is_none() {
        return Err(format!("{digest:?} is not a task-set digest (64 lowercase hex digits)"));
    }
    Ok(bundle::TaskSet {
        digest: digest.to_owned(),
        name: name.trim().to_owned(),
        version: version.to_owned(),
    })
}

/// `text` with every control character but a newline escaped (`\u{1b}`), so that a name
/// read from a folder someone else filled cannot move the cursor or rewrite the line.
fn shown(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() && c != '\n' { c.escape_unicode().to_string() } else { c.to_string() })
        .collect()
}
