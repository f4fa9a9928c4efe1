//! The machine a run measured on, for the report header: figures mean little without it.

/// CPU model (from `/proc/cpuinfo`) and the number of CPUs this process may use.
pub fn describe() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, model)| model.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{model}, {cpus} logical CPUs")
}

/// A load average for a report, or `n/a` where the system reports none.
pub fn load_text(load: &Option<String>) -> &str {
    load.as_deref().unwrap_or("n/a")
}

/// The load averages at the start and at the end of a run, as the reports print them.
pub type Loads = (Option<String>, Option<String>);

/// A report's first line, without its full stop: the machine and its load at the start and the
/// end of the run.
pub fn context(machine: &str, (start, end): &Loads) -> String {
    format!(
        "Machine: {machine}. Load average (1, 5, 15 min) at the start: {}; at the end: {}",
        load_text(start),
        load_text(end)
    )
}

/// The 1-, 5- and 15-minute load averages (from `/proc/loadavg`), if the system reports them: a
/// load near or above the CPU count means other processes competed for the CPUs during the run.
pub fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let fields: Vec<&str> = text.split_whitespace().take(3).collect();
    (fields.len() == 3).then(|| fields.join(" "))
}
