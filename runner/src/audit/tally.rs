//! The signed manifest's runs tallied as spec §4 defines the rates, and what differs
//! between a tally and the rates the server shows; pass@k and pass^k from the counts.
//! Recomputed here from the definitions, not with the server's code, so that a fault
//! in either shows as a difference.

use super::api::Rates;

/// The manifest's runs tallied as spec §4 defines the rates: infrastructure failures
/// count as runs but towards no rate; file recall is the mean over counted runs that
/// report one.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Tally {
    pub(super) runs: i64,
    pub(super) counted: i64,
    /// The runs execution success is over: the counted ones, in either view (the strict
    /// view counts every run for final success only).
    pub(super) exec_counted: i64,
    pub(super) successes: i64,
    pub(super) executed: i64,
    pub(super) recall_sum: f64,
    pub(super) recall_runs: i64,
    pub(super) cost_sum: f64,
    pub(super) cost_runs: i64,
    pub(super) cost_checked: i64,
    pub(super) cost_marked: i64,
    /// A run's cost could not be recomputed (its trajectory, private, disagrees with its
    /// tokens by the server's word): the cost is not compared.
    pub(super) cost_unknown: bool,
    pub(super) duration_sum: f64,
    pub(super) duration_runs: i64,
}

impl Tally {
    /// Adds `run`, whose cost as the board counts it is `cost` (spec §4m; none where it
    /// cannot be recomputed).
    pub(super) fn add(&mut self, run: &bundle::Run, cost: Option<&benchmark::cost::Checked>) {
        self.runs += 1;
        // What a run cost and took counts whatever its outcome.
        match cost {
            Some(c) => {
                if let Some(counted) = c.counted {
                    self.cost_sum += counted;
                    self.cost_runs += 1;
                    self.cost_checked += i64::from(c.checked);
                }
                self.cost_marked += i64::from(c.mark.is_some());
            }
            None => self.cost_unknown = true,
        }
        if let Some(d) = run.duration_s {
            self.duration_sum += d;
            self.duration_runs += 1;
        }
        if let (Some(succeeded), Some(executed)) = (run.outcome.succeeded(), run.outcome.executed()) {
            self.counted += 1;
            self.exec_counted += 1;
            self.successes += i64::from(succeeded);
            self.executed += i64::from(executed);
            if let Some(r) = run.file_recall {
                self.recall_sum += r;
                self.recall_runs += 1;
            }
        }
    }

    /// What differs between the served rates and this tally, in words.
    pub(super) fn differences(&self, served: &Rates) -> Vec<String> {
        let ratio = |n: i64, d: i64| (d > 0).then(|| n as f64 / d as f64);
        let recall = (self.recall_runs > 0).then(|| self.recall_sum / self.recall_runs as f64);
        let mut out = Vec::new();
        let mut count = |name: &str, served: i64, signed: i64| {
            if served != signed {
                out.push(format!("{name} {served}, the signed manifest gives {signed}"));
            }
        };
        count("runs", served.runs, self.runs);
        count("counted runs", served.counted, self.counted);
        count("successes", served.successes, self.successes);
        // A server that knows the source tells only successes shows no execution.
        let execution_known = served.exec_counted != Some(0) || self.exec_counted == 0;
        if execution_known {
            count("executed", served.executed, self.executed);
        }
        if !self.cost_unknown {
            count("runs with a cost", served.cost_runs, self.cost_runs);
            count("runs with a checked cost", served.cost_checked, self.cost_checked);
            count("runs with a cost mark", served.cost_marked, self.cost_marked);
        }
        count("runs with a duration", served.duration_runs, self.duration_runs);
        let mut rate = |name: &str, served: Option<f64>, signed: Option<f64>, tolerance: f64| {
            let same = match (served, signed) {
                (Some(a), Some(b)) => (a - b).abs() <= tolerance,
                (None, None) => true,
                _ => false,
            };
            if !same {
                out.push(format!("{name} {}, the signed manifest gives {}", words(served), words(signed)));
            }
        };
        // Both sides divide the same whole numbers: equal to the last bit.
        rate("final success", served.final_success, ratio(self.successes, self.counted), 0.0);
        if execution_known {
            rate("execution success", served.execution_success, ratio(self.executed, self.exec_counted), 0.0);
        }
        // A mean of decimals summed in another order may differ in the last bits.
        rate("file recall", served.file_recall, recall, 1e-9);
        let mean = |sum: f64, n: i64| (n > 0).then(|| sum / n as f64);
        if !self.cost_unknown {
            rate("mean cost per run", served.mean_cost_usd, mean(self.cost_sum, self.cost_runs), 1e-9);
        }
        rate("mean duration", served.mean_duration_s, mean(self.duration_sum, self.duration_runs), 1e-6);
        out
    }
}

pub(super) fn words(x: Option<f64>) -> String {
    x.map_or_else(|| "none".to_owned(), |v| format!("{v}"))
}

/// pass@k and pass^k for k = 1…fewest attempts, averaged over the tasks with at least k
/// attempts, from each task's (counted, successes), by the unbiased estimators.
pub(super) fn reliability(cells: &[(i64, i64)]) -> (Vec<f64>, Vec<f64>) {
    // C(a, k) / C(b, k) as a product; zero when k > a.
    let ratio = |a: i64, b: i64, k: i64| -> f64 {
        if k > a { 0.0 } else { (0..k).map(|i| (a - i) as f64 / (b - i) as f64).product() }
    };
    let fewest = cells.iter().map(|(n, _)| *n).min().unwrap_or(0);
    let mean = |f: &dyn Fn(i64, i64, i64) -> f64, k: i64| {
        let values: Vec<f64> = cells.iter().filter(|(n, _)| *n >= k).map(|(n, c)| f(*n, *c, k)).collect();
        values.iter().sum::<f64>() / values.len() as f64
    };
    let at = (1..=fewest).map(|k| mean(&|n, c, k| 1.0 - ratio(n - c, n, k), k)).collect();
    let all = (1..=fewest).map(|k| mean(&|n, c, k| ratio(c, n, k), k)).collect();
    (at, all)
}
