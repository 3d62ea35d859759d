//! What a reproduction's runs had (spec §4d `reproduction.hardware`): this machine's
//! CPUs, memory and GPUs, or what each Slurm job asked for.

use std::fs;

use bundle::Hardware;

use crate::evaluate;

/// How the runs were executed, and on what: this machine's CPUs, memory and GPUs, or
/// what each Slurm job asked for.
pub fn of(opts: &evaluate::Options) -> (String, Hardware) {
    let cpu = cpu_model().unwrap_or_else(|| "unknown CPU".to_owned());
    if let Some(slurm) = &opts.slurm {
        let cpus = slurm.cpus_per_run.unwrap_or(1).max(1);
        let memory_bytes = slurm.mem.as_deref().and_then(slurm_memory).unwrap_or(0);
        let gpus =
            slurm.gpus.as_deref().and_then(gpu_count).or_else(|| slurm.gres.as_deref().and_then(gres_gpus));
        let gpus = gpus.unwrap_or(0);
        let mut description = format!("Slurm job: {cpus} CPUs");
        if let Some(mem) = &slurm.mem {
            description.push_str(&format!(", {mem}"));
        }
        if gpus > 0 {
            description.push_str(&format!(", {gpus} GPU{}", if gpus == 1 { "" } else { "s" }));
        }
        if let Some(p) = &slurm.partition {
            description.push_str(&format!(" (partition {p})"));
        }
        let hardware = Hardware { cpus, memory_bytes, gpus, gpu_model: None, description: clip(description) };
        return ("slurm".to_owned(), hardware);
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX));
    let memory_bytes = memory_total().unwrap_or(0);
    let gpu_models = nvidia_gpus();
    let gpus = u32::try_from(gpu_models.len()).unwrap_or(u32::MAX);
    let gpu_model = gpu_models.first().cloned();
    let mut description = format!("{cpu}, {cpus} CPUs, {} GiB", memory_bytes >> 30);
    if let Some(model) = &gpu_model {
        description.push_str(&format!(", {gpus} × {model}"));
    }
    let executor = match opts.executor {
        crate::exec::Executor::Local => "local",
        _ => "container",
    };
    (executor.to_owned(), Hardware { cpus, memory_bytes, gpus, gpu_model, description: clip(description) })
}

/// At most the 200 characters the spec allows.
fn clip(s: String) -> String {
    s.chars().take(200).collect()
}

fn cpu_model() -> Option<String> {
    let text = fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find_map(|l| {
            l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim().to_owned())
        })
        .filter(|m| !m.is_empty())
}

fn memory_total() -> Option<u64> {
    let text = fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// The NVIDIA GPUs the driver lists, by model.
fn nvidia_gpus() -> Vec<String> {
    let Ok(entries) = fs::read_dir("/proc/driver/nvidia/gpus") else { return Vec::new() };
    let mut models: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let text = fs::read_to_string(e.path().join("information")).ok()?;
            text.lines().find_map(|l| l.strip_prefix("Model:")).map(|m| m.trim().to_owned())
        })
        .collect();
    models.sort();
    models
}

/// sbatch's `--mem` (`64G`, `500M`, `1T`; megabytes without a unit) in bytes.
fn slurm_memory(mem: &str) -> Option<u64> {
    let mem = mem.trim();
    let (number, unit) = mem.split_at(mem.find(|c: char| !c.is_ascii_digit()).unwrap_or(mem.len()));
    let n: u64 = number.parse().ok()?;
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "M" | "MB" => 20,
        "K" | "KB" => 10,
        "G" | "GB" => 30,
        "T" | "TB" => 40,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

/// sbatch's `--gpus` (`2`, `a100:2`) as a count.
fn gpu_count(gpus: &str) -> Option<u32> {
    gpus.rsplit(':').next()?.trim().parse().ok()
}

/// The GPUs in sbatch's `--gres` (`gpu:a100:2`, `gpu:1`, `gpu`).
fn gres_gpus(gres: &str) -> Option<u32> {
    gres.split(',').find(|g| g.starts_with("gpu")).map(|g| {
        let parts: Vec<&str> = g.split(':').collect();
        parts.last().and_then(|n| n.parse().ok()).filter(|_| parts.len() > 1).unwrap_or(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_requests_read_as_hardware() {
        assert_eq!(slurm_memory("64G"), Some(64 << 30));
        assert_eq!(slurm_memory("500"), Some(500 << 20));
        assert_eq!(slurm_memory("lots"), None);
        assert_eq!(gpu_count("a100:2"), Some(2));
        assert_eq!(gpu_count("1"), Some(1));
        assert_eq!(gres_gpus("gpu:a100:4"), Some(4));
        assert_eq!(gres_gpus("gpu"), Some(1));
        assert_eq!(gres_gpus("shard:2"), None);
    }
}
