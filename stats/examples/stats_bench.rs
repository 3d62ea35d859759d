//! Benchmark: the bootstrap for 1,000 agents × 12 tasks × 3 hint conditions × 5 runs,
//! then again after one agent's results changed (the others' own numbers kept from the
//! first). Run it with `bash perf/stats.sh` (one core, release build). Goal: under 2 s.

use std::time::Instant;

use std::collections::HashMap;

use stats::{self, AgentCells, AgentStats, Cell};

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

    // One more agent, as after a submission: every other agent's own numbers are kept.
    let mut changed = data.clone();
    let mut newcomer = data[agents / 2].clone();
    newcomer.id = "newcomer".into();
    newcomer.cells[0][0] = newcomer.cells[0][0].map(|c| Cell { successes: 5 - c.successes, ..c });
    changed.push(newcomer);
    let before: HashMap<&str, (&AgentCells, &AgentStats)> =
        data.iter().zip(&result).map(|(cells, stats)| (cells.id.as_str(), (cells, stats))).collect();
    let earlier = |agent: &AgentCells| {
        let (cells, stats) = before.get(agent.id.as_str())?;
        (cells.cells == agent.cells).then(|| (*stats).clone())
    };
    let started = Instant::now();
    let after = stats::analyse_set_after(&changed, stats::REPLICATES, stats::SEED, &earlier);
    let elapsed = started.elapsed();
    assert_eq!(after.len(), agents + 1);
    println!("  after one more agent, the others' own numbers kept: {:.3} s", elapsed.as_secs_f64());
}
