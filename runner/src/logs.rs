//! A run's logs (its standard output and error), cut while they are written at the
//! card's `[evaluation.limits] log_mib`: a last line says how much was cut, and nothing
//! downstream (`pack`, `reproduce`, the server) refuses a log for its size.

use std::fs::File;
use std::io::{self, Read, Write};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Copies what the run writes to `from` into `to`, up to `limit` bytes; the rest is
/// read and counted, and a last line says how much was cut.
pub fn keep(mut from: impl Read + Send + 'static, mut to: File, limit: u64) -> JoinHandle<io::Result<u64>> {
    std::thread::spawn(move || {
        let (mut kept, mut cut) = (0u64, 0u64);
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let room = limit.saturating_sub(kept).min(n as u64) as usize;
            to.write_all(&buf[..room])?;
            kept += room as u64;
            cut += (n - room) as u64;
        }
        if cut > 0 {
            writeln!(
                to,
                "\n[rexbench: {cut} more bytes were cut here: the task's log limit is {limit} bytes ([evaluation.limits] log_mib)]"
            )?;
        }
        Ok(cut)
    })
}

/// Waits for the copies to reach the logs' end (every writer is gone by now), for
/// at most 5 s: a copy still waiting then keeps what it has.
pub fn finish(copies: Vec<JoinHandle<io::Result<u64>>>) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while copies.iter().any(|c| !c.is_finished()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    for copy in copies.into_iter().filter(JoinHandle::is_finished) {
        let _ = copy.join();
    }
}
