//! Benchmark: the bootstrap for 1,000 agents × 12 tasks × 3 hint conditions × 5 runs.
//! Run it with `bash perf/stats.sh` (one core, release build). Goal: under 2 s.

use std::time::Instant;

use store::stats::{self, AgentCells, Cell};

fn main() {
    let agents: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let tasks = 12;
    // Deterministic, varied counts: the agent's skill, the task's difficulty and the
    // hints' help, 0–5 successes of 5.
    let data: Vec<AgentCells> = (0..agents)
        .map(|a| AgentCells {
            id: format!("agent-{a}"),
            cells: (0..tasks)
                .map(|t| {
                    [0u32, 1, 2].map(|h| {
                        let k = ((a * 6 / agents) as i64 + (t % 4) as i64 - 2 + h as i64).clamp(0, 5) as u32;
                        Some(Cell {
                            successes: k.min(5),
                            executed: (k + 1).min(5),
                            counted: 5,
                            exec_counted: 5,
                            short: false,
                        })
                    })
                })
                .collect(),
        })
        .collect();
    let started = Instant::now();
    let result = stats::analyse(&data, tasks, stats::REPLICATES, stats::SEED);
    let elapsed = started.elapsed();
    let groups = result.iter().filter_map(|s| s.group).max().unwrap_or(0);
    println!(
        "{agents} agents x {tasks} tasks x 3 conditions x 5 runs, {} replicates: {:.3} s ({groups} groups)",
        stats::REPLICATES,
        elapsed.as_secs_f64()
    );
}
