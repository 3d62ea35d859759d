//! Honest numbers: intervals, rank ranges and paired comparisons, by a cluster bootstrap.
//!
//! RExBench runs are clustered: 5 runs of an agent on a task share that task's
//! difficulty, and the 12 tasks are a small sample of the extensions one could ask for.
//! Treating 60 runs as independent would make intervals far too narrow. So each
//! bootstrap replicate first draws the tasks, with replacement, then redraws each
//! drawn task's runs from that task's observed success rate (a binomial draw; run-level
//! noise), and recomputes every agent's pooled success rate. All agents share each
//! replicate's draw of tasks, which makes comparisons between agents, and between an
//! agent's own hint conditions, paired.
//!
//! - An interval is the 2.5th to 97.5th percentile (nearest rank) of the replicates.
//! - A rank range is the same percentiles of the agent's rank (1 = best, ties sharing the
//!   better rank) across replicates.
//! - Two agents are told apart when the 95% interval of their paired difference excludes
//!   zero. Agents are grouped, best first, with the group's leader until one is told
//!   apart from it, which starts the next group.
//!
//! A fixed seed makes the same data always give the same numbers. The tasks each
//! replicate draws come from one stream that all agents share; each agent's runs are
//! redrawn from its own streams (from the seed, its id and the measure). So an agent's
//! intervals, uplift and reliability depend on its own results alone: another submission
//! leaves them as they were (only ranks and groups move), and after a change only the
//! changed agents' are made again.

mod sign;

pub use sign::sign_test;

use serde::{Deserialize, Serialize};
use vocab::Hint;

use rand_pcg::Pcg64Mcg;
use rand_pcg::rand_core::{Rng, SeedableRng};

/// Replicates per analysis: percentiles at 2.5% and 97.5% then rest on 25 replicates each.
pub const REPLICATES: usize = 1000;
pub const SEED: u64 = 20_250_629;

/// One agent's counts on one task under one hint condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cell {
    pub successes: u32,
    pub executed: u32,
    /// Runs that count (infrastructure failures do not).
    pub counted: u32,
    /// Counted runs whose execution is known (all, unless the source publishes only
    /// whether each run succeeded).
    pub exec_counted: u32,
    /// Whether it has fewer valid attempts than the benchmark asks (spec §4f).
    pub short: bool,
}

/// One agent's cells: by task (in the analysis' task order), by hint condition (none,
/// hints, detailed). `id` names the agent's results (the leaderboard uses bundle ids).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentCells {
    pub id: String,
    pub cells: Vec<[Option<Cell>; 3]>,
}

/// An estimate with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    /// Whether the interval lies wholly above or below zero (for differences).
    pub fn excludes_zero(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }
}

/// An interval under each hint condition; `None` where there is no counted run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IntervalsByHint {
    pub none: Option<Interval>,
    pub hints: Option<Interval>,
    pub detailed: Option<Interval>,
}

impl IntervalsByHint {
    /// From a function of the condition's position in [`Hint::ALL`].
    fn from_fn(f: impl Fn(usize) -> Option<Interval>) -> IntervalsByHint {
        IntervalsByHint { none: f(0), hints: f(1), detailed: f(2) }
    }

    pub fn get(&self, hint: Hint) -> Option<Interval> {
        match hint {
            Hint::None => self.none,
            Hint::Hints => self.hints,
            Hint::Detailed => self.detailed,
        }
    }
}

/// What hints change in final success: each hinted condition minus no hints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Uplift {
    pub hints: Option<Interval>,
    pub detailed: Option<Interval>,
}

impl Uplift {
    /// The uplift of `hint` over no hints (`None` for no hints itself).
    pub fn get(&self, hint: Hint) -> Option<Interval> {
        match hint {
            Hint::None => None,
            Hint::Hints => self.hints,
            Hint::Detailed => self.detailed,
        }
    }
}

/// The 2.5th and 97.5th percentiles of an agent's rank (1 = best).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RankRange {
    pub best: usize,
    pub worst: usize,
}

impl std::fmt::Display for RankRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.best == self.worst {
            write!(f, "{}", self.best)
        } else {
            write!(f, "{}–{}", self.best, self.worst)
        }
    }
}

/// What the bootstrap says about one agent, within its task set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AgentStats {
    /// The bundle the numbers are of.
    pub id: String,
    pub final_success: IntervalsByHint,
    pub execution_success: IntervalsByHint,
    pub uplift: Uplift,
    /// Plausible ranks by final success without hints; none for results that do not
    /// cover their task set without hints, which are not ranked.
    pub rank: Option<RankRange>,
    /// The group of agents it cannot be told apart from (1 = the best group).
    pub group: Option<usize>,
    /// How many agents were ranked together (its task set's complete results).
    pub of: usize,
    /// pass@k and pass^k under each hint condition.
    pub reliability: ReliabilityByHint,
}

/// How reliably an agent solves a task under one condition, from each task's n attempts
/// and c successes, by the unbiased estimators: pass@k = 1 − C(n−c, k)/C(n, k) (at least
/// one of k attempts succeeds) and pass^k = C(c, k)/C(n, k) (all k do), for k = 1…n,
/// averaged over the tasks (k up to the fewest attempts on one), each with its 95% interval from the
/// same cluster bootstrap as the rates (tasks redrawn, then each task's successes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Reliability {
    /// pass@k for k = 1, 2, …, the fewest attempts on a task (`pass_at[0]` is k = 1).
    pub pass_at: Vec<Interval>,
    /// pass^k for the same k; the last is the share of tasks solved every time.
    pub pass_all: Vec<Interval>,
}

impl Reliability {
    /// pass^n at the fewest attempts n: the share of tasks solved in every attempt.
    pub fn every_time(&self) -> Option<Interval> {
        self.pass_all.last().copied()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReliabilityByHint {
    pub none: Option<Reliability>,
    pub hints: Option<Reliability>,
    pub detailed: Option<Reliability>,
}

impl ReliabilityByHint {
    pub fn get(&self, hint: Hint) -> Option<&Reliability> {
        match hint {
            Hint::None => self.none.as_ref(),
            Hint::Hints => self.hints.as_ref(),
            Hint::Detailed => self.detailed.as_ref(),
        }
    }
}

/// C(n, k) / C(m, k) as a product, exact enough for the few attempts a task has.
fn choose_ratio(n: u32, m: u32, k: u32) -> f64 {
    if k > n {
        return 0.0;
    }
    (0..k).map(|i| f64::from(n - i) / f64::from(m - i)).product()
}

/// pass@k of c successes in n attempts (k ≤ n).
pub fn pass_at(n: u32, c: u32, k: u32) -> f64 {
    1.0 - choose_ratio(n - c, n, k)
}

/// pass^k of c successes in n attempts (k ≤ n).
pub fn pass_all(n: u32, c: u32, k: u32) -> f64 {
    choose_ratio(c, n, k)
}

/// The reliability of one agent under condition `h`, with bootstrap intervals. Only
/// k up to the fewest attempts on a task is given, so every task has each k.
fn reliability(agent: &AgentCells, h: usize, replicates: usize, seed: u64) -> Option<Reliability> {
    let cells: Vec<(u32, u32)> = agent
        .cells
        .iter()
        .filter_map(|c| c[h])
        .filter(|c| c.counted > 0)
        .map(|c| (c.counted, c.successes))
        .collect();
    let fewest = cells.iter().map(|(n, _)| *n).min()?;
    let ks = fewest as usize;
    // Per task and number of successes a draw can give, pass@k then pass^k for each k,
    // side by side in one table: a replicate adds up one row per task drawn.
    let width = 2 * ks;
    let mut starts = Vec::with_capacity(cells.len());
    let mut table = Vec::new();
    for (n, _) in &cells {
        starts.push(table.len());
        for c in 0..=*n {
            table.extend((1..=fewest).map(|k| pass_at(*n, c, k)));
            table.extend((1..=fewest).map(|k| pass_all(*n, c, k)));
        }
    }
    let tasks = cells.len();
    // Both measures' means over `picked` tasks (with their successes), into `sums`.
    let mean_over = |picked: &[(usize, u32)], sums: &mut [f64]| {
        sums.fill(0.0);
        for (t, c) in picked {
            let row = &table[starts[*t] + *c as usize * width..][..width];
            for (sum, v) in sums.iter_mut().zip(row) {
                *sum += v;
            }
        }
        for sum in sums.iter_mut() {
            *sum /= tasks as f64;
        }
    };
    let observed: Vec<(usize, u32)> = cells.iter().enumerate().map(|(t, (_, c))| (t, *c)).collect();
    let mut estimates = vec![0.0; width];
    mean_over(&observed, &mut estimates);
    let mut sums = vec![0.0; width];
    let draws: Vec<Draw> = cells.iter().map(|(n, c)| Draw::new(*c, *n)).collect();
    let mut rng = Sampler::new(seed);
    let mut reps = vec![Vec::with_capacity(replicates); width];
    let mut drawn = vec![(0usize, 0u32); tasks];
    for _ in 0..replicates {
        for d in drawn.iter_mut() {
            let t = rng.below(tasks);
            *d = (t, draws[t].sample(rng.uniform()));
        }
        mean_over(&drawn, &mut sums);
        for (rep, v) in reps.iter_mut().zip(&sums) {
            rep.push(*v);
        }
    }
    let (at, all) = (&estimates[..ks], &estimates[ks..]);
    let (at_reps, all_reps) = (&reps[..ks], &reps[ks..]);
    let intervals = |estimates: &[f64], reps: &[Vec<f64>]| -> Vec<Interval> {
        estimates.iter().zip(reps).filter_map(|(e, r)| interval(Some(*e), r)).collect()
    };
    Some(Reliability { pass_at: intervals(at, at_reps), pass_all: intervals(all, all_reps) })
}

/// The reliability of an agent under each condition (its own seed: the rates' draws stay
/// as they are).
fn reliability_by_hint(agent: &AgentCells, replicates: usize, seed: u64) -> ReliabilityByHint {
    let r = |h: usize| reliability(agent, h, replicates, seed ^ RELIABILITY_SEED);
    ReliabilityByHint { none: r(0), hints: r(1), detailed: r(2) }
}

/// Mixed into the seed of the reliability bootstrap.
const RELIABILITY_SEED: u64 = 0x5eed_0f_9a55;

/// A paired comparison of two agents over the tasks both ran: B minus A.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Comparison {
    /// By hint condition; `None` where they share no task with runs.
    pub difference: IntervalsByHint,
    pub shared_tasks: usize,
}

/// Entries of a [`Draw`]'s table counted together: 5 runs (6 outcomes) in one block.
const BLOCK: usize = 8;

/// Draws from Binomial(n, k/n) by inverse CDF: one uniform per draw.
#[derive(Debug)]
struct Draw {
    cdf: Vec<f64>,
}

impl Draw {
    fn new(k: u32, n: u32) -> Draw {
        let p = f64::from(k) / f64::from(n);
        let mut cdf = Vec::with_capacity(n as usize + 1);
        let mut acc = 0.0;
        for j in 0..=n {
            acc += binomial(n, j) * p.powi(j as i32) * (1.0 - p).powi((n - j) as i32);
            cdf.push(acc);
        }
        // Rounding must not leave a draw of 1.0 without an outcome.
        *cdf.last_mut().expect("n + 1 entries") = f64::INFINITY;
        // Whole blocks, so that counting unrolls; an infinite entry is never at or below a
        // draw, so the padding counts nothing.
        cdf.resize(cdf.len().next_multiple_of(BLOCK), f64::INFINITY);
        Draw { cdf }
    }

    /// The first outcome whose cumulative probability exceeds `u`: the number of entries
    /// at or below it (the entries rise), counted without a branch on the random `u`.
    fn sample(&self, u: f64) -> u32 {
        let block = |b: &[f64]| b.iter().map(|c| u32::from(*c <= u)).sum::<u32>();
        self.cdf.chunks_exact(BLOCK).map(block).sum()
    }
}

fn binomial(n: u32, k: u32) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * f64::from(n - i) / f64::from(i + 1))
}

struct Sampler {
    rng: Pcg64Mcg,
}

impl Sampler {
    fn new(seed: u64) -> Sampler {
        Sampler { rng: Pcg64Mcg::new(u128::from(seed) | (u128::from(seed) << 64) | 1) }
    }

    /// An agent's own stream for one measure and condition (`stream`): from the seed, the
    /// agent's id and the stream, so an agent's draws are the same whichever agents are
    /// analysed beside it, and each measure can be drawn without the others.
    fn for_agent(seed: u64, id: &str, stream: u64) -> Sampler {
        // FNV-1a of the id and the stream: stable across builds and platforms, as the
        // numbers must be.
        let hash = id
            .bytes()
            .chain(stream.to_le_bytes())
            .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        Sampler { rng: Pcg64Mcg::seed_from_u64(seed ^ hash) }
    }

    fn uniform(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.rng.next_u64()) * n as u128) >> 64) as usize
    }
}

/// A cell ready to sample: (successes draw, runs counted, and where execution is known,
/// the executed draw and its runs).
type ReadyCell = Option<(usize, u32, Option<(usize, u32)>)>;

/// The cells of all agents, with each cell's samplers prepared.
struct Prepared {
    /// [agent][task][hint].
    cells: Vec<Vec<[ReadyCell; 3]>>,
    draws: Vec<Draw>,
}

fn prepare(agents: &[&AgentCells]) -> Prepared {
    let mut keys: Vec<(u32, u32)> = Vec::new();
    let mut draws = Vec::new();
    let mut index = |k: u32, n: u32| match keys.iter().position(|x| *x == (k, n)) {
        Some(i) => i,
        None => {
            keys.push((k, n));
            draws.push(Draw::new(k, n));
            draws.len() - 1
        }
    };
    let mut cells = Vec::with_capacity(agents.len());
    for agent in agents {
        let mut by_task = Vec::with_capacity(agent.cells.len());
        for by_hint in &agent.cells {
            let mut prepared = [None; 3];
            for (h, cell) in by_hint.iter().enumerate() {
                if let Some(c) = cell.filter(|c| c.counted > 0) {
                    let executed =
                        (c.exec_counted > 0).then(|| (index(c.executed, c.exec_counted), c.exec_counted));
                    prepared[h] = Some((index(c.successes, c.counted), c.counted, executed));
                }
            }
            by_task.push(prepared);
        }
        cells.push(by_task);
    }
    Prepared { cells, draws }
}

/// The tasks each replicate draws, `tasks` per replicate, one after the other. Every
/// agent's replicates use these same draws: what pairs their comparisons.
fn draw_tasks(tasks: usize, replicates: usize, seed: u64) -> Vec<usize> {
    let mut rng = Sampler::new(seed);
    (0..tasks * replicates).map(|_| rng.below(tasks)).collect()
}

/// What a replicate's rate counts: final success, or execution success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Measure {
    Success,
    Executed,
}

/// One agent's replicated rate of `measure` under hint condition `h`: one per replicate
/// over the shared task draws (`drawn`, see [`draw_tasks`]), each drawn task's runs
/// redrawn from the agent's own stream for that measure and condition
/// ([`Sampler::for_agent`]); NaN where the replicate drew no task the agent ran there.
/// Only the tasks `only` keeps (by task) count, where it is given: a paired change.
#[allow(clippy::too_many_arguments)]
fn replicate(
    id: &str,
    cells: &[[ReadyCell; 3]],
    h: usize,
    measure: Measure,
    draws: &[Draw],
    drawn: &[usize],
    seed: u64,
    only: Option<&[bool]>,
) -> Vec<f64> {
    let mut rng = Sampler::for_agent(seed, id, 2 * h as u64 + u64::from(measure == Measure::Executed));
    // Per task: the draw and the runs it counts, 0 runs where there is nothing to draw.
    let series: Vec<(usize, u32)> = cells
        .iter()
        .enumerate()
        .map(|(t, c)| match (c[h], measure) {
            _ if only.is_some_and(|o| !o[t]) => (0, 0),
            (Some((draw, runs, _)), Measure::Success)
            | (Some((_, _, Some((draw, runs)))), Measure::Executed) => (draw, runs),
            _ => (0, 0),
        })
        .collect();
    drawn
        .chunks_exact(cells.len().max(1))
        .map(|drawn| {
            let (mut k, mut n) = (0u32, 0u32);
            for &t in drawn {
                let (draw, runs) = series[t];
                if runs > 0 {
                    k += draws[draw].sample(rng.uniform());
                    n += runs;
                }
            }
            if n > 0 { f64::from(k) / f64::from(n) } else { f64::NAN }
        })
        .collect()
}

/// The 2.5th and 97.5th percentiles (nearest rank) of the values that are numbers.
fn percentiles(values: &[f64]) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    // The two ranks by selection, not a whole sort: the same values, found in linear time.
    let rank = |q: f64, n: usize| ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
    let (lo, hi) = (rank(0.025, v.len()), rank(0.975, v.len()));
    let high = *v.select_nth_unstable_by(hi, f64::total_cmp).1;
    let low = *v[..=hi].select_nth_unstable_by(lo, f64::total_cmp).1;
    Some((low, high))
}

/// Final success pooled over the tasks.
fn pooled(cells: &[[Option<Cell>; 3]], h: usize) -> Option<f64> {
    pooled_by(cells, h, |c| (c.successes, c.counted))
}

fn pooled_by(cells: &[[Option<Cell>; 3]], h: usize, f: fn(&Cell) -> (u32, u32)) -> Option<f64> {
    let (k, n) =
        cells.iter().filter_map(|c| c[h]).map(|c| f(&c)).fold((0, 0), |(k, n), (a, b)| (k + a, n + b));
    (n > 0).then(|| f64::from(k) / f64::from(n))
}

fn interval(estimate: Option<f64>, replicates: &[f64]) -> Option<Interval> {
    let estimate = estimate?;
    let (low, high) = percentiles(replicates)?;
    Some(Interval { estimate, low, high })
}

fn difference(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| y - x).collect()
}

/// Whether results cover every task of their set without hints (at least one counted
/// run on each), with the valid attempts the benchmark asks wherever they have runs:
/// only such results are ranked.
pub fn covers(agent: &AgentCells) -> bool {
    agent.cells.iter().all(|c| c[0].is_some_and(|c| c.counted > 0))
        && agent.cells.iter().flatten().flatten().all(|c| !c.short)
}

/// An agent's own numbers from an earlier analysis (its intervals, uplift and
/// reliability; its rank, group and `of` are made again), given only where they were made
/// from the same cells. They depend on nothing else (its id, its cells, the replicates and
/// the seed), so an analysis after a change makes them only for the agents it changed.
pub type Earlier<'a> = &'a (dyn Fn(&AgentCells) -> Option<AgentStats> + Sync);

/// The statistics of one task set's results: those that cover it ranked together
/// ([`analyse`]), the others each described over the tasks it ran, without a rank.
pub fn analyse_set(agents: &[AgentCells], replicates: usize, seed: u64) -> Vec<AgentStats> {
    analyse_set_after(agents, replicates, seed, &|_| None)
}

/// [`analyse_set`], taking each agent's own numbers from `earlier` where it has them.
pub fn analyse_set_after(
    agents: &[AgentCells],
    replicates: usize,
    seed: u64,
    earlier: Earlier,
) -> Vec<AgentStats> {
    let (complete, partial): (Vec<AgentCells>, Vec<AgentCells>) = agents.iter().cloned().partition(covers);
    let tasks = agents.first().map_or(0, |a| a.cells.len());
    let mut out = analyse_on(&complete, tasks, replicates, seed, cores(), earlier);
    out.extend(each_agent(&partial, cores(), |_, agent| {
        let described = earlier(agent).or_else(|| {
            let own = AgentCells {
                id: agent.id.clone(),
                cells: agent.cells.iter().filter(|c| c.iter().any(Option::is_some)).copied().collect(),
            };
            analyse_on(std::slice::from_ref(&own), own.cells.len(), replicates, seed, 1, &|_| None).pop()
        });
        AgentStats {
            rank: None,
            group: None,
            of: 0,
            ..described.unwrap_or(AgentStats {
                id: agent.id.clone(),
                final_success: IntervalsByHint::default(),
                execution_success: IntervalsByHint::default(),
                uplift: Uplift::default(),
                rank: None,
                group: None,
                of: 0,
                reliability: ReliabilityByHint::default(),
            })
        }
    }));
    out
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// Intervals, rank ranges and groups for agents evaluated on the same `tasks` tasks.
pub fn analyse(agents: &[AgentCells], tasks: usize, replicates: usize, seed: u64) -> Vec<AgentStats> {
    analyse_on(agents, tasks, replicates, seed, cores(), &|_| None)
}

/// [`analyse`] on up to `threads` threads, each agent's own numbers from `earlier` where
/// it has them.
fn analyse_on(
    agents: &[AgentCells],
    tasks: usize,
    replicates: usize,
    seed: u64,
    threads: usize,
    earlier: Earlier,
) -> Vec<AgentStats> {
    if agents.is_empty() || tasks == 0 {
        return Vec::new();
    }
    let refs: Vec<&AgentCells> = agents.iter().collect();
    let prepared = prepare(&refs);
    let drawn = draw_tasks(tasks, replicates, seed);

    // Each agent's final success without hints in every replicate (for the ranks and
    // groups), and its own numbers: kept from before, or made from its replicates.
    let (mut stats, success): (Vec<AgentStats>, Vec<Vec<f64>>) = each_agent(agents, threads, |a, agent| {
        let rates = |h: usize, measure: Measure| {
            replicate(&agent.id, &prepared.cells[a], h, measure, &prepared.draws, &drawn, seed, None)
        };
        let none = rates(0, Measure::Success);
        let own = earlier(agent).unwrap_or_else(|| {
            let success = [None, Some(rates(1, Measure::Success)), Some(rates(2, Measure::Success))];
            let success = |h: usize| success[h].as_deref().unwrap_or(&none);
            let fs = |h: usize| interval(pooled(&agent.cells, h), success(h));
            let es = |h: usize| {
                let reps = rates(h, Measure::Executed);
                interval(pooled_by(&agent.cells, h, |c| (c.executed, c.exec_counted)), &reps)
            };
            // Paired (issue 75): over the tasks both conditions cover with their full
            // attempts, the estimate and every replicate alike.
            let up = |h: usize| {
                let both: Vec<bool> = agent
                    .cells
                    .iter()
                    .map(|c| [c[0], c[h]].iter().all(|c| c.is_some_and(|c| c.counted > 0 && !c.short)))
                    .collect();
                let paired: Vec<[Option<Cell>; 3]> =
                    agent.cells.iter().zip(&both).map(|(c, b)| if *b { *c } else { [None; 3] }).collect();
                let est = Some(pooled(&paired, h)? - pooled(&paired, 0)?);
                // Where every task either condition has is paired, the replicates made
                // already are the paired ones.
                if agent.cells.iter().zip(&both).all(|(c, b)| *b || (c[0].is_none() && c[h].is_none())) {
                    return interval(est, &difference(&none, success(h)));
                }
                let on = |h: usize| {
                    replicate(
                        &agent.id,
                        &prepared.cells[a],
                        h,
                        Measure::Success,
                        &prepared.draws,
                        &drawn,
                        seed,
                        Some(&both),
                    )
                };
                interval(est, &difference(&on(0), &on(h)))
            };
            AgentStats {
                id: agent.id.clone(),
                final_success: IntervalsByHint::from_fn(fs),
                execution_success: IntervalsByHint::from_fn(es),
                uplift: Uplift { hints: up(1), detailed: up(2) },
                rank: None,
                group: None,
                of: 0,
                reliability: reliability_by_hint(agent, replicates, seed),
            }
        });
        (AgentStats { rank: None, group: None, of: agents.len(), ..own }, none)
    })
    .into_iter()
    .unzip();

    for (s, rank) in stats.iter_mut().zip(rank_ranges(&success, replicates, threads)) {
        s.rank = rank;
    }

    // Groups: best first, each agent with its group's leader unless told apart from it.
    let estimate = |s: &AgentStats| s.final_success.none.map_or(f64::NEG_INFINITY, |i| i.estimate);
    let mut by_estimate: Vec<usize> = (0..agents.len()).collect();
    by_estimate.sort_by(|x, y| estimate(&stats[*y]).total_cmp(&estimate(&stats[*x])));
    let mut group = 1;
    let mut leader = by_estimate[0];
    for &a in &by_estimate {
        if a != leader {
            let d = interval(Some(0.0), &difference(&success[a], &success[leader]));
            if d.is_some_and(|d| d.low > 0.0) {
                group += 1;
                leader = a;
            }
        }
        stats[a].group = Some(group);
    }
    stats
}

/// Each agent's rank range by final success without hints (`success[agent][replicate]`).
/// Every replicate ranks the agents by their rates gathered side by side (read from each
/// agent's own replicates at every comparison, they missed the cache), tied rates sharing
/// the better rank; the replicates are shared out among up to `threads` threads.
fn rank_ranges(success: &[Vec<f64>], replicates: usize, threads: usize) -> Vec<Option<RankRange>> {
    let agents = success.len();
    // A rate's place in the order: rates are never negative, so their bits rise with
    // them; a replicate with no rate (no task drawn) is below every rate.
    let key = |r: f64| if r.is_nan() { 0 } else { r.to_bits() + 1 };
    let rank_replicates = |replicates: std::ops::Range<usize>| {
        let mut ranks = vec![0u32; replicates.len() * agents];
        let mut order: Vec<(u64, u32)> = Vec::with_capacity(agents);
        for (b, ranks) in replicates.zip(ranks.chunks_exact_mut(agents.max(1))) {
            order.clear();
            order.extend(success.iter().zip(0u32..).map(|(s, a)| (key(s[b]), a)));
            order.sort_unstable_by_key(|x| std::cmp::Reverse(x.0));
            let mut rank = 1;
            for (i, &(k, a)) in order.iter().enumerate() {
                if i > 0 && k < order[i - 1].0 {
                    rank = i as u32 + 1;
                }
                ranks[a as usize] = rank;
            }
        }
        ranks
    };
    let threads = threads.min(agents * replicates / (AT_LEAST * REPLICATES)).max(1);
    let share = replicates.div_ceil(threads).max(1);
    // [replicate][agent], in parts of consecutive replicates.
    let parts: Vec<Vec<u32>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..replicates)
            .step_by(share)
            .map(|start| {
                let rank_replicates = &rank_replicates;
                scope.spawn(move || rank_replicates(start..(start + share).min(replicates)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    let mut ranks = Vec::with_capacity(replicates);
    (0..agents)
        .map(|a| {
            ranks.clear();
            ranks.extend(
                parts.iter().flat_map(|part| part.iter().skip(a).step_by(agents).map(|r| f64::from(*r))),
            );
            let (low, high) = percentiles(&ranks)?;
            Some(RankRange { best: low as usize, worst: high as usize })
        })
        .collect()
}

/// Agents per thread, below which more threads cost more than they save.
const AT_LEAST: usize = 256;

/// `f` of each agent, in order, on up to `threads` threads where there are many agents: an agent's intervals and reliability depend on its own cells, the shared
/// replicates and the seed alone, so they are the same whichever thread makes them.
fn each_agent<R: Send>(
    agents: &[AgentCells],
    threads: usize,
    f: impl Fn(usize, &AgentCells) -> R + Sync,
) -> Vec<R> {
    let threads = threads.min(agents.len() / AT_LEAST).max(1);
    if threads == 1 {
        return agents.iter().enumerate().map(|(a, agent)| f(a, agent)).collect();
    }
    let share = agents.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let parts: Vec<_> = agents
            .chunks(share)
            .enumerate()
            .map(|(i, part)| {
                let f = &f;
                scope.spawn(move || {
                    part.iter().enumerate().map(|(j, agent)| f(i * share + j, agent)).collect::<Vec<R>>()
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|part| part.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    })
}

/// The paired comparison of `a` and `b` over the tasks both ran: B − A, by hint condition.
pub fn compare(a: &AgentCells, b: &AgentCells, replicates: usize, seed: u64) -> Comparison {
    let tasks = a.cells.len().min(b.cells.len());
    // Only tasks both ran under a condition enter that condition's comparison.
    let keep = |x: &AgentCells, y: &AgentCells| AgentCells {
        id: x.id.clone(),
        cells: (0..tasks)
            .map(|t| {
                let mut c = x.cells[t];
                for (h, cell) in c.iter_mut().enumerate() {
                    if y.cells[t][h].is_none_or(|o| o.counted == 0) {
                        *cell = None;
                    }
                }
                c
            })
            .collect(),
    };
    let (a2, b2) = (keep(a, b), keep(b, a));
    let shared_tasks =
        (0..tasks).filter(|t| a2.cells[*t].iter().any(|c| c.is_some_and(|c| c.counted > 0))).count();
    if shared_tasks == 0 {
        return Comparison { difference: IntervalsByHint::default(), shared_tasks };
    }
    let prepared = prepare(&[&a2, &b2]);
    let drawn = draw_tasks(tasks, replicates, seed);
    let diff = |h: usize| {
        let est = Some(pooled(&b2.cells, h)? - pooled(&a2.cells, h)?);
        let rates = |i: usize, x: &AgentCells| {
            replicate(&x.id, &prepared.cells[i], h, Measure::Success, &prepared.draws, &drawn, seed, None)
        };
        interval(est, &difference(&rates(0, &a2), &rates(1, &b2)))
    };
    Comparison { difference: IntervalsByHint::from_fn(diff), shared_tasks }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(id: &str, cells: &[[(u32, u32); 3]]) -> AgentCells {
        AgentCells {
            id: id.into(),
            cells: cells
                .iter()
                .map(|c| {
                    c.map(|(k, n)| {
                        Some(Cell { successes: k, executed: k, counted: n, exec_counted: n, short: false })
                    })
                })
                .collect(),
        }
    }

    #[test]
    fn many_agents_analysed_on_several_threads_get_what_one_thread_gives() {
        // 600 agents of 4 tasks, their successes spread by a fixed rule; ties in every
        // replicate's ranks.
        let agents: Vec<AgentCells> = (0..600u32)
            .map(|i| {
                let cells: Vec<[(u32, u32); 3]> = (0..4u32)
                    .map(|t| [((i * 7 + t) % 6, 5), ((i + t) % 6, 5), ((i * 3 + t) % 6, 5)])
                    .collect();
                agent(&format!("a{i}"), &cells)
            })
            .collect();
        let one = analyse_on(&agents, 4, 200, SEED, 1, &|_| None);
        assert_eq!(analyse_on(&agents, 4, 200, SEED, 2, &|_| None), one);
        assert_eq!(analyse_on(&agents, 4, 200, SEED, 3, &|_| None), one);
        assert!(one.iter().any(|s| s.rank.is_some_and(|r| r.best != r.worst)), "ranks vary by replicate");
    }

    /// An agent's own numbers come from its cells and id alone: another agent coming
    /// leaves them as they were, so an analysis after a change that keeps them
    /// ([`analyse_set_after`]) gives what a fresh one gives, ranks and groups included.
    #[test]
    fn own_numbers_kept_after_a_change_are_what_a_fresh_analysis_gives() {
        let mut agents: Vec<AgentCells> = (0..6u32)
            .map(|i| {
                let cells: Vec<[(u32, u32); 3]> = (0..4u32)
                    .map(|t| [((i + t) % 6, 5), ((i * 2 + t) % 6, 5), ((i * 5 + t) % 6, 5)])
                    .collect();
                agent(&format!("a{i}"), &cells)
            })
            .collect();
        agents[5].cells[3] = [None; 3];
        let first = analyse_set(&agents, 300, SEED);
        let mut more = agents.clone();
        more.insert(2, agent("newcomer", &[[(5, 5), (4, 5), (3, 5)]; 4]));
        let fresh = analyse_set(&more, 300, SEED);
        let find = |all: &[AgentStats], id: &str| all.iter().find(|s| s.id == id).cloned().unwrap();
        for before in &first {
            let after = find(&fresh, &before.id);
            let own =
                |s: &AgentStats| (s.final_success, s.execution_success, s.uplift, s.reliability.clone());
            assert_eq!(own(before), own(&after), "{}", before.id);
        }
        assert_ne!(find(&first, "a0").rank, find(&fresh, "a0").rank, "the newcomer moves the ranks");

        let earlier = |x: &AgentCells| first.iter().find(|s| s.id == x.id).cloned();
        assert_eq!(analyse_set_after(&more, 300, SEED, &earlier), fresh);
    }

    #[test]
    fn all_successes_and_all_failures_have_no_uncertainty() {
        let all = agent("all", &[[(5, 5); 3]; 12]);
        let none = agent("none", &[[(0, 5); 3]; 12]);
        let s = analyse(&[all, none], 12, REPLICATES, SEED);
        assert_eq!(s[0].final_success.none, Some(Interval { estimate: 1.0, low: 1.0, high: 1.0 }));
        assert_eq!(s[1].final_success.detailed, Some(Interval { estimate: 0.0, low: 0.0, high: 0.0 }));
        assert_eq!(s[0].uplift.hints, Some(Interval { estimate: 0.0, low: 0.0, high: 0.0 }));
        assert_eq!(
            (s[0].rank.unwrap().to_string(), s[1].rank.unwrap().to_string()),
            ("1".into(), "2".into())
        );
        assert_eq!((s[0].group, s[1].group), (Some(1), Some(2)));
    }

    /// One task, 2 successes in 5 runs: the replicates are Binomial(5, 0.4) / 5. By hand:
    /// P(X ≤ 0) = 0.6^5 = 0.0778 ≥ 0.025, so the 2.5th percentile is 0;
    /// P(X ≤ 3) = 0.9130 < 0.975 ≤ P(X ≤ 4) = 0.9898, so the 97.5th is 4/5 = 0.8.
    #[test]
    fn one_task_gives_the_binomial_percentiles() {
        let s = analyse(&[agent("a", &[[(2, 5); 3]])], 1, REPLICATES, SEED);
        assert_eq!(s[0].final_success.none, Some(Interval { estimate: 0.4, low: 0.0, high: 0.8 }));
    }

    /// Two tasks of 2 runs, one always solved and one never: resampling the tasks gives
    /// {solved, solved} (1/4) → 1, {never, never} (1/4) → 0, one of each (1/2) → 0.5;
    /// the runs add no noise (p = 1 and p = 0). So the interval is [0, 1] around 0.5,
    /// computed by hand; a bootstrap over runs alone would say [0.5, 0.5].
    #[test]
    fn resampling_tasks_widens_the_interval() {
        let s = analyse(&[agent("a", &[[(2, 2); 3], [(0, 2); 3]])], 2, REPLICATES, SEED);
        assert_eq!(s[0].final_success.none, Some(Interval { estimate: 0.5, low: 0.0, high: 1.0 }));
    }

    #[test]
    fn agents_that_cannot_be_told_apart_share_a_group_and_a_rank_range() {
        // Two agents one success apart out of 60 runs; a third far below.
        let mut a = vec![[(2, 5); 3]; 12];
        a[0] = [(3, 5); 3];
        let b = vec![[(2, 5); 3]; 12];
        let c = vec![[(0, 5); 3]; 12];
        let s = analyse(&[agent("a", &a), agent("b", &b), agent("c", &c)], 12, REPLICATES, SEED);
        assert_eq!((s[0].group, s[1].group, s[2].group), (Some(1), Some(1), Some(2)));
        assert_eq!(s[0].rank, Some(RankRange { best: 1, worst: 2 }));
        assert_eq!(s[1].rank, Some(RankRange { best: 1, worst: 2 }));
        assert_eq!(s[2].rank, Some(RankRange { best: 3, worst: 3 }));
    }

    /// By the formulas: 2 successes in 5 attempts give pass@1 = 0.4, pass@2 = 1 − C(3,2)/C(5,2)
    /// = 0.7, pass^2 = C(2,2)/C(5,2) = 0.1, pass^3 = 0; 5 of 5 give 1 throughout.
    #[test]
    fn pass_at_k_and_pass_all_k_are_the_unbiased_estimators() {
        assert!((pass_at(5, 2, 1) - 0.4).abs() < 1e-12);
        assert!((pass_at(5, 2, 2) - 0.7).abs() < 1e-12);
        assert!((pass_all(5, 2, 2) - 0.1).abs() < 1e-12);
        assert_eq!(pass_all(5, 2, 3), 0.0);
        assert_eq!((pass_at(5, 5, 5), pass_all(5, 5, 5), pass_at(5, 0, 5)), (1.0, 1.0, 0.0));
        let s = analyse(&[agent("a", &[[(2, 5); 3], [(5, 5); 3]])], 2, REPLICATES, SEED);
        let r = s[0].reliability.none.as_ref().unwrap();
        assert_eq!(r.pass_at.len(), 5);
        assert!((r.pass_all[1].estimate - (0.1 + 1.0) / 2.0).abs() < 1e-12);
        assert_eq!(r.every_time().unwrap().estimate, 0.5);
        // Resampling the two tasks: both the always-solved one, neither, or one of each.
        assert_eq!((r.every_time().unwrap().low, r.every_time().unwrap().high), (0.0, 1.0));
    }

    /// Results that miss a task without hints are described over their own tasks and
    /// take no place; the others are ranked among themselves. A cell whose execution is
    /// unknown gives no execution success.
    #[test]
    fn partial_results_are_not_ranked_and_unknown_execution_is_absent() {
        let full = agent("full", &[[(2, 5); 3]; 3]);
        let other = agent("other", &[[(4, 5); 3]; 3]);
        let mut partial = agent("partial", &[[(5, 5); 3]; 3]);
        partial.cells[2] = [None; 3];
        for cell in partial.cells[0].iter_mut().flatten() {
            cell.exec_counted = 0;
            cell.executed = 0;
        }
        let s = analyse_set(&[full, partial, other], REPLICATES, SEED);
        let by = |id: &str| s.iter().find(|x| x.id == id).unwrap();
        assert_eq!((by("full").of, by("other").of), (2, 2));
        assert_eq!(by("other").rank, Some(RankRange { best: 1, worst: 1 }));
        assert_eq!((by("partial").rank, by("partial").group, by("partial").of), (None, None, 0));
        assert_eq!(by("partial").final_success.none.unwrap().estimate, 1.0);
        // Its execution is known on one task of the two it ran: 5 of 5 there.
        assert_eq!(by("partial").execution_success.none.unwrap().estimate, 1.0);
        let unknown = agent("unknown", &[[(1, 5); 3]]);
        let mut unknown = unknown;
        unknown.cells[0][0] =
            Some(Cell { successes: 1, executed: 0, counted: 5, exec_counted: 0, short: false });
        let s = analyse(&[unknown], 1, REPLICATES, SEED);
        assert_eq!(s[0].execution_success.none, None);
        assert!(s[0].final_success.none.is_some());
    }

    #[test]
    fn the_same_data_give_the_same_numbers() {
        let cells: Vec<[(u32, u32); 3]> =
            (0..12).map(|t| [(t % 6, 5), ((t + 2) % 6, 5), ((t + 1) % 6, 5)]).collect();
        let x = analyse(&[agent("a", &cells)], 12, REPLICATES, SEED);
        let y = analyse(&[agent("a", &cells)], 12, REPLICATES, SEED);
        assert_eq!(x, y);
    }

    /// Issue 75, attack 5: hints run on 3 of 12 tasks, all successes, beside no hints at
    /// 40% on all 12. The change is over the 3 tasks both cover (where no hints also
    /// succeeded 2 of 5), not hints-on-3 minus none-on-12.
    #[test]
    fn the_uplift_is_over_the_tasks_both_conditions_cover() {
        let mut a = agent("a", &[[(2, 5), (5, 5), (2, 5)]; 12]);
        for c in &mut a.cells[3..] {
            c[1] = None;
        }
        let s = analyse(std::slice::from_ref(&a), 12, REPLICATES, SEED);
        let up = s[0].uplift.hints.unwrap();
        assert!((up.estimate - 0.6).abs() < 1e-12, "{up:?}");
        // A short cell is not paired either.
        a.cells[0][1] = Some(Cell { successes: 4, executed: 4, counted: 4, exec_counted: 4, short: true });
        let s = analyse(std::slice::from_ref(&a), 12, REPLICATES, SEED);
        assert!((s[0].uplift.hints.unwrap().estimate - 0.6).abs() < 1e-12);
        let detailed = s[0].uplift.detailed.unwrap();
        assert!(detailed.estimate.abs() < 1e-12 && !detailed.excludes_zero(), "{detailed:?}");
    }

    #[test]
    fn hints_uplift_and_comparisons_are_paired() {
        // No hints: 1 of 5 on every task; hints: 4 of 5 on every task.
        let a = agent("a", &[[(1, 5), (4, 5), (1, 5)]; 12]);
        let s = analyse(std::slice::from_ref(&a), 12, REPLICATES, SEED);
        let up = s[0].uplift.hints.unwrap();
        assert!((up.estimate - 0.6).abs() < 1e-12);
        assert!(up.low > 0.0 && up.excludes_zero(), "{up:?}");
        let detailed = s[0].uplift.detailed.unwrap();
        assert!(!detailed.excludes_zero(), "{detailed:?}");

        let b = agent("b", &[[(1, 5), (1, 5), (1, 5)]; 12]);
        let c = compare(&a, &b, REPLICATES, SEED);
        assert_eq!(c.shared_tasks, 12);
        assert_eq!(c.difference.none.unwrap().estimate, 0.0);
        assert!(c.difference.hints.unwrap().high < 0.0, "B does worse with hints: {:?}", c.difference.hints);
    }
}
